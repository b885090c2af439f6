"""The data-wait table: per run and phase, how much of the training wall-clock waited for the loader, with the
per-GPU batch and BN layout the phase ran with and its time per iteration."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from harness.report.run_numbers import ratio
from harness.report.table_model import Column, Table
from harness.suite import SuiteDef


def _per_iteration_ms(seconds: Any, iterations: Any) -> float | None:
    # NaN is truthy and no count: an edited or foreign record may hold it
    counted = isinstance(iterations, (int, float)) and 0 < iterations < math.inf
    return 1000 * float(seconds) / int(iterations) if seconds is not None and counted else None


def layout_text(per_gpu_batches: Sequence[int], bn_splits: int, bn_sync: int) -> str:
    """'8/GPU, BN split 2', '2–8/GPU, BN sync 4' or '16/GPU, plain BN' ('' when nothing was noted)."""
    if not per_gpu_batches:
        return ""
    low, high = min(per_gpu_batches), max(per_gpu_batches)
    clips = f"{low}/GPU" if low == high else f"{low}–{high}/GPU"
    bn = f"BN split {bn_splits}" if bn_splits > 1 else f"BN sync {bn_sync}" if bn_sync > 1 else "plain BN"
    return f"{clips}, {bn}"


def data_wait_table(suite: SuiteDef, chosen: Mapping[str, Mapping[str, Any]]) -> Table:
    """Per run and phase: how much of the training wall-clock was spent waiting for the data loader."""
    out = []
    for run in suite.runs:
        record = chosen.get(run.variant)
        if record is None:
            continue
        measured = record.get("measured") or {}
        for p in measured.get("phases") or []:
            out.append({"variant": run.variant, "phase": p.get("phase"), "iterations": p.get("iterations"),
                        "layout": layout_text(p.get("per_gpu_batches") or [], p.get("bn_splits", 1),
                                              p.get("bn_sync", 1)),
                        "clips": p.get("clips"), "wall_s": p.get("wall_s"), "data_wait_s": p.get("data_wait_s"),
                        "data_wait_share": p.get("data_wait_share"), "clips_per_s": p.get("clips_per_s"),
                        "ms_per_iteration": _per_iteration_ms(p.get("wall_s"), p.get("iterations"))})
        out.append({"variant": run.variant, "phase": "all", "iterations": measured.get("iterations"),
                    "clips": measured.get("clips"), "wall_s": measured.get("train_s"),
                    "data_wait_s": measured.get("data_wait_s"), "data_wait_share": measured.get("data_wait_share"),
                    "clips_per_s": ratio(measured.get("clips"), measured.get("train_s")),
                    "ms_per_iteration": _per_iteration_ms(measured.get("train_s"), measured.get("iterations"))})
    columns = (Column("variant", "run"), Column("phase", "phase"), Column("iterations", "iterations", "int"),
               Column("layout", "per-GPU batch, BN"), Column("clips", "clips", "int"),
               Column("wall_s", "wall-clock", "seconds"),
               Column("data_wait_s", "data wait", "seconds"), Column("data_wait_share", "data-wait share", "share"),
               Column("clips_per_s", "clips/s", "float"), Column("ms_per_iteration", "ms/iteration", "float"))
    notes = ("A high data-wait share means the loader, not the model, set the pace: multigrid's large batches of "
             "small clips need more decoding per second than the baseline.",
             "Every iteration of a plan costs about the baseline's FLOPs, so ms/iteration shows which phases run "
             "slower per FLOP (a phase's first iterations include capturing or compiling its shapes). Per-GPU "
             "batch, BN: the clips per GPU and BN layout the phase ran with.")
    return Table("data_wait", "Per phase: data wait, layout and time per iteration", columns, tuple(out), notes)
