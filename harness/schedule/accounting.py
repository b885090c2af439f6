"""What a Plan costs: iterations, clips and training FLOPs per phase and in total."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from harness.schedule.iterations import cycle_counts
from harness.schedule.plan import Plan

ClipCost = Callable[[int, int], float]  # (frames, pixels) -> forward cost of one clip


@dataclass(frozen=True)
class Cost:
    """Clips processed and forward cost, per phase and in total, in `unit`."""

    unit: str
    clips: tuple[int, ...]
    forward: tuple[float, ...]

    @property
    def total_clips(self) -> int:
        return sum(self.clips)

    @property
    def total_forward(self) -> float:
        return sum(self.forward)


def proportional_clip_cost(plan: Plan) -> ClipCost:
    """Cost ∝ t·s², in units of one baseline clip (T0×S0²): the estimate used until models are counted."""
    t0, s0 = plan.spec.data.num_frames, plan.spec.data.crop_size
    return lambda t, s: t * s * s / (t0 * s0 * s0)


def training_cost(plan: Plan, clip_cost: ClipCost, unit: str) -> Cost:
    """Clips and forward cost of every phase (all GPUs together)."""
    clips, forward = [], []
    for p in plan.phases:
        counts = cycle_counts(plan.samples_per_rank, p.per_gpu_batches)
        per_epoch = [n * b * plan.spec.num_gpus for n, b in zip(counts, p.per_gpu_batches)]
        clips.append(p.epochs * sum(per_epoch))
        forward.append(p.epochs * sum(c * clip_cost(shape.t, shape.s) for c, shape in zip(per_epoch, p.cycle)))
    return Cost(unit, tuple(clips), tuple(forward))
