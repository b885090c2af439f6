"""One suite's report page (`build_report`), its terminal view (`runs_text`) and summary, and the index page of
every report (`build_index`), from records already read. Pure: no files are read or written, no clock is read."""

from __future__ import annotations

import base64
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import jinja2

from harness.provenance import provenance_of
from harness.report import figures, history, verdict
from harness.report.baselines import suite_baseline
from harness.report.inputs import (
    combine_seeds,
    ordered,
    record_setup,
    records_by_setup,
    records_of_setup,
    select_records,
)
from harness.report.measurements import (
    compile_cost_table,
    profile_table,
    scaling_tables,
    step_kernels_table,
    sub_batch_bn_table,
    throughput_table,
)
from harness.report.overview import HEADER, overview_cells
from harness.report.provenance_table import device_of
from harness.report.run_numbers import ran_papers_model
from harness.report.setups_table import setups_table
from harness.report.smoke_view import SMOKE_NOTE, smoke_view
from harness.report.table_model import Column, Table, fmt, shown
from harness.report.tables import OK, TABLE_TITLES, build_tables, epochs_of, method_of, runs_table
from harness.report.template import INDEX, PAGE
from harness.spec import SpecError
from harness.suite import RunDef, SuiteDef
from harness.suite import paper_rows as load_paper_rows

_ENV = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=False)


def _cell_class(c: Column) -> str:
    classes = ["text"] if c.kind in ("text", "commit") else []
    if c.paper:
        classes.append("paper")
    if c.key in ("note", "paper_note"):
        classes.append("wrap")
    return " ".join(classes)


def _b64(png: bytes | None) -> str | None:
    return base64.b64encode(png).decode("ascii") if png else None


