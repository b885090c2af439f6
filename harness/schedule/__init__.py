"""The multigrid schedule: pure data and pure functions (no torch, no I/O)."""

from harness.schedule.accounting import Cost, proportional_clip_cost, training_cost
from harness.schedule.lr import lr_at
from harness.schedule.plan import Phase, Plan, baseline_spec, build_plan
from harness.schedule.shapes import PlanError, Shape
from harness.schedule.view import Iteration, iteration

__all__ = [
    "Cost", "Iteration", "Phase", "Plan", "PlanError", "Shape", "baseline_spec", "build_plan", "iteration", "lr_at",
    "proportional_clip_cost", "training_cost",
]
