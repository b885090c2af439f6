"""Which paper row each suite run reproduces (rows of one name told apart by model), which rows share a
baseline, and where the runs' weights started beside where the paper's rows started."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.suite import RunDef, SuiteDef

PAPER_PRETRAINING = {"imagenet": "ImageNet", "kinetics400": "Kinetics-400"}


def paper_number(value: Any) -> float | None:
    """A paper CSV cell as a number (None when empty)."""
    try:
        return float(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def _model_score(csv_model: str, run: RunDef, record: Mapping[str, Any] | None) -> int:
    """How well a run fits a paper row's model, to tell apart rows of the same name (Table 3's two models)."""
    name = str(((record or {}).get("spec") or {}).get("model", {}).get("name", ""))
    if name == csv_model:
        return 3
    if name.startswith(csv_model + "_"):
        return 2
    return 1 if csv_model and csv_model in run.recipe else 0


def assign_runs(table_rows: Sequence[Mapping[str, str]], suite: SuiteDef,
                chosen: Mapping[str, Mapping[str, Any]]) -> dict[int, list[RunDef]]:
    """Paper row index → the suite runs that reproduce it."""
    out: dict[int, list[RunDef]] = {i: [] for i in range(len(table_rows))}
    for run in suite.runs:
        for table, row in run.paper:
            candidates = [i for i, p in enumerate(table_rows) if p["table"] == table and p["row"] == row]
            if candidates:
                best = max(candidates, key=lambda i: _model_score(table_rows[i]["model"], run,
                                                                  chosen.get(run.variant)))
                out[best].append(run)
    return out


def paper_row_of(run: RunDef, key: tuple[str, str], paper_rows: Sequence[Mapping[str, str]],
                 record: Mapping[str, Any] | None) -> Mapping[str, str] | None:
    """The paper row (table, row) of `run`, told apart by model where names repeat (Table 3)."""
    candidates = [p for p in paper_rows if (p["table"], p["row"]) == key]
    return max(candidates, key=lambda p: _model_score(p["model"], run, record), default=None)


def baseline_group(row: Mapping[str, str]) -> tuple[str, ...]:
    # Rows that differ in model, pre-training, clip length or crop each have their own baseline (Tables 2-3).
    return row["model"], row["pretrain"], row["T"], row["crop"]


def is_group_baseline(row: Mapping[str, str]) -> bool:
    return row["method"] == "baseline" and paper_number(row["epoch_factor"]) == 1.0


def pretraining_notes(rows: Sequence[Mapping[str, str]], assigned: Mapping[int, Sequence[RunDef]],
                      chosen: Mapping[str, Mapping[str, Any]]) -> tuple[str, ...]:
    """Where each run's weights started, beside where the paper's row started: the runs trained from scratch whose
    paper row starts from pre-trained weights (the comparison then differs from the paper's), and the files the
    others started from (model.pretrained)."""
    scratch: dict[str, list[str]] = {}
    started: dict[str, list[str]] = {}
    for i, paper_row in enumerate(rows):
        for run in assigned[i]:
            record = chosen.get(run.variant)
            if record is None:
                continue
            weights = ((record.get("spec") or {}).get("model") or {}).get("pretrained")
            if weights:
                started.setdefault(Path(str(weights)).name, []).append(run.variant)
            elif paper_row.get("pretrain", "none") in PAPER_PRETRAINING:
                scratch.setdefault(PAPER_PRETRAINING[paper_row["pretrain"]], []).append(run.variant)
    notes = [f"Trained from scratch where the paper starts from {source} weights: {', '.join(dict.fromkeys(runs))} "
             f"(model.pretrained=PATH fine-tunes from a checkpoint, as the paper does)."
             for source, runs in scratch.items()]
    notes += [f"Started from {name} (model.pretrained): {', '.join(dict.fromkeys(runs))}."
              for name, runs in started.items()]
    return tuple(notes)
