"""The learning rate at every epoch (harness.schedule.lr): step with warm-up, and cosine."""

import math

import pytest

from harness.schedule import build_plan, lr_at

from .helpers import spec


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
