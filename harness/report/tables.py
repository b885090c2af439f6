"""The suite's tables proper: each paper table row by row with the suite's runs (or 'not run') beside the paper's
numbers, every run of the suite (Figure 3's points), and the list of tables a report holds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.report.baselines import suite_baseline, versus_baseline
from harness.report.comparison_columns import SEEDS_NOTE, comparison_columns, verdict_note
from harness.report.data_wait_table import data_wait_table
from harness.report.paper_rows import (
    assign_runs,
    baseline_group,
    is_group_baseline,
    paper_number,
    paper_row_of,
    pretraining_notes,
)
from harness.report.provenance_table import provenance_table
from harness.report.run_numbers import (
    NOT_PAPERS_MODEL,
    ran_papers_model,
    resumed_note,
    run_numbers,
    without_paper_numbers,
)
from harness.report.table_model import Column, Table
from harness.suite import RunDef, SuiteDef

NOT_RUN = "not run"
NOT_IN_SUITE = "not in this suite"
OK = "ok"

TABLE_TITLES = {
    "1a": "Table 1a: number of long-cycle shapes (Kinetics-400, SlowFast R50 8×8)",
    "1b": "Table 1b: number of short-cycle shapes (Kinetics-400, SlowFast R50 8×8)",
    "2a": "Table 2a: ImageNet pre-training (Kinetics-400, SlowFast R50)",
    "2b": "Table 2b: clip length T (Kinetics-400, SlowFast R50)",
    "2c": "Table 2c: spatial resolution (Kinetics-400, SlowFast R50)",
    "3": "Table 3: I3D and I3D-NL (Kinetics-400)",
    "4": "Table 4: 1-GPU training (Kinetics-400, I3D R50)",
    "5": "Table 5: Something-Something V2 (SlowFast R50 16×8)",
    "6": "Table 6: Charades, mAP (SlowFast R50 16×8)",
}


def not_run_reason(run: RunDef) -> str:
    if run.requires:
        return f"needs {', '.join(run.requires)} (not set; add e.g. {run.requires[0]}=PATH to the suite's overrides)"
    return "no record yet"


def _difference(a: Any, b: Any) -> float | None:
    return float(a) - float(b) if isinstance(a, (int, float)) and isinstance(b, (int, float)) else None


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def paper_table(table_id: str, suite: SuiteDef, chosen: Mapping[str, Mapping[str, Any]],
                paper_rows: Sequence[Mapping[str, str]]) -> Table:
    """Paper table `table_id` row by row, with the suite's runs (or 'not run') beside each paper row."""
    rows = [p for p in paper_rows if p["table"] == table_id]
    assigned = assign_runs(rows, suite, chosen)
    baselines: dict[tuple[str, ...], Mapping[str, Any] | None] = {}
    for i, p in enumerate(rows):
        if is_group_baseline(p) and baseline_group(p) not in baselines:
            baselines[baseline_group(p)] = next((chosen[r.variant] for r in assigned[i] if r.variant in chosen), None)
    metric = "map" if any(paper_number(p.get("map")) is not None for p in rows) else "top"
    paper_base = {}  # the paper's own accuracy of each group's baseline row, for the paper's differences
    for p in rows:
        if is_group_baseline(p):
            paper_base.setdefault(baseline_group(p), {"top1": paper_number(p["top1"]), "map": paper_number(p["map"])})
    several_models = len({p["model"] for p in rows}) > 1
    out = []
    for i, p in enumerate(rows):
        label = f"{p['model']}: {p['row']}" if several_models else p["row"]
        paper = {"paper_row": label, "paper_speedup": paper_number(p["speedup"]), "paper_top1": paper_number(p["top1"]),
                 "paper_top5": paper_number(p["top5"]), "paper_map": paper_number(p["map"]),
                 "paper_train_days": paper_number(p.get("train_days")), "paper_note": p.get("note", ""),
                 **{f"paper_{m}_delta": _difference(paper_number(p[m]),
                                                    (paper_base.get(baseline_group(p)) or {}).get(m))
                    for m in ("top1", "map")}}
        said = f"paper: {p['note']}" if p.get("note") else ""
        if not assigned[i]:
            out.append({**paper, "status": NOT_IN_SUITE, "note": _join(NOT_IN_SUITE, said)})
            continue
        for run in assigned[i]:
            record = chosen.get(run.variant)
            if record is None:
                out.append({**paper, "variant": run.variant, "status": NOT_RUN,
                            "note": _join(f"{NOT_RUN}: {not_run_reason(run)}", said)})
                continue
            numbers = run_numbers(record)
            base = baselines.get(baseline_group(p))
            versus = versus_baseline(numbers, base, suite.margin)
            note = "" if base is not None else "the row's baseline has no record: no speedup"
            shown = paper if ran_papers_model(record) else without_paper_numbers(paper)
            out.append({**shown, **numbers, **versus, "status": OK,
                        "note": _join(note, said if shown is paper else NOT_PAPERS_MODEL)})
    columns = [Column("paper_row", "paper row"), Column("variant", "our run"), Column("status", "status", show=False),
               Column("epoch_factor", "epochs ×", "float"), Column("epochs", "epochs", "int", show=False),
               Column("iterations", "iterations", "int"), Column("iteration_ratio", "× fewer iters", "ratio"),
               Column("train_s", "train time", "seconds"),
               Column("setup_s", "of which capture/compile", "seconds"), Column("gflops", "fwd FLOPs", "gflops"),
               Column("flops_ratio", "× fewer FLOPs", "ratio", show=False), Column("speedup", "speedup", "ratio"),
               Column("paper_speedup", "paper speedup", "ratio", paper=True)]
    if metric == "map":
        columns += [Column("map", "mAP", "pct"), Column("map_std", "± std", "pct"), Column("seeds", "seeds", "int"),
                    Column("paper_map", "paper mAP", "pct", paper=True),
                    *comparison_columns("map", suite.margin, full=False)]
    else:
        columns += [Column("top1", "top-1", "pct"), Column("top1_std", "± std", "pct"),
                    Column("seeds", "seeds", "int"), Column("paper_top1", "paper top-1", "pct", paper=True),
                    *comparison_columns("top1", suite.margin, full=False),
                    Column("top5", "top-5", "pct"), Column("paper_top5", "paper top-5", "pct", paper=True),
                    Column("train_top1", "train top-1", "pct")]
    if any(paper_number(p.get("train_days")) is not None for p in rows):
        columns.append(Column("paper_train_days", "paper train (days)", "float", paper=True))
    columns += [Column("note", "note"), Column("paper_note", "paper note", paper=True, show=False)]
    notes = ("Speedup: measured training wall-clock of the row's baseline run over this run's (data wait + "
             "compute, evaluation excluded). × fewer iters / FLOPs: the baseline run's over this run's.",
             SEEDS_NOTE, verdict_note(suite.margin))
    if not rows:
        notes += (f"The paper CSV has no rows for table {table_id!r}.",)
    notes += pretraining_notes(rows, assigned, chosen)
    return Table(table_id, TABLE_TITLES.get(table_id, f"Table {table_id}"), tuple(columns), tuple(out), notes)


