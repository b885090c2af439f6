"""What one run record gives every table: its measured numbers (over its seeds where it has several), and what
the record says about how to show them (a resumed run, a model other than the paper's)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

NOT_PAPERS_MODEL = "not the paper's model: the paper's numbers are not shown beside it"


def run_numbers(record: Mapping[str, Any]) -> dict[str, Any]:
    """The measured numbers of one record that every table shows."""
    spec, plan, measured = record.get("spec") or {}, record.get("plan") or {}, record.get("measured") or {}
    final = record.get("final") or {}
    kind = plan.get("kind", "")
    section = "baseline" if kind == "baseline" else "multigrid"
    return {
        "variant": record.get("variant"),
        "kind": kind,
        "epoch_factor": (spec.get(section) or {}).get("epoch_factor"),
        "epochs": plan.get("max_epoch"),
        "iterations": measured.get("iterations", plan.get("iterations")),
        "plan_iteration_ratio": plan.get("iteration_ratio"),
        "train_s": measured.get("train_s"),
        "setup_s": (record.get("step") or {}).get("setup_s"),  # CUDA-graph capture / compile, inside train_s
        "total_s": (record.get("outside_steps") or {}).get("total_s"),  # the last attempt, all in-process work
        "gflops": measured.get("forward_gflops"),
        "data_wait_share": measured.get("data_wait_share"),
        "top1": final.get("top1"),
        "top5": final.get("top5"),
        "map": final.get("map"),
        "train_top1": final.get("train_top1"),  # the same scoring on training videos: memorising or not
        "videos": final.get("videos"),
        # Over seeds (a record of one seed: n 1, no std): see report.inputs.combine_seeds.
        "seeds": (record.get("seeds") or {}).get("n", 1),
        "top1_std": (record.get("seeds") or {}).get("top1_std"),
        "map_std": (record.get("seeds") or {}).get("map_std"),
        "train_s_std": (record.get("seeds") or {}).get("train_s_std"),
        # Per run of the seeds, aligned (see report.comparison): what intervals and same-card ratios are made of.
        "seed_list": (record.get("seeds") or {}).get("seeds"),
        "gpu_list": (record.get("seeds") or {}).get("gpus"),
        "train_s_values": (record.get("seeds") or {}).get("train_s"),
        **{f"{m}_values": (record.get("seeds") or {}).get(m) for m in ("top1", "map")},
    }


def ratio(base: Any, value: Any) -> float | None:
    """`base` over `value` (None where either is missing or `value` is 0)."""
    if base is None or not value:
        return None
    return float(base) / float(value)


def resumed_note(record: Mapping[str, Any]) -> str:
    """'resumed …' when the recorded attempt continued an earlier one, else ''. Records from before the trainer
    stored where an attempt began tell by a last attempt shorter than the train time they report."""
    start = record.get("resumed_from_iteration")
    if start is None:
        total = (record.get("outside_steps") or {}).get("total_s")
        train = (record.get("measured") or {}).get("train_s")
        if total is None or train is None or total >= train:
            return ""
    elif start == 0:
        return ""
    at = f" at iteration {start:,}" if start else ""
    return f"resumed{at}: train time adds up every attempt's steps, whole attempt is the last one"


def ran_papers_model(record: Mapping[str, Any]) -> bool:
    """Whether the record's run trained the paper's model (not a user's factory or another library's model); records
    from before the trainer said so ran the paper's."""
    return bool((record.get("plan") or {}).get("paper_model", True))


def without_paper_numbers(row: Mapping[str, Any]) -> dict[str, Any]:
    """`row` with the paper's numbers blanked (its row names kept): they describe another model."""
    return {k: (v if not k.startswith("paper_") or k in ("paper_row", "paper_rows") else None) for k, v in row.items()}
