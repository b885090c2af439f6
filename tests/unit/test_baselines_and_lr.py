"""Baselines, Baseline 1/k, the smaller-shape baseline, the LR at every epoch, and accounting."""

import math

import pytest

from harness.schedule import build_plan, lr_at, proportional_clip_cost, training_cost
from harness.schedule.plan import baseline_spec

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


def test_bn_layout_follows_long_cycle():
    plan = build_plan(spec())
    assert [p.bn_splits for p in plan.phases[:4]] == [8, 4, 2, 1]
    # SSv2 (2 clips per GPU at the base shape): BN synchronised over 4 GPUs there.
    ssv2 = build_plan(spec(**{"solver.steps": [0, 14, 18], "solver.max_epoch": 22, "data.num_frames": 64,
                              "solver.batch_size": 16, "solver.warmup_epochs": 0.19}))
    assert [(p.bn_splits, p.bn_sync) for p in ssv2.phases[:4]] == [(2, 1), (1, 1), (1, 2), (1, 4)]
    one_gpu = build_plan(spec(**{"num_gpus": 1, "solver.batch_size": 2, "data.train_videos": 10_000}))
    assert one_gpu.phases[-1].bn_sync == 1  # nothing to synchronise with


def test_step_lr_with_warmup():
    plan = build_plan(spec())
    w = plan.warmup_epochs
    assert w == pytest.approx(34 * 358 / 239)
    assert lr_at(plan, 0) == pytest.approx(0.01)
    end = 0.1 * 8  # phase 0 runs at 8× the base LR (linear scaling rule)
    assert lr_at(plan, w / 2) == pytest.approx(0.01 + (end - 0.01) / 2)
    assert lr_at(plan, 100) == pytest.approx(0.1 * 4)
    assert lr_at(plan, 330) == pytest.approx(0.1 * 0.01)
    assert lr_at(plan, 350) == pytest.approx(0.1 * 0.001)
    assert lr_at(plan, 1000) == pytest.approx(0.1 * 0.001)


def test_cosine_keeps_long_cycle_multiplier():
    plan = build_plan(spec(**{"solver.policy": "cosine", "solver.warmup_epochs": 0.0}))
    for epoch in (10.0, 120.0, 250.0, 340.0):
        mult = plan.phase_at_epoch(epoch).base.batch_mult
        assert lr_at(plan, epoch) == pytest.approx(0.1 * mult * 0.5 * (1 + math.cos(math.pi * epoch / 358)))
    assert plan.phase_at_epoch(10.0).base.batch_mult == 8


def test_forward_cost_ratio_of_default_plan():
    plan = build_plan(spec())
    base = build_plan(baseline_spec(plan.spec))
    mg_cost = training_cost(plan, proportional_clip_cost(plan), "clips")
    base_cost = training_cost(base, proportional_clip_cost(base), "clips")
    assert base_cost.total_forward == pytest.approx(base.iterations * 64)  # one unit per baseline clip
    assert base_cost.total_forward / mg_cost.total_forward == pytest.approx(3.4, abs=0.1)
    assert mg_cost.total_clips / base_cost.total_clips == pytest.approx(1.5, abs=0.01)  # 1.5× epochs
