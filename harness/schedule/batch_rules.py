"""What each batch rule gives a plan: per trained shape, the per-GPU batch and the forward cost of an iteration
under the paper's rule (tokens: b·t·s² constant, Eq. 1) and under the counted-FLOPs rule (flops)."""

from __future__ import annotations

import dataclasses
from typing import Any

from harness.schedule.accounting import training_cost
from harness.schedule.plan import Plan, baseline_spec, build_plan
from harness.schedule.shapes import shape_cost
from harness.schedule.trained import planned_loader_shapes
from harness.spec import BATCH_RULES, RunSpec


def under_rule(spec: RunSpec, rule: str) -> RunSpec:
    """`spec` with multigrid.batch_rule=`rule` (its counted shape costs kept for the flops rule)."""
    m = spec.multigrid
    return spec.replace(multigrid=dataclasses.replace(m, batch_rule=rule,
                                                      shape_costs=m.shape_costs if rule == "flops" else ()))


def rule_comparison(spec: RunSpec) -> dict[str, Any]:
    """Both rules' plans of `spec`, whose 'multigrid.shape_costs' give every shape's counted cost: per shape trained
    (cheapest first) its cost relative to the baseline clip and, per rule, its largest per-GPU batch and that
    batch's forward cost relative to a baseline iteration's; per rule the iterations and the forward cost in
    baseline clips (counted)."""
    plans = {rule: build_plan(under_rule(spec, rule)) for rule in BATCH_RULES}
    counted = under_rule(spec, "flops")
    base_batch = spec.solver.batch_size // spec.num_gpus

    def cost(t: int, s: int) -> float:
        return shape_cost(counted, t, s)

    batches = {rule: {(e["t"], e["s"]): e["per_gpu_batch"] for e in planned_loader_shapes(plan)}
               for rule, plan in plans.items()}
    shapes = sorted(set().union(*batches.values()), key=lambda shape: (cost(*shape), shape))
    rows = [{"t": t, "s": s, "clip_cost": cost(t, s),
             **{f"{rule}_batch": batches[rule].get((t, s)) for rule in BATCH_RULES},
             **{f"{rule}_iteration_cost": (batches[rule][(t, s)] * cost(t, s) / base_batch
                                           if (t, s) in batches[rule] else None) for rule in BATCH_RULES}}
            for t, s in shapes]
    baseline = build_plan(baseline_spec(counted))
    return {"rule": spec.multigrid.batch_rule, "shapes": rows,
            "baseline_iterations": baseline.iterations,
            "baseline_forward_cost": _forward(baseline, cost),
            **{f"{rule}_iterations": plan.iterations for rule, plan in plans.items()},
            **{f"{rule}_forward_cost": _forward(plan, cost) for rule, plan in plans.items()}}


def _forward(plan: Plan, cost) -> float:
    return training_cost(plan, cost, "baseline clips (counted)").total_forward
