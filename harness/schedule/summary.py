"""A Plan as one JSON-ready dict (what `harness plan --json` prints and run records embed)."""

from __future__ import annotations

from typing import Any

from harness.schedule.accounting import ClipCost, proportional_clip_cost, training_cost
from harness.schedule.plan import Phase, Plan, baseline_spec, build_plan
from harness.schedule.shapes import shape_cost

PROPORTIONAL_UNIT = "baseline clips (t·s² estimate)"
COUNTED_UNIT = "baseline clips (counted: multigrid.shape_costs)"


def _phase_dict(plan: Plan, p: Phase, clips: int, forward: float) -> dict[str, Any]:
    return {
        "index": p.index,
        "stage": p.stage,
        "start_epoch": p.start_epoch,
        "end_epoch": p.end_epoch,
        "epochs": p.epochs,
        "fine_tune": p.fine_tune,
        "lr_multiplier": p.lr_multiplier,
        "batch_mult": p.base.batch_mult,
        "t": p.base.t,
        "s": p.base.s,
        "per_gpu_batch": p.base.batch_mult * plan.spec.solver.batch_size // plan.spec.num_gpus,
        "short_cycle": [
            {"batch_mult": c.batch_mult, "t": c.t, "s": c.s, "per_gpu_batch": b,
             "stride_range": list(plan.stride_range(c.t)), "jitter_range": list(plan.jitter_range(c.s))}
            for c, b in zip(p.cycle, p.per_gpu_batches)
        ] if p.short_cycle else [],
        "stride_range": list(plan.stride_range(p.base.t)),
        "jitter_range": list(plan.jitter_range(p.base.s)),
        "bn_splits": p.bn_splits,
        "bn_sync": p.bn_sync,
        "iterations_per_epoch": p.iterations_per_epoch,
        "iterations": p.iterations,
        "clips": clips,
        "forward_cost": forward,
    }


def plan_summary(plan: Plan, clip_cost: ClipCost | None = None, unit: str = PROPORTIONAL_UNIT) -> dict[str, Any]:
    """The Plan's phases and totals; forward cost from `clip_cost` (default: the counted shape costs a
    batch_rule=flops plan was made with, else the t·s² estimate)."""
    baseline = build_plan(baseline_spec(plan.spec))
    if clip_cost is None and plan.spec.multigrid.batch_rule == "flops":
        clip_cost, unit = (lambda t, s: shape_cost(plan.spec, t, s)), COUNTED_UNIT
    cost_fn = clip_cost or proportional_clip_cost(plan)
    cost = training_cost(plan, cost_fn, unit)
    base_cost = training_cost(baseline, cost_fn, unit)
    s = plan.spec
    return {
        "recipe": s.recipe,
        "model": s.model.label,
        "kind": plan.kind,
        "num_gpus": s.num_gpus,
        "global_batch": s.solver.batch_size,
        "train_videos": s.data.train_videos,
        "lr_policy": s.solver.policy,
        "base_lr": s.solver.base_lr,
        "lr_steps": plan.lr_steps,
        "lr_multipliers": plan.lr_multipliers,
        "max_epoch": plan.max_epoch,
        "warmup_epochs": plan.warmup_epochs,
        "phases": [_phase_dict(plan, p, c, f) for p, c, f in zip(plan.phases, cost.clips, cost.forward)],
        "iterations": plan.iterations,
        "baseline_iterations": plan.baseline_iterations,
        "iteration_ratio": plan.iteration_ratio,
        "clips": cost.total_clips,
        "forward_cost": cost.total_forward,
        "baseline_forward_cost": base_cost.total_forward,
        "forward_cost_ratio": base_cost.total_forward / cost.total_forward,
        "cost_unit": unit,
    }