def method_of(run: RunDef, record: Mapping[str, Any] | None) -> str:
    """The Figure-3 method of a run: the suite's `figure.method`, else the run's own name."""
    return str(run.figure.get("method") or run.variant)


def epochs_of(run: RunDef, record: Mapping[str, Any] | None) -> float | None:
    if run.figure.get("epochs") is not None:
        return float(run.figure["epochs"])
    return run_numbers(record)["epoch_factor"] if record else None


def runs_table(suite: SuiteDef, chosen: Mapping[str, Mapping[str, Any]],
               paper_rows: Sequence[Mapping[str, str]]) -> Table:
    """Every run of the suite (Figure 3's points), with speedup against its recipe's 1.0× baseline run."""
    out = []
    for run in suite.runs:
        record = chosen.get(run.variant)
        linked = [p for p in (paper_row_of(run, key, paper_rows, record) for key in run.paper) if p is not None]
        paper = {"paper_rows": "; ".join(f"{p['table']}: {p['row']}" for p in linked),
                 "paper_speedup": paper_number(linked[0]["speedup"]) if linked else None,
                 "paper_top1": paper_number(linked[0]["top1"]) if linked else None,
                 "paper_map": paper_number(linked[0]["map"]) if linked else None}
        row = {"method": method_of(run, record), "epochs_x": epochs_of(run, record), "variant": run.variant,
               "recipe": run.recipe, **paper}
        if record is None:
            out.append({**row, "status": NOT_RUN, "note": f"{NOT_RUN}: {not_run_reason(run)}"})
            continue
        numbers = run_numbers(record)
        base = suite_baseline(record, suite, chosen)
        notes = [resumed_note(record)] + ([] if base is not None else
                                             ["no 1.0× baseline record of this recipe: no speedup"])
        if not ran_papers_model(record):
            row, notes = without_paper_numbers(row), [*notes, NOT_PAPERS_MODEL]
        out.append({**row, **numbers, **versus_baseline(numbers, base, suite.margin), "status": OK,
                    "baseline_variant": None if base is None else base.get("variant"),
                    "note": "; ".join(n for n in notes if n)})
    metric_map = any(r.get("map") is not None or r.get("paper_map") is not None for r in out)
    acc = ([Column("map", "mAP", "pct"), Column("map_std", "± std", "pct"), Column("seeds", "seeds", "int"),
            Column("paper_map", "paper mAP", "pct", paper=True)] if metric_map else
           [Column("top1", "top-1", "pct"), Column("top1_std", "± std", "pct"), Column("seeds", "seeds", "int"),
            Column("top5", "top-5", "pct"), Column("train_top1", "train top-1", "pct"),
            Column("paper_top1", "paper top-1", "pct", paper=True)])
    columns = (Column("method", "method"), Column("epochs_x", "epochs ×", "float"), Column("variant", "our run"),
               Column("status", "status", show=False), Column("kind", "schedule", show=False),
               Column("iterations", "iterations", "int"),
               Column("iteration_ratio", "× fewer iters", "ratio"), Column("train_s", "train time", "seconds"),
               Column("setup_s", "of which capture/compile", "seconds"),
               Column("total_s", "whole attempt", "seconds"),
               Column("gflops", "fwd FLOPs", "gflops"), Column("speedup", "speedup", "ratio"), *acc,
               Column("paper_rows", "paper rows", paper=True),
               Column("paper_speedup", "paper speedup", "ratio", paper=True), Column("note", "note"))
    title = "Figure 3 points: every run of the suite" if "fig3" in suite.tables else "Every run of the suite"
    notes = ("Speedup here is against the 1.0× baseline run of the same recipe, model, pre-training, clip length "
             "and crop in this suite. Train time: the training steps, data wait included. Whole attempt: the last "
             "attempt's time in the trainer, also start-up, checkpoint writes, precise BN and evaluation "
             "(records from before it was measured leave it empty).", SEEDS_NOTE)
    return Table("runs", title, columns, tuple(out), notes)


def build_tables(suite: SuiteDef, chosen: Mapping[str, Mapping[str, Any]],
                 paper_rows: Sequence[Mapping[str, str]]) -> list[Table]:
    """The paper tables the suite names, then every run, the data-wait shares and the provenance."""
    tables = [paper_table(t, suite, chosen, paper_rows) for t in suite.tables if t != "fig3"]
    return [*tables, runs_table(suite, chosen, paper_rows), data_wait_table(suite, chosen),
            provenance_table(suite, chosen)]

