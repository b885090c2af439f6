"""The multigrid schedule equals the reference implementation's, to the epoch (PySlowFast's multigrid.py)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.schedule import PlanError, build_plan
from harness.spec import SQRT_HALF

from .helpers import spec
from .reference_oracle import reference_schedule

DEFAULT_LONG = [(0.25, SQRT_HALF), (0.5, SQRT_HALF), (0.5, 1.0), (1.0, 1.0)]
DEFAULT_SHORT = (0.5, SQRT_HALF)

# The three published multigrid configurations of the reference: (steps, max_epoch, T0, global batch).
PUBLISHED = {
    "kinetics_slowfast_8x8": ([0, 94, 154, 196], 239, 32, 64),
    "ssv2_slowfast_16x8": ([0, 14, 18], 22, 64, 16),
    "charades_slowfast_16x8": ([0, 41, 49], 57, 64, 16),
}


def test_kinetics_worked_example():
    plan = build_plan(spec())
    assert plan.lr_steps == [0, 73, 110, 142, 158, 205, 228, 248, 259, 291, 308, 322, 329, 343]
    assert plan.max_epoch == 358
    assert plan.lr_multipliers == pytest.approx(
        [8, 4, 2, 1, 0.8, 0.4, 0.2, 0.1, 0.08, 0.04, 0.02, 0.01, 0.01, 0.001])
    bases = [(p.base.batch_mult, p.base.t, p.base.s) for p in plan.phases[:4]]
    assert bases == [(8, 8, 158), (4, 16, 158), (2, 16, 224), (1, 32, 224)]
    # The paper's "1.5× epochs, 3.4× fewer iterations".
    assert plan.iteration_ratio == pytest.approx(3.4, abs=0.05)


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_published_configs_match_reference(name):
    steps, max_epoch, t0, batch = PUBLISHED[name]
    plan = build_plan(spec(**{"solver.steps": steps, "solver.max_epoch": max_epoch, "data.num_frames": t0,
                              "solver.batch_size": batch, "solver.warmup_epochs": 0.0}))
    ref = reference_schedule(steps, max_epoch, t0, 224, DEFAULT_LONG, DEFAULT_SHORT, 1.5)
    assert plan.lr_steps == ref["lr_steps"]
    assert plan.max_epoch == ref["max_epoch"]
    assert plan.lr_multipliers == ref["lr_multipliers"]
    assert [(p.base.batch_mult, p.base.t, p.base.s) for p in plan.phases[:-1]] == ref["base_shapes"]


def test_ssv2_keeps_zero_length_phases():
    plan = build_plan(spec(**{"solver.steps": [0, 14, 18], "solver.max_epoch": 22, "data.num_frames": 64,
                              "solver.batch_size": 16, "solver.warmup_epochs": 0.19}))
    empty = [p for p in plan.phases if p.epochs == 0]
    assert empty, "the reference's SSv2 schedule has zero-epoch phases"
    assert all(p.iterations == 0 for p in empty)


recipes = st.fixed_dictionaries({
    "stage_lengths": st.lists(st.integers(1, 120), min_size=1, max_size=4),
    "tail": st.integers(1, 80),
    "t0": st.sampled_from([8, 16, 32, 64]),
    "s0": st.sampled_from([112, 160, 224, 256, 320]),
    "epoch_factor": st.sampled_from([0.25, 0.5, 1.0, 1.5, 2.0, 3.0]),
    "short": st.booleans(),
})


def _steps(r):
    steps = [0]
    for n in r["stage_lengths"]:
        steps.append(steps[-1] + n)
    return steps


@settings(max_examples=300, deadline=None)
@given(recipes)
def test_random_recipes_match_reference(r):
    steps = _steps(r)
    max_epoch = steps[-1] + r["tail"]
    s = spec(**{"solver.steps": steps, "solver.max_epoch": max_epoch, "data.num_frames": r["t0"],
                "data.crop_size": r["s0"], "multigrid.epoch_factor": r["epoch_factor"],
                "multigrid.short_cycle": r["short"], "solver.warmup_epochs": 0.0, "data.train_videos": 10**6})
    ref = reference_schedule(steps, max_epoch, r["t0"], r["s0"], DEFAULT_LONG, DEFAULT_SHORT, r["epoch_factor"],
                             short_cycle=r["short"])
    if ref["max_epoch"] == 0:  # the reference would train nothing; we refuse before starting
        with pytest.raises(PlanError, match="epoch_factor"):
            build_plan(s)
        return
    plan = build_plan(s)
    assert plan.lr_steps == ref["lr_steps"]
    assert plan.max_epoch == ref["max_epoch"]
    assert plan.lr_multipliers == ref["lr_multipliers"]


def test_long_cycle_only_works_where_reference_crashes():
    plan = build_plan(spec(**{"multigrid.short_cycle": False}))
    assert plan.kind == "long_cycle"
    assert all(not p.short_cycle for p in plan.phases)
    fine = plan.phases[-1]
    assert (fine.base.batch_mult, fine.base.t, fine.base.s) == (1, 32, 224)
    assert plan.phases[-1].fine_tune and plan.phases[-2].fine_tune


def test_one_gpu_plans():
    plan = build_plan(spec(**{"num_gpus": 1, "solver.batch_size": 8}))
    assert plan.lr_steps == build_plan(spec()).lr_steps
    assert plan.phases[0].per_gpu_batches == (128, 64, 64)


def test_short_cycle_only_scales_stages_with_int():
    plan = build_plan(spec(**{"multigrid.long_cycle": False}))
    assert plan.kind == "short_cycle"
    assert plan.lr_steps == [int(s * 1.5) for s in (0, 94, 154, 196)]
    assert plan.max_epoch == int(239 * 1.5)
    assert plan.lr_multipliers == pytest.approx([1, 0.1, 0.01, 0.001])
    assert all(p.short_cycle for p in plan.phases)


def test_long_cycle_needs_two_stages():
    with pytest.raises(PlanError, match=r"solver\.steps"):
        build_plan(spec(**{"solver.steps": [0], "solver.max_epoch": 10, "solver.warmup_epochs": 1.0}))
