"""The checks of a run record's content: its fields' types and the values no run writes, so that the report and
`reproduce` refuse a record edited by hand or written by another tool, and say why."""

from __future__ import annotations

import datetime
import math
from typing import Any

from harness.records.schema import NUM, NUM_OR_NULL, STR_OR_NULL, json_type, wrong_type

# What a run record holds, as far as the report reads it, in the terms of harness.records.schema.
_EVAL = {key: NUM_OR_NULL for key in ("epoch", "iteration", "videos", "videos_scored", "top1", "top5", "map",
                                      "train_top1", "train_top5", "train_map", "train_videos",
                                      "train_videos_scored")}
_PHASE = {"phase": int, "per_gpu_batches": [int], "bn_splits": int, "bn_sync": int,
          **{key: NUM for key in ("iterations", "clips", "data_wait_s", "compute_s", "wall_s", "clips_per_s",
                                  "data_wait_share", "forward_gflops", "peak_memory_gib")}}
_RUN_RECORD: dict[str, Any] = {
    "run_id": str, "suite": STR_OR_NULL, "recipe": STR_OR_NULL, "variant": STR_OR_NULL, "status": str,
    "spec": {"scale": str, "seed": int, "suite": STR_OR_NULL, "variant": STR_OR_NULL, "recipe": STR_OR_NULL,
             **{key: dict for key in ("data", "model", "train", "solver", "multigrid", "baseline")}},
    "plan": {"kind": str, "lr_steps": [NUM], "lr_multipliers": [NUM],
             **{key: NUM for key in ("max_epoch", "iterations", "baseline_iterations", "iteration_ratio",
                                     "warmup_epochs")}},
    "world_size": int, "precision": str, "channels_last": bool,
    "clip_gflops": [{"t": int, "s": int, "gflops": NUM}],
    "measured": {"phases": [_PHASE], **{key: NUM_OR_NULL for key in (
        "iterations", "clips", "train_s", "data_wait_s", "compute_s", "data_wait_share", "eval_s", "forward_gflops",
        "peak_memory_gib")}},
    "shape_checks": int, "epoch_losses": [NUM_OR_NULL], "evals": [_EVAL], "final": _EVAL,
    "bad_videos": {"bad_videos": int, "failed_reads": int, "files": list, "by_reason": dict},
    "step": {"mode": str, "setup_s": NUM, "specialisations": int, "compile": dict, "choice": dict},
    "outside_steps": {key: NUM for key in ("setup_s", "checkpoint_s", "precise_bn_s", "total_s")},
    "resumed_from_iteration": int, "same_run_as": str,
    # harness.provenance.provenance_of: in a block, or at the top level in records before version 3
    "provenance": {"commit": STR_OR_NULL, "date": STR_OR_NULL, "versions": dict, "hardware": dict},
    "commit": STR_OR_NULL, "date": STR_OR_NULL, "versions": dict, "hardware": dict,
}


def run_record_problem(record: Any) -> str | None:
    """Why `record` (parsed JSON) is no run record the report can read, or None where it is one."""
    missing = [key for key in ("variant", "spec", "measured") if key not in record] if isinstance(record, dict) \
        else None
    if missing is None or missing:
        lacks = f"no {', '.join(repr(k) for k in missing)}" if missing else f"{json_type(record)}, not an object"
        return f"not a run record ({lacks}; a file of another tool?)"
    problem = wrong_type(record, _RUN_RECORD, "")
    if problem:
        return f"not a run record the harness wrote: {problem} (edited by hand, or of another tool?)"
    impossible = _impossible_value(record)
    if impossible:
        return f"not a run record the harness wrote: {impossible} (edited by hand, or of another tool?)"
    return None


_PERCENTS = ("top1", "top5", "map", "train_top1", "train_top5", "train_map")  # of an evaluation
_SECONDS = ("train_s", "data_wait_s", "compute_s", "eval_s")  # of `measured`
# Counts and sizes no run makes negative, per block of the record ("": the top level).
_NON_NEGATIVE = {"": ("shape_checks", "resumed_from_iteration"),
                 "measured": ("iterations", "clips", "forward_gflops", "peak_memory_gib"),
                 "plan": ("max_epoch", "iterations", "baseline_iterations", "iteration_ratio", "warmup_epochs")}
_PHASE_COUNTS = ("iterations", "clips", "wall_s", "data_wait_s", "compute_s", "forward_gflops", "peak_memory_gib")


def _impossible_value(record: dict[str, Any]) -> str | None:
    """A number no run measures (a score outside [0, 100], a negative or infinite time, NaN), which a report
    would show as a speedup or accuracy; None where there is none."""
    evals = record.get("evals") if isinstance(record.get("evals"), list) else []
    blocks = [("final", record.get("final")), *((f"evals[{i}]", e) for i, e in enumerate(evals))]
    for where, block in blocks:
        for key in _PERCENTS if isinstance(block, dict) else ():
            value = block.get(key)
            if isinstance(value, NUM) and not 0 <= value <= 100:
                return f"'{where}.{key}' is {value}, not a percentage"
    measured = record.get("measured")
    for key in _SECONDS if isinstance(measured, dict) else ():
        value = measured.get(key)
        if isinstance(value, NUM) and not 0 <= value < math.inf:
            return f"'measured.{key}' is {value}, not a time in seconds"
    return _negative_count(record) or _not_a_date(record) or _not_a_world_size(record)


def _negative_count(record: dict[str, Any]) -> str | None:
    """A count or size of the run (iterations, clips, epochs, GFLOPs) below 0, infinite or NaN; None where none is."""
    measured = record.get("measured")
    phases = measured.get("phases") if isinstance(measured, dict) else None
    blocks = [*((name, record.get(name) if name else record, keys) for name, keys in _NON_NEGATIVE.items()),
              *((f"measured.phases[{i}]", phase, _PHASE_COUNTS) for i, phase in enumerate(phases or []))]
    for where, block, keys in blocks:
        for key in keys if isinstance(block, dict) else ():
            value = block.get(key)
            if isinstance(value, NUM) and not 0 <= value < math.inf:
                return f"'{where + '.' if where else ''}{key}' is {value}, not a count of the run"
    return None


def _not_a_world_size(record: dict[str, Any]) -> str | None:
    world = record.get("world_size")
    return None if not isinstance(world, int) or world >= 1 else f"'world_size' is {world}, not a number of processes"


def _not_a_date(record: dict[str, Any]) -> str | None:
    """The record's date (in its provenance block, or at the top level before version 3) where it is no ISO 8601
    date and time, which the report sorts records by and shows; None where it is one or there is none."""
    block = record.get("provenance") if isinstance(record.get("provenance"), dict) else record
    key = "provenance.date" if block is not record else "date"
    date = block.get("date")
    if not isinstance(date, str):
        return None
    try:
        datetime.datetime.fromisoformat(date)
    except ValueError:
        return f"'{key}' is {date!r}, not an ISO 8601 date and time (e.g. 2026-01-31T12:00:00+00:00)"
    return None
