"""The progressive-resizing baseline: the crop grows once over training at a fixed batch (harness.schedule)."""

from __future__ import annotations

import pytest

from harness.config import compose
from harness.schedule import build_plan
from harness.schedule.plan import progressive_sizes
from harness.spec import SpecError

BASELINE = ["multigrid.long_cycle=false", "multigrid.short_cycle=false"]


def _plan(*overrides: str):
    return build_plan(compose([*BASELINE, *overrides]))


def test_the_crop_grows_in_equal_steps_then_trains_at_the_full_crop():
    plan = _plan("baseline.progressive_scale=0.5")
    baseline = _plan()
    assert plan.kind == "progressive"
    crops = [p.base.s for p in plan.phases]
    assert crops == sorted(crops) and crops[0] == 112 and crops[-1] == 224
    assert {p.per_gpu_batches for p in plan.phases} == {(8,)}  # the batch is fixed
    # the last fifth of the epochs at the full crop, as Composer's default fine-tuning fraction
    full_from = min(p.start_epoch for p in plan.phases if p.base.s == 224)
    assert full_from == round(239 * 0.8)
    assert plan.iterations == baseline.iterations and plan.max_epoch == baseline.max_epoch
    # the LR of every epoch is the baseline's: phases split where the crop grows, not where the LR changes
    for epoch in (0, 100, 160, 200, 238):
        mine = next(p for p in plan.phases if p.start_epoch <= epoch < p.end_epoch)
        theirs = next(p for p in baseline.phases if p.start_epoch <= epoch < p.end_epoch)
        assert mine.lr_multiplier == theirs.lr_multiplier and mine.stage == theirs.stage


def test_sizes_and_refusals():
    spec = compose([*BASELINE, "baseline.progressive_scale=0.25", "baseline.progressive_stages=3",
                    "baseline.progressive_full_fraction=0.5"])
    assert progressive_sizes(spec, 100) == [(0, 56), (17, 112), (33, 168), (50, 224)]
    with pytest.raises(SpecError, match="multigrid is on"):
        compose(["baseline.progressive_scale=0.5"])
    with pytest.raises(SpecError, match="progressive_scale"):
        compose([*BASELINE, "baseline.progressive_scale=1.5"])
    with pytest.raises(SpecError, match="shape_factor"):
        compose([*BASELINE, "baseline.progressive_scale=0.5", "baseline.shape_factor=[0.5,0.5]"])
