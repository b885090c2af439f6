"""The iterations a plan trains at each shape (harness.schedule.trained.iterations_by_shape)."""

import itertools

from harness.schedule import build_plan
from harness.schedule.trained import iterations_by_shape

from .helpers import TINY, spec


def test_iterations_by_shape_covers_the_plan():
    plan = build_plan(spec(**TINY))
    counts = iterations_by_shape(plan)
    assert sum(counts.values()) == plan.iterations
    shapes = {(t, s) for t, s, _, _ in counts}
    assert shapes == {(c.t, c.s) for p in plan.phases if p.epochs for c in p.cycle}
    assert all(b >= 1 for _, _, b, _ in itertools.islice(counts, 100))
