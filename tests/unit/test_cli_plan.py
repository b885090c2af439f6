"""`harness plan` as a user runs it (the installed console script): JSON, the table, --keys, --fvcore and bad input."""

import json
import sys

import pytest

from .helpers import run


def test_plan_json_of_issue_example():
    out = run("harness", "plan", "--json", "solver.steps=[0,94,154,196]", "solver.max_epoch=239",
              "data.num_frames=32", "data.crop_size=224", "solver.batch_size=64", "multigrid.epoch_factor=1.5")
    assert out.returncode == 0, out.stderr
    plan = json.loads(out.stdout)
    assert plan["lr_steps"] == [0, 73, 110, 142, 158, 205, 228, 248, 259, 291, 308, 322, 329, 343]
    assert plan["max_epoch"] == 358
    assert len(plan["lr_multipliers"]) == len(plan["lr_steps"]) == len(plan["phases"])
    for key in ("start_epoch", "end_epoch", "stage", "batch_mult", "t", "s", "short_cycle"):
        assert key in plan["phases"][0]
    assert plan["phases"][0]["short_cycle"][0] == {
        "batch_mult": 2, "t": 8, "s": 112, "per_gpu_batch": 128, "stride_range": [2, 8], "jitter_range": [128, 340]}
    assert plan["iterations"] * plan["iteration_ratio"] == pytest.approx(plan["baseline_iterations"])
    assert 3.3 < plan["iteration_ratio"] < 3.5


def test_plan_table_and_baseline_via_module():
    out = run(sys.executable, "-m", "harness", "plan", "multigrid.long_cycle=false", "multigrid.short_cycle=false")
    assert out.returncode == 0, out.stderr
    assert "(baseline)" in out.stdout and "1.00× fewer" in out.stdout
    table = run("harness", "plan").stdout
    assert "(fine-tune)" in table and "split 8" in table and "3.43× fewer" in table


@pytest.mark.parametrize(("override", "message"), [
    ("solver.stepz=[0,1]", "Did you mean 'solver.steps'"),
    ("solver.max_epoch=150", "'solver.max_epoch' (150) must be greater"),
    ("multigrid.epoch_factor=0", "'multigrid.epoch_factor' must be > 0"),
    ("recipe=k400_i3d", "Did you mean 'k400_i3d_r50'"),
    ("nonsense", "not of the form key=value"),
    ("solver.steps=[0,2", "Override 'solver.steps=[0,2': its value cannot be parsed"),
    ("data.name='kinetics", "Override 'data.name='kinetics': its value cannot be parsed"),
    ("solver.base_lr=${nope}", "'solver.base_lr' could not be resolved: Interpolation key 'nope' not found"),
])
def test_plan_bad_input_exits_2_with_message(override, message):
    out = run("harness", "plan", override)
    assert out.returncode == 2
    assert message in out.stderr
    assert "Traceback" not in out.stderr


def test_plan_keys_lists_every_key():
    out = run("harness", "plan", "--keys")
    assert out.returncode == 0
    assert "multigrid.epoch_factor = 1.5" in out.stdout
    assert "solver.steps = [0, 94, 154, 196]" in out.stdout


def test_plan_with_fvcore_counts():
    out = run("harness", "plan", "--json", "--fvcore", "recipe=k400_i3d_r50_1gpu", "model.width=0.25")
    assert out.returncode == 0, out.stderr
    plan = json.loads(out.stdout)
    assert plan["cost_unit"].startswith("GFLOPs (fvcore")
    # Eq. (1) keeps FLOPs per iteration near constant, so forward FLOPs fall about as iterations do.
    assert plan["forward_cost_ratio"] == pytest.approx(plan["iteration_ratio"], rel=0.1)
