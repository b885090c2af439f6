"""Learning rate at any (fractional) epoch of a Plan: warm-up, then step or cosine policy.

The long-cycle batch multiplier (linear scaling rule) applies under both policies; the
reference drops it under cosine (PySlowFast slowfast/utils/lr_policy.py).
"""

from __future__ import annotations

import math

from harness.schedule.plan import Plan


def _lr_after_warmup(plan: Plan, epoch: float) -> float:
    solver = plan.spec.solver
    phase = plan.phase_at_epoch(epoch)
    if solver.policy == "step":
        return solver.base_lr * phase.lr_multiplier
    progress = min(epoch, plan.max_epoch) / plan.max_epoch
    return solver.base_lr * phase.base.batch_mult * 0.5 * (1.0 + math.cos(math.pi * progress))


def lr_at(plan: Plan, epoch: float) -> float:
    """Absolute LR at `epoch` (e.g. epoch + step/iterations_per_epoch)."""
    warmup = plan.warmup_epochs
    if epoch < warmup:
        # Linear from warmup_start_lr to the schedule's LR at the end of warm-up (as the reference does).
        start = plan.spec.solver.warmup_start_lr
        end = _lr_after_warmup(plan, warmup)
        return start + (end - start) * epoch / warmup
    return _lr_after_warmup(plan, epoch)