def _devices(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """The hardware of every record behind `records`, every seed of a run over seeds included."""
    return sorted({d for r in records for d in (r.get("seeds") or {}).get("devices") or [device_of(r)]})


def _commits_and_dates(records: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[str]]:
    """The commits and dates of every record behind `records`, every seed included."""
    commits, dates = set(), []
    for r in records:
        seeds, prov = r.get("seeds") or {}, provenance_of(r)
        commits.update(seeds.get("commits") or [str(prov["commit"])])
        dates.extend(seeds.get("dates") or [prov["date"] or ""])
    # a commit named in short form by one record and in full by another is one commit
    distinct = {c for c in commits if not any(other != c and other.startswith(c) for other in commits)}
    return sorted(distinct), sorted(dates)


def scale_statement(scale: str | None, records: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """A plain (headline, detail) about what our numbers are, for the top of the report."""
    if not records:
        return "No runs yet.", " Run the suite (nox -s reproduce -- --suite NAME) and build this report again."
    spec = records[0].get("spec") or {}
    data, model = spec.get("data") or {}, spec.get("model") or {}
    where = " and ".join(_devices(records))
    source = "synthetic video" if data.get("name") == "synthetic" else f"{data.get('name')} video"
    shape = f"{data.get('num_frames')} frames at {data.get('crop_size')} px"
    if scale == "smoke":
        return (f"Smoke scale: tiny models (width ×{model.get('width')}) on {source}, {shape}, on a {where}.",
                " Accuracy is not comparable to the paper's: a few epochs over a few dozen tiny clips. What "
                "multigrid saves is read from the iteration and FLOP ratios (× fewer iters, × fewer FLOPs), counted "
                "under the paper's schedule rules. Wall-clock speedups, and Figure 3's time axis, are not indicative "
                "at this size: runs take seconds, so fixed per-run costs (start-up, loading, Python) and machine "
                "noise dominate them, and they can land far from the iteration ratio in either direction. Proxy "
                "and paper scales measure speedup.")
    if scale == "proxy":
        return (f"Proxy scale: the paper's architectures and schedule rules on {source}, {shape}, on {where}.",
                " Accuracy is not comparable to the paper's (short schedules on proxy data); speedups are "
                "comparable in kind, measured on this hardware.")
    if scale == "paper":
        return (f"Paper scale: the exact recipe on {source}, {shape}, on {where}.",
                " Accuracy and speedups are comparable to the paper's; the paper trained on 128 GPUs, so "
                "wall-clock speedups depend on how close this hardware is.")
    return f"Scale {scale!r} on {where}.", " Compare with the paper's numbers with care."


def _title(suite: SuiteDef, records: Sequence[Mapping[str, Any]]) -> str:
    """The page's title, naming the models that ran where none is the paper's."""
    if not records or any(ran_papers_model(r) for r in records):
        return f"{suite.name}: multigrid vs baseline, ours beside the paper's"
    models = sorted({str((r.get("plan") or {}).get("model") or "?") for r in records})
    return f"{suite.name}: multigrid vs baseline on {', '.join(models)}"


def _figure3(runs: Table, metric: str) -> bytes | None:
    ours, paper = [], []
    for row in runs.rows:
        if row.get("status") == OK:
            ours.append({"method": row["method"], "epochs_x": row.get("epochs_x"), "train_s": row.get("train_s"),
                         metric: row.get(metric), f"{metric}_std": row.get(f"{metric}_std")})
        if row.get("paper_speedup") is not None:
            paper.append({"method": row["method"], "epochs_x": row.get("epochs_x"),
                          "speedup": row["paper_speedup"], metric: row.get(f"paper_{metric}")})
    return figures.tradeoff_figure(ours, paper, metric)


def representatives(suite: SuiteDef, chosen: Mapping[str, Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """One record per schedule (Figure-3 method, else run) for Figure 2: the run tied to a paper row, else the
    1.0× run, else the first. Other epoch factors of a method stretch the same sequence of shapes."""
    groups: dict[str, list[tuple[RunDef, Mapping[str, Any]]]] = {}
    for run in suite.runs:
        if run.variant in chosen:
            groups.setdefault(method_of(run, chosen[run.variant]), []).append((run, chosen[run.variant]))
    picked = {}
    for method, members in groups.items():
        run, record = min(members, key=lambda m: (not m[0].paper, epochs_of(*m) != 1.0))
        label = method if method == run.variant else f"{method} ({run.variant})"
        picked[label] = record
    return picked


def _schedules(records: Mapping[str, Mapping[str, Any]], notes: list[str]) -> dict[str, list[dict[str, Any]]]:
    series = {}
    for label, r in records.items():
        try:
            series[label] = figures.schedule_series(r)
        except (SpecError, KeyError, TypeError) as err:  # a record from an older spec version
            notes.append(f"{r.get('_source', r.get('variant'))}: its plan could not be rebuilt for Figure 2 ({err})")
    return series


def report_answer(tables: Sequence[Table]) -> list[str]:
    """The report's generated answer sentences: the convergence rule, Figure 3's ordering, each paper table's
    order; each with its uncertainty."""
    by_id = {t.id: t for t in tables}
    return [*verdict.verdict_sentences(by_id.get("verdict")),
            *(n for t in tables if t.id == "convergence" for n in t.notes),
            *(verdict.ordering_sentences(by_id["runs"].rows) if "runs" in by_id else []),
            *(line for t in tables if t.id in TABLE_TITLES for line in [verdict.paper_order_sentence(t)] if line)]


def build_report(suite: SuiteDef, records: Iterable[Mapping[str, Any]], paper_rows: Sequence[Mapping[str, str]],
                 scale: str | None = None, notes: Sequence[str] = (),
                 profiles: Sequence[Mapping[str, Any]] = (),
                 scaling: Sequence[Mapping[str, Any]] = (),
                 throughput: Sequence[Mapping[str, Any]] = (), gpus: int | None = None,
                 kept: Mapping[str, Sequence[history.KeptSetting]] | None = None) -> tuple[str, list[Table]]:
    """The report of `suite` from its `records` (any number, any scales) and the paper's rows: (HTML, tables).

    Pure: no files are read or written, no clock is read, the same inputs give the same bytes.
    """
    records = list(records)
    scale, chosen, picked_notes = select_records(suite, records, scale, gpus)
    notes = [*notes, *picked_notes]
    recs = ordered(suite, chosen)
    tables = build_tables(suite, chosen, paper_rows)
    main_setup = record_setup(recs[0]) if recs else None
    setups = (setups_table(suite, records_by_setup(suite, records, scale), main_setup,
                           records_of_setup(suite, records, scale, main_setup)) if scale else None)
    tables.extend(profile_table(p) for p in profiles)
    bn_cost = sub_batch_bn_table(profiles)
    if bn_cost is not None:
        tables.append(bn_cost)
    # Scaling at a fixed global batch is shown at the scale of the runs shown; at a fixed batch per GPU (the
    # paper's way of adding GPUs) at any scale, like the step-time profiles.
    at_scale = [r for r in scaling if r.get("scale") == scale or r.get("fixed_per_gpu_batch")]
    recipes = {r.recipe for r in suite.runs}
    for extra in (setups, throughput_table(throughput, recipes), step_kernels_table(throughput, recipes),
                  compile_cost_table(throughput, recipes), *scaling_tables(at_scale)):
        if extra is not None:
            tables.append(extra)
    by_id = {t.id: t for t in tables}
    base_record = suite_baseline(recs[0], suite, chosen) if recs else None
    base_row = next((r for r in by_id["runs"].rows if base_record is not None
                     and r.get("variant") == base_record.get("variant")), None)
    run_gpu = provenance_of(base_record)["hardware"].get("gpu") if base_record else None
    run_gpus = {variant: (r.get("seeds") or {}).get("gpus", ()) for variant, r in chosen.items()}
    answer = [t for t in (verdict.verdict_table(by_id["runs"].rows, base_row, profiles, scale, run_gpu, run_gpus,
                                                  suite.margin),
                          verdict.convergence_table(by_id["runs"].rows)) if t is not None]
    tables[:0] = answer
    if scale == "smoke":  # ratios as the headline, wall-clock marked not indicative
        tables = [smoke_view(t) for t in tables]
        by_id = {t.id: t for t in tables}
    answer_lines = report_answer(tables)
    history_lines = [history.setting_line(k, base_record, suite.margin, combine_seeds)
                     for k in (kept or {}).get(str(scale), ())]
    paper_tables = [t for t in tables if t.id not in ("runs", "data_wait", "provenance")]
    metric = "map" if any(r.get("map") is not None or r.get("paper_map") is not None
                          for r in by_id["runs"].rows) else "top1"
    series = _schedules(representatives(suite, chosen), notes)
    longest = max((len(s) for s in series.values()), default=0)
    sampled = (f" Long plans are sampled at {figures.MAX_POINTS} evenly spaced iterations."
               if longest >= figures.MAX_POINTS else "")
    headline, detail = scale_statement(scale, recs)
    provs = [provenance_of(r) for r in recs]
    commits, dates = _commits_and_dates(recs)
    versions = sorted({", ".join(f"{k} {v}" for k, v in p["versions"].items()) for p in provs})
    html = _ENV.from_string(PAGE).render(
        title=_title(suite, recs), suite=suite,
        scale_headline=headline, scale_detail=detail, devices=_devices(recs),
        datasets=sorted({str(((r.get("spec") or {}).get("data") or {}).get("name")) for r in recs}),
        done=len(recs), total=len(suite.runs), commits=commits,
        date_range=f"{dates[0]} to {dates[-1]}" if dates else "never", notes=notes, paper_tables=paper_tables,
        runs_table=by_id["runs"], data_wait_table=by_id["data_wait"], provenance_table=by_id["provenance"],
        fig3=_b64(_figure3(by_id["runs"], metric)), fig2=_b64(figures.schedule_figure(series)),
        fig_convergence=_b64(figures.convergence_figure(verdict.baseline_curve(by_id["runs"].rows))),
        answer_lines=answer_lines, history_lines=history_lines,
        fig_wait=_b64(figures.data_wait_figure(by_id["data_wait"].rows)), sampled=sampled,
        metric_label="mAP" if metric == "map" else "top-1", comparable=scale == "paper", versions=versions,
        fmt=fmt, cell_class=_cell_class, shown=shown)
    return html, tables


def runs_text(suite: SuiteDef, records: Iterable[Mapping[str, Any]], scale: str | None = None,
              gpus: int | None = None) -> str:
    """The report's runs as a plain-text table for the terminal: iterations, train time, speedup, accuracy. At
    smoke scale the iteration and FLOP ratios come first and the wall-clock speedup is marked not indicative."""
    scale, chosen, _ = select_records(suite, records, scale, gpus)
    if not chosen:
        return f"{suite.name}: no complete runs recorded yet."
    table = runs_table(suite, chosen, load_paper_rows())
    metric = "map" if any(c.key == "map" for c in table.columns) else "top1"
    keys = ["variant", "iterations", "train_s", "speedup", "paper_speedup", metric]
    notes: list[str] = []
    if scale == "smoke":
        table = smoke_view(table)
        keys = ["variant", "iterations", "iteration_ratio", "flops_ratio", "train_s", "speedup", "paper_speedup",
                metric]
        # A short label for the terminal; the footnote says what the HTML's long label does.
        table = Table(table.id, table.title, tuple(Column(c.key, "wall-clock speedup*", c.kind) if c.key == "speedup"
                                                   else c for c in table.columns), table.rows, table.notes)
        notes = textwrap.wrap(f"* {SMOKE_NOTE}", 110)
    columns = [next(c for c in table.columns if c.key == k) for k in keys]
    rows = [[c.label for c in columns]]
    rows += [[fmt(r.get(c.key), c.kind) if r.get("status") == OK or c.key == "variant" else
              ("not run" if c.key == "iterations" else "") for c in columns] for r in table.rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(columns))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
             for row in rows]
    return "\n".join([f"{suite.name} at {scale} scale:", *lines, *notes])


def report_summary(suite: SuiteDef, records: Iterable[Mapping[str, Any]], scale: str | None = None,
                   gpus: int | None = None) -> dict:
    """What reports/index.html lists about a suite's report."""
    scale, chosen, _ = select_records(suite, records, scale, gpus)
    dates = _commits_and_dates(list(chosen.values()))[1]
    return {"suite": suite.name, "description": suite.description, "scale": scale, "done": len(chosen),
            "total": len(suite.runs), "newest": dates[-1] if dates else None}


def build_index(summaries: Sequence[Mapping[str, Any]], overview: Sequence[Mapping[str, Any]] = (),
                collections: Sequence[str] = ()) -> str:
    """reports/index.html: a link to every suite's report (suites without one are listed greyed out), to every
    other folder of reports beside them (`collections`, e.g. runs fine-tuned from another model), then every paper
    table's rows in one table (`overview_rows`)."""
    keys = ("suite", "description", "scale", "done", "total", "newest", "href")
    rows = [{**{k: s.get(k) for k in keys}, "name": s.get("suite")} for s in summaries]
    cells, note = overview_cells(overview)
    return _ENV.from_string(INDEX).render(suites=rows, overview_header=HEADER, overview=cells, overview_note=note,
                                          collections=list(collections))
