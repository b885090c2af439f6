"""`harness plan` as a user runs it (the installed console script), and recipe composition."""

import errno
import json
import os
import subprocess
import sys

import pytest

from harness.config import compose, recipes
from harness.schedule import build_plan
from harness.spec import SpecError


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=120)


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


@pytest.mark.parametrize("name", recipes())
def test_every_recipe_composes_and_plans(name):
    spec = compose([f"recipe={name}"])
    assert spec.recipe == name
    for variant in ([], ["multigrid.long_cycle=false", "multigrid.short_cycle=false"]):
        plan = build_plan(compose([f"recipe={name}", *variant]))
        assert plan.iterations > 0


def test_recipe_headers_cite_their_source():
    from harness.paths import suites_dir

    for path in sorted((suites_dir() / "recipe").glob("*.yaml")):
        header = path.read_text().splitlines()[:6]
        assert any("Source:" in line for line in header), f"{path.name} must cite its paper table"
        assert any("Hardware" in line for line in header), f"{path.name} must name its hardware"


def test_default_is_kinetics_slowfast_multigrid():
    spec = compose()
    assert spec.recipe == "k400_slowfast_r50_8x8" and spec.is_multigrid
    assert spec.model.name == "slowfast_r50_8x8"
    with pytest.raises(SpecError, match="Unknown config key"):
        compose(["solver.base_lrr=1"])


def test_schedule_does_not_import_torch():
    code = ("import sys, harness.schedule, harness.config, harness.cli; "
            "assert 'torch' not in sys.modules, 'harness.schedule must stay torch-free'")
    out = run(sys.executable, "-c", code)
    assert out.returncode == 0, out.stderr


def test_plan_with_fvcore_counts():
    out = run("harness", "plan", "--json", "--fvcore", "recipe=k400_i3d_r50_1gpu", "model.width=0.25")
    assert out.returncode == 0, out.stderr
    plan = json.loads(out.stdout)
    assert plan["cost_unit"].startswith("GFLOPs (fvcore")
    # Eq. (1) keeps FLOPs per iteration near constant, so forward FLOPs fall about as iterations do.
    assert plan["forward_cost_ratio"] == pytest.approx(plan["iteration_ratio"], rel=0.1)


@pytest.mark.parametrize(("error", "code"), [(errno.ENOSPC, 2), (errno.EROFS, 2), (errno.ENOENT, None)])
def test_a_write_the_disk_refuses_mid_command_is_a_message_not_a_traceback(monkeypatch, capsys, error, code):
    """A disk filling up or a folder turning read-only during a run: the message says what to fix and how to go
    on; other OS errors (bugs, or refused before any work by the commands' own checks) still raise."""
    from harness import cli, cli_train

    def fails(args):
        raise OSError(error, os.strerror(error), "/runs/a/checkpoints/checkpoint_000000008.pt")

    monkeypatch.setattr(cli_train, "cmd_train", fails)  # as if the disk failed while training
    if code is None:
        with pytest.raises(OSError):
            cli.main(["train", "scale=smoke"])
        return
    assert cli.main(["train", "scale=smoke"]) == code
    err = capsys.readouterr().err
    assert err.startswith("harness train: error: could not write /runs/a/checkpoints/checkpoint_000000008.pt: ")
    assert "resume=true" in err and "Traceback" not in err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs Linux's /dev/full, a device that is always full")
def test_a_full_disk_s_message_names_the_file_that_could_not_be_written(monkeypatch, capsys, tmp_path):
    from harness import cli, cli_train
    from harness.io import write_atomic

    def fill(tmp):
        with open("/dev/full", "w") as full:  # the disk's own refusal, which names no file
            full.write("x" * 100_000)

    monkeypatch.setattr(cli_train, "cmd_train", lambda args: write_atomic(tmp_path / "record.json", fill))
    assert cli.main(["train", "scale=smoke"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"harness train: error: could not write {tmp_path / 'record.json'}: No space left on device")
    assert not list(tmp_path.iterdir())  # nor a temporary file left
