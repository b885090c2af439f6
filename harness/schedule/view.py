"""The per-iteration view of a Plan: which phase, epoch, shape, batch and LR iteration i has."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from harness.schedule.lr import lr_at
from harness.schedule.plan import Plan


@dataclass(frozen=True)
class Iteration:
    """What the trainer needs for one global iteration (identical on every rank)."""

    index: int
    phase: int
    epoch: int
    step_in_epoch: int
    cycle_index: int  # which short-cycle entry (i mod len(cycle) within the epoch)
    t: int
    s: int
    per_gpu_batch: int
    bn_splits: int
    bn_sync: int
    lr: float
    stride_range: tuple[int, int]
    jitter_range: tuple[int, int]


def iteration(plan: Plan, i: int) -> Iteration:
    """The shape, batch and LR of global iteration `i` (0-based); raises IndexError past the end."""
    if not 0 <= i < plan.iterations:
        raise IndexError(f"iteration {i} is outside the plan's {plan.iterations} iterations")
    k = bisect.bisect_right(plan.iteration_starts, i) - 1
    while plan.phases[k].iterations == 0:  # zero-length phases share their start with the next phase
        k += 1
    phase = plan.phases[k]
    offset = i - plan.iteration_starts[k]
    epoch_in_phase, step = divmod(offset, phase.iterations_per_epoch)
    epoch = phase.start_epoch + epoch_in_phase
    j = step % len(phase.cycle)  # the sampler restarts its cycle every epoch
    shape = phase.cycle[j]
    return Iteration(
        index=i, phase=phase.index, epoch=epoch, step_in_epoch=step, cycle_index=j, t=shape.t, s=shape.s,
        per_gpu_batch=phase.per_gpu_batches[j], bn_splits=phase.bn_splits, bn_sync=phase.bn_sync,
        lr=lr_at(plan, epoch + step / phase.iterations_per_epoch),
        stride_range=plan.stride_range(shape.t), jitter_range=plan.jitter_range(shape.s))
