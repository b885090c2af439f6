"""Which baseline run a run is measured against, and the run's ratios and accuracy comparison against it. Speedup,
as in the paper (footnote 3), is measured wall-clock: the baseline's training time over the run's, both measured
by our trainer on the same machine."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.report import comparison, stats
from harness.report.run_numbers import ratio, run_numbers
from harness.suite import SuiteDef


def versus_baseline(numbers: dict[str, Any], base: Mapping[str, Any] | None,
                    margin: float = stats.DEFAULT_MARGIN) -> dict[str, Any]:
    """Iterations, FLOPs and wall-clock of `base` over this run's (the speedup also over same-card seed pairs,
    with its interval), and this run's accuracy against the baseline's (report.comparison: difference, Welch
    interval, verdict at `margin`). Empty comparisons without a baseline record, and for the baseline itself."""
    if base is None:
        return {"iteration_ratio": numbers["plan_iteration_ratio"], "speedup": None, "flops_ratio": None}
    b = run_numbers(base)
    comparisons: dict[str, Any] = {}
    if numbers["variant"] != b["variant"]:  # a baseline row: its difference is 0 by definition, no verdict
        comparisons.update(comparison.speedup_interval(numbers, b))
        for m in ("top1", "map"):
            if numbers[m] is not None and b[m] is not None:
                comparisons.update(comparison.accuracy_comparison(numbers, b, m, margin))
    return {"iteration_ratio": ratio(b["iterations"], numbers["iterations"]),
            "speedup": ratio(b["train_s"], numbers["train_s"]),
            "flops_ratio": ratio(b["gflops"], numbers["gflops"]), **comparisons}


def is_plain_baseline(record: Mapping[str, Any]) -> bool:
    """A fixed-shape baseline run at 1.0× the recipe's epochs and shape: what speedups are measured against."""
    spec = record.get("spec") or {}
    base = spec.get("baseline") or {}
    return ((record.get("plan") or {}).get("kind") == "baseline" and base.get("epoch_factor", 1.0) == 1.0
            and list(base.get("shape_factor") or [1.0, 1.0]) == [1.0, 1.0])  # null: the default, as absent


def baseline_key(record: Mapping[str, Any]) -> tuple[Any, ...]:
    """Runs with equal keys share one baseline: recipe, model, pre-training, clip length and crop."""
    spec = record.get("spec") or {}
    data, model = spec.get("data") or {}, spec.get("model") or {}
    return (record.get("recipe"), model.get("name"), model.get("pretrained"), data.get("num_frames"),
            data.get("crop_size"))


def suite_baseline(record: Mapping[str, Any], suite: SuiteDef,
                   chosen: Mapping[str, Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The 1.0× fixed-shape baseline run of the same recipe, model, pre-training, T and crop."""
    for run in suite.runs:
        other = chosen.get(run.variant)
        if other is not None and is_plain_baseline(other) and baseline_key(other) == baseline_key(record):
            return other
    return None
