"""The baselines the plan builds: one phase per stage, Baseline 1/k, and the smaller-shape, larger-batch baseline."""

import pytest

from harness.schedule import build_plan

from .helpers import BASELINE, spec


def test_baseline_is_one_phase_per_stage():
    plan = build_plan(spec(**BASELINE))
    assert plan.kind == "baseline"
    assert plan.lr_steps == [0, 94, 154, 196] and plan.max_epoch == 239
    assert plan.lr_multipliers == pytest.approx([1, 0.1, 0.01, 0.001])
    assert all((p.base.batch_mult, p.base.t, p.base.s) == (1, 32, 224) for p in plan.phases)
    assert all(p.per_gpu_batches == (8,) and p.bn_splits == 1 and p.bn_sync == 1 for p in plan.phases)
    assert plan.iteration_ratio == 1.0
    assert plan.iterations == 239 * (240_000 // 8 // 8)


def test_baseline_one_over_k_matches_multigrid_iterations():
    mg = build_plan(spec())
    k = mg.iteration_ratio
    short = build_plan(spec(**BASELINE, **{"baseline.epoch_factor": 1 / k}))
    assert short.max_epoch == int(239 / k)
    assert short.lr_steps == [int(s / k) for s in (0, 94, 154, 196)]
    assert short.iteration_ratio == pytest.approx(k, rel=0.02)


def test_smaller_shape_larger_batch_baseline():
    plan = build_plan(spec(**BASELINE, **{"baseline.shape_factor": [0.5, 2**-0.5]}))
    p = plan.phases[0]
    assert (p.base.batch_mult, p.base.t, p.base.s) == (4, 16, 158)
    assert p.per_gpu_batches == (32,)
    assert plan.lr_multipliers == pytest.approx([4, 0.4, 0.04, 0.004])  # linear scaling rule
    assert plan.max_epoch == 239
    assert plan.iteration_ratio == pytest.approx(4, rel=0.01)
    assert plan.stride_range(16) == (2, 4) and plan.jitter_range(158) == (181, 340)
