"""What a Plan trains at: its distinct clip shapes, and how many iterations run at each shape and BN layout."""

from __future__ import annotations

from collections import Counter
from typing import Any

from harness.schedule.iterations import cycle_counts
from harness.schedule.plan import Plan

ShapeKey = tuple[int, int, int, int]  # (t, s, per-GPU batch, BN splits)
LayoutKey = tuple[int, int, int, int, int]  # (t, s, per-GPU batch, BN splits, BN sync)


def planned_clip_sizes(plan: Plan) -> list[tuple[int, int]]:
    """Every distinct (frames, pixels) the plan trains at, in order of first use."""
    seen: list[tuple[int, int]] = []
    for phase in plan.phases:
        if phase.epochs == 0:
            continue
        for shape in phase.cycle:
            if (shape.t, shape.s) not in seen:
                seen.append((shape.t, shape.s))
    return seen


def planned_loader_shapes(plan: Plan) -> list[dict[str, Any]]:
    """Each distinct (t, s) the plan trains, with its largest per-GPU batch and sampling ranges, cheapest first."""
    shapes: dict[tuple[int, int], dict[str, Any]] = {}
    for p in plan.phases:
        if p.epochs == 0:
            continue
        for c, b in zip(p.cycle, p.per_gpu_batches):
            key = (c.t, c.s)
            entry = shapes.setdefault(key, {"t": c.t, "s": c.s, "per_gpu_batch": b,
                                            "stride_range": plan.stride_range(c.t),
                                            "jitter_range": plan.jitter_range(c.s)})
            entry["per_gpu_batch"] = max(entry["per_gpu_batch"], b)
    return sorted(shapes.values(), key=lambda e: (e["t"] * e["s"] ** 2, e["t"]))


def iterations_by_layout(plan: Plan) -> Counter[LayoutKey]:
    """How many iterations the plan trains at each (t, s, per-GPU batch, BN splits, BN sync)."""
    counts: Counter[LayoutKey] = Counter()
    for phase in plan.phases:
        per_cycle = cycle_counts(plan.samples_per_rank, phase.per_gpu_batches)
        for shape, batch, n in zip(phase.cycle, phase.per_gpu_batches, per_cycle):
            counts[(shape.t, shape.s, batch, phase.bn_splits, phase.bn_sync)] += n * phase.epochs
    return counts


def iterations_by_shape(plan: Plan) -> Counter[ShapeKey]:
    """How many iterations the plan trains at each (t, s, per-GPU batch, BN splits): one GPU's view."""
    counts: Counter[ShapeKey] = Counter()
    for (t, s, batch, splits, _sync), n in iterations_by_layout(plan).items():
        counts[(t, s, batch, splits)] += n
    return counts
