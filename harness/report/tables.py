"""Pure functions from records to tables: the paper's tables with our numbers beside the paper's.

A Table holds raw values (for CSV) and a per-column kind that says how to print them (HTML, Markdown).
Speedup, as in the paper (footnote 3), is measured wall-clock: the training time of the table's
baseline row run over this run's, both measured by our trainer on the same machine.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.provenance import provenance_of
from harness.report import comparison, stats
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
KIND_NAMES = {"baseline": "baseline", "multigrid": "multigrid (long + short)", "long_cycle": "long cycle only",
              "short_cycle": "short cycle only", "progressive": "progressive resizing (crop grown once)"}


SEEDS_NOTE = ("Runs over several seeds (initialisation and data order; the same videos): accuracy and train time "
              "are means over the runs, ± std the sample standard deviation of the accuracy, seeds how many runs "
              "(every complete run counts: a rerun of a seed, which GPU kernels train a little differently, is "
              "another run). Speedup divides mean train times; its 95% range is over the seeds both arms ran on one "
              "card (geometric mean of per-seed ratios, t-interval on their logarithms). Train top-1: the final "
              "model scored on training videos as the validation videos are (empty where the run did not score "
              "them).")


def verdict_note(margin: float) -> str:
    """How a difference becomes a verdict word, with the margin the report was built with."""
    return (f"Δ: this run's mean accuracy minus its baseline's, ± the half-width of Welch's 95% t-interval "
            f"(unequal variances, Welch–Satterthwaite degrees of freedom: df; scipy.stats), over the seeds compared "
            f"(compared: runs of this run v of the baseline, on one card where the arms' cards differ). Verdict at "
            f"the declared margin δ = {margin:g} point(s): better where the one-sided 95% lower bound of Δ is above "
            f"0; within δ where it is above −δ (non-inferior: the baseline's accuracy kept within δ); worse where "
            f"the one-sided 95% upper bound is below −δ; else inconclusive, with the seeds per arm that would "
            f"decide it at the spread observed. A side with one seed has no spread, so no interval: inconclusive "
            f"(a top-1 of one seed a side shows, apart, the 95% half-width from its validation videos alone, "
            f"which leaves out the spread over seeds).")


def comparison_columns(metric: str, margin: float, full: bool = True) -> list[Column]:
    """The accuracy comparison and speedup range columns (not `full`: the detail in the CSV only)."""
    label = "mAP" if metric == "map" else "top-1"
    return [Column(f"{metric}_delta", f"Δ {label}", "pct"), Column(f"{metric}_delta_interval", "± 95%", "pct"),
            Column(f"{metric}_delta_df", "df", "float", show=full),
            Column(f"{metric}_compared", "compared", show=full),
            Column(f"{metric}_verdict", f"verdict (δ = {margin:g})"),
            Column(f"{metric}_seeds_needed", "seeds/arm to decide", "int", show=full),
            Column(f"{metric}_sampling_interval", "± 95% from videos (1 seed)", "pct", show=full),
            Column(f"{metric}_cards", "cards", show=full),
            Column("speedup_range", "speedup 95% (seed pairs)")]


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    kind: str = "text"  # text | int | float | ratio | seconds | gflops | pct | share
    paper: bool = False  # a number copied from the paper (shown shaded)
    show: bool = True  # False: in the CSV only (the HTML and Markdown say it otherwise, e.g. by row style)


@dataclass(frozen=True)
class Table:
    id: str
    title: str
    columns: tuple[Column, ...]
    rows: tuple[Mapping[str, Any], ...]
    notes: tuple[str, ...] = field(default_factory=tuple)


def fmt(value: Any, kind: str) -> str:
    """How a cell prints in HTML and Markdown ('' for missing)."""
    if value is None or value == "" or (isinstance(value, float) and math.isnan(value)):
        return ""
    if kind == "int":
        return f"{int(value):,}"
    if kind == "float":
        return f"{float(value):.2f}"
    if kind == "ratio":
        return f"{float(value):.2f}×"
    if kind == "pct":
        return f"{float(value):.1f}"
    if kind == "share":
        return f"{100 * float(value):.1f}%"
    if kind == "gflops":
        v = float(value)
        return f"{v / 1000:,.1f} T" if v >= 1000 else f"{v:.3g} G"
    if kind == "seconds":
        return format_duration(float(value))
    if kind == "commit":  # a full hash stays in the CSV; people read the first 12 digits
        text = str(value)
        return text[:12] + ("+dirty" if text.endswith("+dirty") else "")
    return str(value)


def format_duration(seconds: float) -> str:
    if seconds >= 2 * 86400:
        return f"{seconds / 86400:.1f} d"
    if seconds >= 2 * 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 120:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.1f} s"


def _num(value: Any) -> float | None:
    """A paper CSV cell as a number (None when empty)."""
    try:
        return float(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


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


def _ratio(base: Any, value: Any) -> float | None:
    if base is None or not value:
        return None
    return float(base) / float(value)


NOT_PAPERS_MODEL = "not the paper's model: the paper's numbers are not shown beside it"


def ran_papers_model(record: Mapping[str, Any]) -> bool:
    """Whether the record's run trained the paper's model (not a user's factory or another library's model); records
    from before the trainer said so ran the paper's."""
    return bool((record.get("plan") or {}).get("paper_model", True))


