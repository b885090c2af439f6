"""Training cost accounting (harness.schedule.accounting): the default plan's forward cost against its baseline's."""

import pytest

from harness.schedule import build_plan, proportional_clip_cost, training_cost
from harness.schedule.plan import baseline_spec

from .helpers import spec


def test_forward_cost_ratio_of_default_plan():
    plan = build_plan(spec())
    base = build_plan(baseline_spec(plan.spec))
    mg_cost = training_cost(plan, proportional_clip_cost(plan), "clips")
    base_cost = training_cost(base, proportional_clip_cost(base), "clips")
    assert base_cost.total_forward == pytest.approx(base.iterations * 64)  # one unit per baseline clip
    assert base_cost.total_forward / mg_cost.total_forward == pytest.approx(3.4, abs=0.1)
    assert mg_cost.total_clips / base_cost.total_clips == pytest.approx(1.5, abs=0.01)  # 1.5× epochs