def without_paper_numbers(row: Mapping[str, Any]) -> dict[str, Any]:
    """`row` with the paper's numbers blanked (its row names kept): they describe another model."""
    return {k: (v if not k.startswith("paper_") or k in ("paper_row", "paper_rows") else None) for k, v in row.items()}


def _versus(numbers: dict[str, Any], base: Mapping[str, Any] | None,
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
    return {"iteration_ratio": _ratio(b["iterations"], numbers["iterations"]),
            "speedup": _ratio(b["train_s"], numbers["train_s"]),
            "flops_ratio": _ratio(b["gflops"], numbers["gflops"]), **comparisons}


def _difference(a: Any, b: Any) -> float | None:
    return float(a) - float(b) if isinstance(a, (int, float)) and isinstance(b, (int, float)) else None


SMOKE_SPEEDUP_LABEL = "wall-clock speedup (not indicative at smoke scale)"
SMOKE_NOTE = ("Smoke scale: the × fewer iters and × fewer FLOPs ratios are what multigrid saves here. Wall-clock "
              "speedups are not indicative at this size: runs take seconds, so fixed per-run costs (start-up, "
              "loading, Python) and machine noise dominate them, and they can land far from the iteration ratio in "
              "either direction. Proxy and paper scales measure speedup.")


def smoke_view(table: Table) -> Table:
    """`table` as a smoke-scale report shows it: the FLOP ratio shown right after the iteration ratio (the
    headline), every wall-clock speedup column after them and labelled not indicative, and a note saying why.
    A table without a measured speedup is returned as it is; the rows (and so the CSV) are unchanged."""
    if not any(c.key == "speedup" for c in table.columns):
        return table
    columns: list[Column] = []
    for c in table.columns:
        if c.key == "flops_ratio":
            continue
        if c.key == "speedup":
            c = Column(c.key, SMOKE_SPEEDUP_LABEL, c.kind, c.paper, c.show)
        columns.append(c)
        if c.key == "iteration_ratio":
            columns.append(Column("flops_ratio", "× fewer FLOPs", "ratio"))
    ratios = [i for i, c in enumerate(columns) if c.key in ("iteration_ratio", "flops_ratio")]
    speed = next(i for i, c in enumerate(columns) if c.key == "speedup")
    if ratios and speed < max(ratios):  # wall-clock after the ratios
        columns.insert(max(ratios), columns.pop(speed))
    return Table(table.id, table.title, tuple(columns), table.rows, (SMOKE_NOTE, *table.notes))


def not_run_reason(run: RunDef) -> str:
    if run.requires:
        return f"needs {', '.join(run.requires)} (not set; add e.g. {run.requires[0]}=PATH to the suite's overrides)"
    return "no record yet"


def _model_score(csv_model: str, run: RunDef, record: Mapping[str, Any] | None) -> int:
    """How well a run fits a paper row's model, to tell apart rows of the same name (Table 3's two models)."""
    name = str(((record or {}).get("spec") or {}).get("model", {}).get("name", ""))
    if name == csv_model:
        return 3
    if name.startswith(csv_model + "_"):
        return 2
    return 1 if csv_model and csv_model in run.recipe else 0


def _assign(table_rows: Sequence[Mapping[str, str]], suite: SuiteDef,
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


def _group(row: Mapping[str, str]) -> tuple[str, ...]:
    # Rows that differ in model, pre-training, clip length or crop each have their own baseline (Tables 2-3).
    return row["model"], row["pretrain"], row["T"], row["crop"]


def _is_group_baseline(row: Mapping[str, str]) -> bool:
    return row["method"] == "baseline" and _num(row["epoch_factor"]) == 1.0


def paper_table(table_id: str, suite: SuiteDef, chosen: Mapping[str, Mapping[str, Any]],
                paper_rows: Sequence[Mapping[str, str]]) -> Table:
    """Paper table `table_id` row by row, with the suite's runs (or 'not run') beside each paper row."""
    rows = [p for p in paper_rows if p["table"] == table_id]
    assigned = _assign(rows, suite, chosen)
    baselines: dict[tuple[str, ...], Mapping[str, Any] | None] = {}
    for i, p in enumerate(rows):
        if _is_group_baseline(p) and _group(p) not in baselines:
            baselines[_group(p)] = next((chosen[r.variant] for r in assigned[i] if r.variant in chosen), None)
    metric = "map" if any(_num(p.get("map")) is not None for p in rows) else "top"
    paper_base = {}  # the paper's own accuracy of each group's baseline row, for the paper's differences
    for p in rows:
        if _is_group_baseline(p):
            paper_base.setdefault(_group(p), {"top1": _num(p["top1"]), "map": _num(p["map"])})
    several_models = len({p["model"] for p in rows}) > 1
    out = []
    for i, p in enumerate(rows):
        label = f"{p['model']}: {p['row']}" if several_models else p["row"]
        paper = {"paper_row": label, "paper_speedup": _num(p["speedup"]), "paper_top1": _num(p["top1"]),
                 "paper_top5": _num(p["top5"]), "paper_map": _num(p["map"]),
                 "paper_train_days": _num(p.get("train_days")), "paper_note": p.get("note", ""),
                 **{f"paper_{m}_delta": _difference(_num(p[m]), (paper_base.get(_group(p)) or {}).get(m))
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
            base = baselines.get(_group(p))
            versus = _versus(numbers, base, suite.margin)
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
    if any(_num(p.get("train_days")) is not None for p in rows):
        columns.append(Column("paper_train_days", "paper train (days)", "float", paper=True))
    columns += [Column("note", "note"), Column("paper_note", "paper note", paper=True, show=False)]
    notes = ("Speedup: measured training wall-clock of the row's baseline run over this run's (data wait + "
             "compute, evaluation excluded). × fewer iters / FLOPs: the baseline run's over this run's.",
             SEEDS_NOTE, verdict_note(suite.margin))
    if not rows:
        notes += (f"The paper CSV has no rows for table {table_id!r}.",)
    notes += pretraining_notes(rows, assigned, chosen)
    return Table(table_id, TABLE_TITLES.get(table_id, f"Table {table_id}"), tuple(columns), tuple(out), notes)


PAPER_PRETRAINING = {"imagenet": "ImageNet", "kinetics400": "Kinetics-400"}


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


def method_of(run: RunDef, record: Mapping[str, Any] | None) -> str:
    """The Figure-3 method of a run: the suite's `figure.method`, else the run's own name."""
    return str(run.figure.get("method") or run.variant)


def epochs_of(run: RunDef, record: Mapping[str, Any] | None) -> float | None:
    if run.figure.get("epochs") is not None:
        return float(run.figure["epochs"])
    return run_numbers(record)["epoch_factor"] if record else None


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


def _paper_row(run: RunDef, key: tuple[str, str], paper_rows: Sequence[Mapping[str, str]],
               record: Mapping[str, Any] | None) -> Mapping[str, str] | None:
    """The paper row (table, row) of `run`, told apart by model where names repeat (Table 3)."""
    candidates = [p for p in paper_rows if (p["table"], p["row"]) == key]
    return max(candidates, key=lambda p: _model_score(p["model"], run, record), default=None)


def runs_table(suite: SuiteDef, chosen: Mapping[str, Mapping[str, Any]],
               paper_rows: Sequence[Mapping[str, str]]) -> Table:
    """Every run of the suite (Figure 3's points), with speedup against its recipe's 1.0× baseline run."""
    out = []
    for run in suite.runs:
        record = chosen.get(run.variant)
        linked = [p for p in (_paper_row(run, key, paper_rows, record) for key in run.paper) if p is not None]
        paper = {"paper_rows": "; ".join(f"{p['table']}: {p['row']}" for p in linked),
                 "paper_speedup": _num(linked[0]["speedup"]) if linked else None,
                 "paper_top1": _num(linked[0]["top1"]) if linked else None,
                 "paper_map": _num(linked[0]["map"]) if linked else None}
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
        out.append({**row, **numbers, **_versus(numbers, base, suite.margin), "status": OK,
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
                    "clips_per_s": _ratio(measured.get("clips"), measured.get("train_s")),
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


def device_of(record: Mapping[str, Any]) -> str:
    """The hardware of a record in words, e.g. '8× NVIDIA H100 (80 GiB)' or '2-core CPU (Intel Xeon)'."""
    hw = provenance_of(record)["hardware"]
    if hw.get("gpu") and (record.get("spec") or {}).get("train", {}).get("device") != "cpu":
        mem = f", {hw['gpu_memory_gib']} GiB" if hw.get("gpu_memory_gib") else ""
        return f"{record.get('world_size', 1)}× {hw['gpu']}{mem}"
    return f"{hw.get('cpu_count', '?')}-core CPU ({hw.get('cpu', 'unknown')})"


def _seed(record: Mapping[str, Any]) -> Any:
    return (record.get("spec") or {}).get("seed")


def _same_run_under_main(record: Mapping[str, Any], main: Mapping[str, Any] | None,
                         main_records: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """What a run under another setup is timed against: the main setup's run of the same variant, seed and card
    (else the main setup's reported run, on the same card); None where the cards differ, since the ratio would
    then time the cards, not the setups."""
    def card(r: Mapping[str, Any]) -> tuple[Any, Any]:  # the kind of device, whatever the number of processes
        hw = provenance_of(r)["hardware"]
        return hw.get("gpu"), hw.get("gpu_memory_gib") if hw.get("gpu") else hw.get("cpu")

    same = [r for r in main_records if r.get("variant") == record.get("variant") and _seed(r) == _seed(record)
            and card(r) == card(record)]
    if same:
        return same[0]
    return main if main is not None and card(main) == card(record) else None


def setups_table(suite: SuiteDef, by_setup: Mapping[str, Mapping[str, Mapping[str, Any]]],
                 main_setup: str | None, main_records: Sequence[Mapping[str, Any]] = ()) -> Table | None:
    """Every run under each setup it was recorded with (e.g. 1 and 2 GPUs, same scale): wall-clock, speedup over
    the same setup's baseline, accuracy, and wall-clock against the run under the main tables' setup (the one of
    the same variant, seed and card among `main_records`, that setup's complete records, where there is one)."""
    if len(by_setup) < 2:
        return None
    main = by_setup.get(main_setup or "", {})
    setups = sorted(by_setup, key=lambda s: s != main_setup)  # the main setup first, then newest first
    rows = []
    for run in suite.runs:
        for setup in setups:
            record = by_setup[setup].get(run.variant)
            if record is None:
                continue
            numbers = run_numbers(record)
            ref = record if setup == main_setup else _same_run_under_main(record, main.get(run.variant),
                                                                            main_records)
            rows.append({"variant": run.variant, "setup": setup, "device": device_of(record),
                         "iterations": numbers["iterations"], "train_s": numbers["train_s"],
                         "speedup": _versus(numbers, suite_baseline(record, suite, by_setup[setup]))["speedup"],
                         "top1": numbers["top1"], "map": numbers["map"],
                         "vs_main": _ratio(run_numbers(ref)["train_s"], numbers["train_s"]) if ref else None,
                         "shape_checks": record.get("shape_checks") if int(record.get("world_size") or 1) > 1
                         else None, "commit": provenance_of(record)["commit"]})
    metric = (Column("map", "mAP", "pct") if any(r["map"] is not None for r in rows) else
              Column("top1", "top-1", "pct"))
    columns = (Column("variant", "run"), Column("setup", "setup"), Column("device", "device"),
               Column("iterations", "iterations", "int"), Column("train_s", "train time", "seconds"),
               Column("speedup", "speedup (same setup)", "ratio"), metric,
               Column("vs_main", f"faster than on {main_setup}", "ratio"),
               Column("shape_checks", "shape checks", "int"), Column("commit", "commit", "commit"))
    notes = ("Speedup: against the 1.0× baseline run of the same setup. Faster than on the main setup: against "
             "that setup's run of the same variant, seed and card (blank where it has none on that card). Shape "
             "checks: iterations at which every rank confirmed the same mini-batch shape (multi-process runs). "
             "Setups run on different commits compare only as well as those match (commit column).",)
    return Table("setups", "The runs under each setup (processes, step mode)", columns, tuple(rows), notes)


def provenance_table(suite: SuiteDef, chosen: Mapping[str, Mapping[str, Any]]) -> Table:
    """Where each number came from: record file, run id, commit, date, versions, device, precision."""
    out = []
    for run in suite.runs:
        record = chosen.get(run.variant)
        if record is None:
            continue
        prov = provenance_of(record)
        versions = prov["versions"]
        bad = (record.get("bad_videos") or {}).get("bad_videos")
        out.append({"variant": run.variant, "source": record.get("_source", ""), "run_id": record.get("run_id"),
                    "commit": prov["commit"], "date": prov["date"], "device": device_of(record),
                    "precision": record.get("precision"), "python": versions.get("python"),
                    "torch": versions.get("torch"), "data": ((record.get("spec") or {}).get("data") or {}).get("name"),
                    "model": ((record.get("spec") or {}).get("model") or {}).get("name"), "bad_videos": bad})
    columns = (Column("variant", "run"), Column("source", "record file"), Column("run_id", "run id"),
               Column("commit", "commit", "commit"), Column("date", "date"), Column("device", "device"),
               Column("precision", "precision"), Column("python", "python", show=False), Column("torch", "torch"),
               Column("data", "data"), Column("model", "model"), Column("bad_videos", "bad videos", "int"))
    return Table("provenance", "Provenance", columns, tuple(out))


def build_tables(suite: SuiteDef, chosen: Mapping[str, Mapping[str, Any]],
                 paper_rows: Sequence[Mapping[str, str]]) -> list[Table]:
    """The paper tables the suite names, then every run, the data-wait shares and the provenance."""
    tables = [paper_table(t, suite, chosen, paper_rows) for t in suite.tables if t != "fig3"]
    return [*tables, runs_table(suite, chosen, paper_rows), data_wait_table(suite, chosen),
            provenance_table(suite, chosen)]


def tables_csv(tables: Sequence[Table]) -> str:
    """All tables in one CSV (raw numbers): a 'table' column, then the union of the tables' columns."""
    import csv
    import io

    keys: list[str] = []
    for t in tables:
        keys += [c.key for c in t.columns if c.key not in keys]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=["table", *keys], extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for t in tables:
        for row in t.rows:
            writer.writerow({"table": t.id, **{k: row.get(k) for k in keys}})
    return buf.getvalue()


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def shown(table: Table) -> tuple[Column, ...]:
    """The columns of `table` that HTML and Markdown show."""
    return tuple(c for c in table.columns if c.show)


def _md_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def tables_markdown(tables: Sequence[Table]) -> str:
    """All tables as GitHub Markdown, one section each (cells formatted as in the HTML)."""
    parts = []
    for t in tables:
        columns = shown(t)
        lines = [f"## {_md_cell(t.title)}", "", "| " + " | ".join(_md_cell(c.label) for c in columns) + " |",
                 "|" + "|".join("---" for _ in columns) + "|"]
        lines += ["| " + " | ".join(_md_cell(fmt(row.get(c.key), c.kind)) for c in columns) + " |"
                  for row in t.rows]
        lines += [""] + [f"{_md_cell(n)}" for n in t.notes]
        parts.append("\n".join(lines).rstrip() + "\n")
    return "\n".join(parts)
