"""`build_report`: records + suite + paper rows → HTML and tables (pure); `write_report`: the I/O around it."""

from __future__ import annotations

import base64
import json
import os
import sys
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import jinja2

from harness.io import read_json_object, require_writable_dir, write_text_atomic
from harness.measure.kernels import short_name
from harness.measure.throughput_modes import as_it_is, row_setting
from harness.paths import reports_dir, results_root
from harness.provenance import provenance_of
from harness.report import figures, history, readme, verdict
from harness.report.inputs import (
    combine_seeds,
    load_records,
    load_suite_def,
    ordered,
    record_setup,
    records_by_setup,
    records_of_setup,
    select_records,
    suite_names,
)
from harness.report.markdown import without_html
from harness.report.overview import HEADER, overview_cells, overview_markdown, overview_rows
from harness.report.publish import clean_stale, publish, require_not_fewer
from harness.report.tables import (
    OK,
    SMOKE_NOTE,
    TABLE_TITLES,
    Column,
    Table,
    build_tables,
    device_of,
    epochs_of,
    fmt,
    layout_text,
    method_of,
    ran_papers_model,
    runs_table,
    setups_table,
    shown,
    smoke_view,
    suite_baseline,
    tables_csv,
    tables_markdown,
)
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


def profile_table(profile: Mapping[str, Any]) -> Table:
    """The predicted paper-scale speedup of every run (a `harness profile --suite` record) beside the paper's."""
    prov = provenance_of(profile)
    device = prov["hardware"].get("gpu") or profile.get("device", "?")
    rows = tuple({
        "run": r["variant"], "paper_rows": "; ".join(f"{p['table']}: {p['row']}" for p in r.get("paper", [])),
        "iteration_ratio": r["iteration_ratio"], "hours": r["predicted_gpu_hours"],
        "baseline_hours": r["baseline_predicted_gpu_hours"], "speedup": r["predicted_speedup"],
        "paper_speedup": _float_or_none(next((p["speedup"] for p in r.get("paper", [])), None)),
        "loader_speedup": r.get("loader_bound_speedup"),
    } for r in profile.get("runs", []))
    columns = (Column("run", "our run"), Column("paper_rows", "paper rows"),
               Column("iteration_ratio", "× fewer iters", "ratio"), Column("hours", "predicted GPU-hours", "float"),
               Column("baseline_hours", "baseline GPU-hours", "float"),
               Column("speedup", "predicted speedup", "ratio"),
               Column("paper_speedup", "paper speedup (P100)", "ratio", paper=True))
    step = profile.get("step", "eager")
    impl = profile.get("sub_batch_bn") or "auto"
    notes = [f"Predicted at {profile.get('scale', 'paper')} scale on one {device} from timed training steps of every "
             f"planned shape run as train.step={step}, train.sub_batch_bn={impl} (harness profile; "
             f"{profile.get('assumptions', '')}), commit {prov['commit'] or '?'}."]
    loader = profile.get("loader")
    if loader:  # the compute-only and the loader-bound prediction side by side
        columns = (*columns[:6], Column("loader_speedup", "predicted speedup with the loader", "ratio"), columns[6])
        notes.append(f"With the loader: every iteration takes max(step time, per-GPU batch / the loader's clips/s at "
                     f"its shape), the loader's rates from {loader.get('source', '?')}.")
    title = f"Predicted {profile.get('scale', 'paper')}-scale speedups on {device}, {step} steps" + \
        ("" if impl == "auto" else f", sub-batch BN: {impl}")
    table_id = "_".join(["profile", step, *([impl] if impl != "auto" else []), *([_card_slug(device)] if
                         prov["hardware"].get("gpu") else []), *(["loader"] if loader else [])])
    return Table(table_id, title + (", with the loader" if loader else ""), columns, rows, tuple(notes))


def _card_slug(gpu: str) -> str:
    """'NVIDIA H100 80GB HBM3' → 'h100': the model word of a GPU's name, for table ids."""
    words = [w for w in gpu.lower().split() if w not in ("nvidia", "tesla", "geforce")]
    return (words[0] if words else "gpu").replace("-", "_")


def sub_batch_bn_table(profiles: Sequence[Mapping[str, Any]]) -> Table | None:
    """What sub-batch BN costs at each planned shape: the step with sub-batch BN beside the same step with plain BN,
    from the profiles timed with `harness profile --plain-bn`."""
    rows = []
    for profile in profiles:
        device = provenance_of(profile)["hardware"].get("gpu") or profile.get("device", "?")
        for shape in profile.get("shapes", []):
            if shape.get("plain_bn_ms") is None:
                continue
            rows.append({"card": device, "step": profile.get("step", "eager"),
                         "impl": profile.get("sub_batch_bn") or "auto", "model": shape.get("model", ""),
                         "shape": f"{shape['t']}×{shape['s']}²", "batch": shape["batch"], "splits": shape["bn_splits"],
                         "ms": shape["median_ms"], "plain_ms": shape["plain_bn_ms"],
                         "cost": 100 * (shape["median_ms"] / shape["plain_bn_ms"] - 1)})
    if not rows:
        return None
    columns = (Column("card", "card"), Column("step", "train.step"), Column("impl", "train.sub_batch_bn"),
               Column("model", "model"), Column("shape", "frames × crop"), Column("batch", "clips per GPU", "int"),
               Column("splits", "BN groups", "int"), Column("ms", "step ms, sub-batch BN", "float"),
               Column("plain_ms", "step ms, plain BN", "float"), Column("cost", "sub-batch BN cost %", "pct"))
    notes = ("Each planned shape that trains with sub-batch BN, timed twice in one `harness profile --plain-bn` run: "
             "with its BN groups as train.sub_batch_bn computes them, and with plain BN over the whole per-GPU batch "
             "(the same step otherwise). A negative cost: the groups' kernels beat the plain BN kernel.",)
    return Table("sub_batch_bn", "Sub-batch BN against plain BN, per planned shape", columns, tuple(rows), notes)


def _layout(row: Mapping[str, Any]) -> str:
    return layout_text([row["per_gpu_batch"]], row["bn_splits"], row["bn_sync"])


def scaling_tables(records: Sequence[Mapping[str, Any]]) -> list[Table]:
    """One scaling table per step mode that has records on 1 and N GPUs at a fixed global batch, then one per
    scale, step mode, clips per GPU and sub-batch BN of the weak-scaling records (`--per-gpu-batch`)."""
    strong = [r for r in records if not r.get("fixed_per_gpu_batch")]
    modes = sorted({str(r.get("step", "eager")) for r in strong}, key=lambda m: (m != "eager", m))
    tables = [scaling_table([r for r in strong if r.get("step", "eager") == mode], mode) for mode in modes]
    weak: dict[tuple, list[Mapping[str, Any]]] = {}
    for r in records:
        if r.get("fixed_per_gpu_batch"):
            key = (str(r["scale"]), str(r.get("step", "eager")), int(r["fixed_per_gpu_batch"]),
                   str(r.get("sub_batch_bn", "auto")))
            weak.setdefault(key, []).append(r)
    order = sorted(weak, key=lambda k: (k[0], k[1] != "eager", k[1], k[2], k[3] != "auto", k[3]))
    tables.extend(weak_scaling_table(weak[key]) for key in order)
    return [t for t in tables if t is not None]


def scaling_table(records: Sequence[Mapping[str, Any]], step: str = "eager") -> Table | None:
    """Step time of every planned shape at the same global batch on 1 and N GPUs (`harness scaling` records of
    one step mode)."""
    by_world = {int(r["world_size"]): r for r in records}
    if 1 not in by_world or len(by_world) < 2:
        return None
    def key(r: Mapping[str, Any]) -> tuple:
        # A shape can come with two BN layouts (two phases); the clips per BN group tell them apart.
        return r["t"], r["s"], r["global_batch"], r["per_gpu_batch"] * r["bn_sync"] // r["bn_splits"]

    one = {key(r): r for r in by_world[1]["shapes"]}
    rows = []
    for world in sorted(w for w in by_world if w > 1):
        for r in by_world[world]["shapes"]:
            base = one.get(key(r))
            if base is None:
                continue
            rows.append({"gpus": world, "shape": f"{r['t']}×{r['s']}²", "global_batch": r["global_batch"],
                         "one_layout": _layout(base), "one_ms": base["median_ms"], "n_layout": _layout(r),
                         "n_ms": r["median_ms"], "scaling": base["median_ms"] / r["median_ms"]})
    columns = (Column("gpus", "GPUs", "int"), Column("shape", "t×s²"), Column("global_batch", "global batch", "int"),
               Column("one_layout", "1 GPU: batch, BN"), Column("one_ms", "1 GPU: ms/step", "float"),
               Column("n_layout", "N GPUs: batch, BN"), Column("n_ms", "N GPUs: ms/step", "float"),
               Column("scaling", "N-GPU speedup", "ratio"))
    notes = []
    for world, r in sorted(by_world.items()):
        predicted = r.get("predicted_s") or {}
        mg, base = predicted.get("multigrid"), predicted.get("baseline_of_multigrid")
        speedup = f", multigrid {base / mg:.2f}× faster than its baseline" if mg and base else ""
        prov = provenance_of(r)
        notes.append(f"{world} GPU(s) ({prov['hardware'].get('gpu', r.get('device', '?'))}, commit "
                     f"{prov['commit'] or '?'}): steps of the multigrid run "
                     f"{(mg or 0):.0f} s, of its baseline {(base or 0):.0f} s{speedup}.")
    repeats = sorted({int(r.get("repeats", 15)) for r in by_world.values()})  # 15: the default before it was kept
    notes.append(f"harness scaling: DDP {step} steps on random clips (no loader), median over "
                 f"{'/'.join(map(str, repeats))} synchronised steps; the global batch is the scale's, so N GPUs hold "
                 f"1/N of it each and synchronise BN when a GPU holds fewer clips than the BN base size.")
    # Eager keeps the anchor #t-scaling that links point to; other modes get their own.
    table_id, title = ("scaling", "") if step == "eager" else (f"scaling_{step}", f", {step} steps")
    return Table(table_id, f"Data-parallel scaling per planned shape (same global batch){title}", columns,
                 tuple(rows), tuple(notes))


def weak_scaling_table(records: Sequence[Mapping[str, Any]]) -> Table | None:
    """Step time of every planned shape at a fixed number of clips per GPU on 1 and N GPUs (`harness scaling
    --per-gpu-batch` records of one scale, step mode and sub-batch BN): efficiency is the 1-GPU step time over
    the N-GPU one, since N GPUs then train N times the clips."""
    by_world = {int(r["world_size"]): r for r in records}
    if 1 not in by_world or len(by_world) < 2:
        return None
    first = by_world[1]
    def key(r: Mapping[str, Any]) -> tuple:
        return r["t"], r["s"], r["per_gpu_batch"], r["bn_splits"], r["bn_sync"]

    one = {key(r): r for r in first["shapes"]}
    rows = []
    for world in sorted(w for w in by_world if w > 1):
        for r in by_world[world]["shapes"]:
            base = one.get(key(r))
            if base is not None:
                rows.append({"gpus": world, "shape": f"{r['t']}×{r['s']}²", "layout": _layout(r),
                             "one_ms": base["median_ms"], "n_ms": r["median_ms"],
                             "clips_per_s": r["clips_per_s"], "speedup": world * base["median_ms"] / r["median_ms"],
                             "efficiency": base["median_ms"] / r["median_ms"]})
    columns = (Column("gpus", "GPUs", "int"), Column("shape", "t×s²"), Column("layout", "per GPU: batch, BN"),
               Column("one_ms", "1 GPU: ms/step", "float"), Column("n_ms", "N GPUs: ms/step", "float"),
               Column("clips_per_s", "N GPUs: clips/s", "float"), Column("speedup", "clips/s over 1 GPU", "ratio"),
               Column("efficiency", "efficiency", "share"))
    notes = []
    for world in sorted(w for w in by_world if w > 1):
        effs = [r["efficiency"] for r in rows if r["gpus"] == world]
        if effs:
            notes.append(f"{world} GPUs: efficiency {min(effs):.2f}–{max(effs):.2f} over {len(effs)} shapes "
                         f"({world * min(effs):.2f}–{world * max(effs):.2f}× one GPU's clips/s).")
    for world, r in sorted(by_world.items()):
        prov = provenance_of(r)
        notes.append(f"{world} GPU(s): {prov['hardware'].get('gpu', r.get('device', '?'))}, commit "
                     f"{prov['commit'] or '?'}.")
    step, scale, per_gpu = first.get("step", "eager"), first["scale"], first["fixed_per_gpu_batch"]
    impl = first.get("sub_batch_bn", "auto")
    notes.append(f"harness scaling --per-gpu-batch {per_gpu}: DDP {step} steps on random clips (no loader), "
                 f"{per_gpu} clips per GPU at the base shape (the plan's batch at the other shapes), median over "
                 f"{first.get('repeats', 15)} synchronised steps; sub-batch BN {impl}.")
    suffix = "" if impl == "auto" else f"_{impl}"
    return Table(f"scaling_{scale}_{step}_per_gpu{per_gpu}{suffix}",
                 f"Data-parallel scaling at {scale} scale, {per_gpu} clips per GPU, {step} steps"
                 f"{'' if impl == 'auto' else f', sub-batch BN {impl}'}", columns, tuple(rows), tuple(notes))


def throughput_table(records: Sequence[Mapping[str, Any]], recipes: set[str]) -> Table | None:
    """Training-step time at the baseline shape of the suite's recipes: a plain loop beside the trainer's step
    modes (`harness throughput` records), each mode's gain over the trainer's eager step and over the plain loop
    (the model as it is) timed at the same commit on the same card, in the same record or another of that call."""
    def where(record: Mapping[str, Any]) -> tuple[str, str]:
        prov = provenance_of(record)
        return prov["commit"] or "?", prov["hardware"].get("gpu") or record.get("device", "?")

    plain_loop = {(*where(record), r["recipe"], r["batch"]): r["ms_per_step"]
                  for record in records for r in record.get("rows", []) if as_it_is(r, "plain")}
    rows, notes = [], []
    for record in records:
        mine = [r for r in record.get("rows", []) if r.get("recipe") in recipes]
        if not mine:
            continue
        # padded stems and Triton BN are set against the eager step on the model as it is too
        eager = {(r["recipe"], r["batch"]): r["ms_per_step"] for r in mine if as_it_is(r, "eager")}
        commit, device = where(record)
        for r in mine:
            base = eager.get((r["recipe"], r["batch"]))
            plain = plain_loop.get((commit, device, r["recipe"], r["batch"]))
            rows.append({"device": device, "model": r["model"], "shape": f"{r['t']}×{r['s']}²", "batch": r["batch"],
                         "mode": row_setting(r), "ms": r["ms_per_step"], "clips_per_s": r["clips_per_s"],
                         "tflops": r["train_tflops"], "share": r["share_of_matmul"], "setup_s": r["setup_s"] or None,
                         "gain": base / r["ms_per_step"] if base else None,
                         "vs_plain": plain / r["ms_per_step"] if plain and not as_it_is(r, "plain") else None})
        notes.append(f"{device}: bf16 matrix-product ceiling measured at {record.get('matmul_tflops', 0):.0f} TFLOP/s; "
                     f"commit {commit}. {record.get('notes', '')}.")
    if not rows:
        return None
    columns = (Column("device", "GPU"), Column("model", "model"), Column("shape", "t×s²"),
               Column("batch", "clips", "int"), Column("mode", "step"), Column("ms", "ms/step", "float"),
               Column("clips_per_s", "clips/s", "float"),
               Column("tflops", "TFLOP/s (3× fwd)", "float"), Column("share", "of matmul ceiling", "share"),
               Column("setup_s", "capture/compile", "seconds"), Column("gain", "vs trainer eager", "ratio"),
               Column("vs_plain", "vs plain loop", "ratio"))
    notes.append("step: train.step, with 'stem N' where model.pad_stem_channels=N and 'triton BN' where "
                 "train.plain_bn_impl=triton; vs plain loop: the plain loop on the model as it is, same commit and "
                 "card.")
    return Table("throughput", "Training steps at the baseline shape: plain loop vs the trainer's step modes", columns,
                 tuple(rows), tuple(notes))


def _throughput_rows_with(records: Sequence[Mapping[str, Any]], recipes: set[str], key: str):
    """(provenance, GPU, rows) of each `harness throughput` record with rows of `recipes` that hold `key`."""
    for record in records:
        mine = [r for r in record.get("rows", []) if r.get("recipe") in recipes and r.get(key)]
        if mine:
            prov = provenance_of(record)
            yield prov, prov["hardware"].get("gpu") or record.get("device", "?"), mine


KERNEL_GROUPS = ("convolution", "normalisation", "elementwise", "copy", "matmul", "communication", "other")


def step_kernels_table(records: Sequence[Mapping[str, Any]], recipes: set[str]) -> Table | None:
    """Where a training step's time goes (`harness throughput --kernels` rows of the suite's recipes): kernel time
    per step, how busy the GPU is during the step, time per kernel group and the largest kernel."""
    rows, notes = [], []
    for prov, device, mine in _throughput_rows_with(records, recipes, "kernels"):
        for r in mine:
            k = r["kernels"]
            top = k["top"][0] if k["top"] else None
            rows.append({"device": device, "model": r["model"], "batch": r["batch"], "mode": row_setting(r),
                         "ms": r["ms_per_step"], "kernel_ms": k["device_ms_per_step"], "busy": k["busy_share"],
                         **{group: k["groups_ms"].get(group) for group in KERNEL_GROUPS},
                         "largest": f"{short_name(top['name'])} ({top['share']:.0%})" if top else ""})
        notes.append(f"{device}: commit {prov['commit'] or '?'}; {len(mine)} of the record's rows were profiled.")
    if not rows:
        return None
    notes.append("harness throughput --kernels: a few steps of each mode under torch.profiler after the timed ones; "
                 "busy = kernel time over the step's wall time (near 100%: the kernels bound the step, so fewer "
                 "launches (CUDA graphs, compiling) cannot make it much faster; well below: the host launching "
                 "them does). Groups by kernel name (harness/measure/kernels.py), in ms per step.")
    columns = (Column("device", "GPU"), Column("model", "model"), Column("batch", "clips", "int"),
               Column("mode", "step"), Column("ms", "ms/step", "float"), Column("kernel_ms", "kernel ms", "float"),
               Column("busy", "GPU busy", "share"),
               *(Column(group, group, "float") for group in KERNEL_GROUPS), Column("largest", "largest kernel"))
    return Table("step_kernels", "Where a training step's time goes: kernels per step at the baseline shape", columns,
                 tuple(rows), tuple(notes))


def compile_cost_table(records: Sequence[Mapping[str, Any]], recipes: set[str]) -> Table | None:
    """Where a compiled step's setup time goes (`harness throughput` rows of compiled modes that kept their
    harness.train.compile_cost): Dynamo's tracing, AOTAutograd, Inductor, the guards, the rest (the warm-up runs and
    a CUDA graph's capture), and whether PyTorch's compile caches served the graphs."""
    def cache(cost: Mapping[str, Any], layer: str) -> str:
        hits, misses = cost.get(f"{layer}_cache_hits", 0), cost.get(f"{layer}_cache_misses", 0)
        return f"{hits} of {hits + misses}" if hits + misses else ""

    rows, notes = [], []
    for prov, device, mine in _throughput_rows_with(records, recipes, "compile"):
        for r in mine:
            cost = r["compile"]
            compiling = cost.get("compile_s", 0.0) + cost.get("inductor_backward_s", 0.0)
            rows.append({"device": device, "model": r["model"], "batch": r["batch"], "mode": row_setting(r),
                         "setup_s": r["setup_s"], "graphs": cost.get("graphs"), "tracing_s": cost.get("tracing_s"),
                         "aot_s": cost.get("aot_autograd_s"),
                         "inductor_s": cost.get("inductor_forward_s", 0.0) + cost.get("inductor_backward_s", 0.0),
                         "guards_s": cost.get("guards_s"), "rest_s": max(0.0, r["setup_s"] - compiling),
                         "aot_cache": cache(cost, "aot_autograd"), "inductor_cache": cache(cost, "inductor")})
        notes.append(f"{device}: commit {prov['commit'] or '?'}.")
    if not rows:
        return None
    notes.append("Seconds of each mode's setup (harness/train/compile_cost.py): Dynamo tracing the model, AOTAutograd "
                 "(the joint forward-backward graph), Inductor compiling forward and backward, Dynamo's guards; rest: "
                 "the warm-up steps and a CUDA graph's capture. Caches: graphs served by AOTAutograd's and Inductor's "
                 "caches on disk (a graph AOTAutograd's cache serves never reaches Inductor's); a mode timed after "
                 "another at the same shape may find its compilation in the process already (no graphs).")
    columns = (Column("device", "GPU"), Column("model", "model"), Column("batch", "clips", "int"),
               Column("mode", "step"), Column("setup_s", "setup", "seconds"), Column("graphs", "graphs", "int"),
               Column("tracing_s", "tracing", "seconds"), Column("aot_s", "AOTAutograd", "seconds"),
               Column("inductor_s", "Inductor", "seconds"), Column("guards_s", "guards", "seconds"),
               Column("rest_s", "rest", "seconds"), Column("aot_cache", "AOTAutograd cache hits"),
               Column("inductor_cache", "Inductor cache hits"))
    return Table("compile_cost", "Where compiling a step's graphs takes its time", columns, tuple(rows), tuple(notes))


def _float_or_none(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


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


def _write(path: Path, text: str) -> Path:
    write_text_atomic(path, text)
    # The atomic write's temporary file is private (0600); a report is for reading (served, shared, opened).
    os.chmod(path, 0o644)
    return path


class NoRecords(SpecError):
    """The results folder holds no run record of the suite: there is nothing to report."""


def write_report(suite: str, results_dir: Path | None = None, out_dir: Path | None = None,
                 scale: str | None = None, gpus: int | None = None, force: bool = False) -> Path:
    """Read results/<suite>/*.json, write reports/<suite>/{index.html,tables.csv,tables.md,summary.json} and
    refresh reports/index.html; return the report's path. A missing results folder, one without records of the
    suite (NoRecords) and, unless `force`, a report that would replace one built from more records (or from a
    number its summary.json does not tell: publish.require_not_fewer) are errors:
    a wrong --results must not silently turn a published report into an empty one."""
    results_dir = Path(results_dir) if results_dir else results_root()
    out_dir = Path(out_dir) if out_dir else reports_dir()
    suite_def = load_suite_def(suite)
    if not results_dir.is_dir():
        raise SpecError(f"The results folder {results_dir} does not exist. Pass --results DIR, the folder that "
                        f"holds {suite}/ with the run records (default: results/ of this checkout); nothing was "
                        f"written.")
    records, problems = load_records(results_dir / suite)
    folder = out_dir / suite
    if not records:
        unusable = f" ({len(problems)} file(s) there are not run records)" if problems else ""
        raise NoRecords(f"{results_dir / suite} holds no run record of suite '{suite}'{unusable}. Run the suite "
                        f"first (harness reproduce --suite {suite}) or pass the --results folder that holds its "
                        f"records; {folder / 'index.html'} was left as it is.")
    clean_stale(folder)  # a write killed mid-swap: its old report back in place, its temporary files gone
    if not force:
        require_not_fewer(folder, len(records), results_dir / suite)
    for where in (out_dir, folder):  # before the report is built and the index rewritten; the swap renames folder
        require_writable_dir(where, "--out")
    html, tables, summary = _render(suite_def, results_dir, records, problems, scale, gpus)
    files = {"tables.csv": tables_csv(tables),
             "tables.md": f"# {suite}: {suite_def.description}\n\n" + tables_markdown(without_html(tables)),
             "summary.json": json.dumps(summary, indent=2) + "\n", "index.html": html}
    publish(folder, files)  # every file at once: a killed write leaves the old report whole
    write_index(out_dir, results_dir)
    return folder / "index.html"


def _render(suite_def: SuiteDef, results_dir: Path, records: Sequence[Mapping[str, Any]], problems: Sequence[str],
            scale: str | None, gpus: int | None, quiet: bool = False) -> tuple[str, list[Table], dict]:
    """A suite's report from its records and the other records of `results_dir` it reads: (HTML, tables,
    summary.json's content); the files left out are printed unless `quiet`."""
    suite = suite_def.name
    others: list[str] = []  # the other records' problems, named relative to results_dir
    profiles = _suite_profiles(results_dir, suite, others)
    # results/scaling/<suite>/<scale>/*.json: `harness scaling` records at 1 and N processes.
    scaling = _readable(sorted((results_dir / "scaling" / suite).glob("*/*.json")), results_dir, _read_scaling,
                        others)
    throughput = _readable(sorted((results_dir / "throughput").glob("*.json")), results_dir, _read_throughput,
                           others)
    for problem in [] if quiet else [*(f"{suite}/{p}" for p in problems), *others]:  # as the report's notes say
        print(f"harness report: {results_dir}/{problem}", file=sys.stderr)
    kept = {d.name: history.load_kept(d) for d in sorted((results_dir / suite).iterdir()) if d.is_dir()}
    html, tables = build_report(suite_def, records, load_paper_rows(), scale, [*problems, *others], profiles, scaling,
                                throughput, gpus, kept)
    # "records": how many run records this report was built from, which the next write_report compares against.
    summary = {**report_summary(suite_def, records, scale, gpus), "records": len(records)}
    summary["overview"] = overview_rows(suite, summary["scale"], tables, profiles, suite_def.margin)
    summary["answer"] = report_answer(tables)
    return html, tables, summary


def summary_from_results(suite: str, results_dir: Path) -> dict | None:
    """What `write_report` would write into the suite's summary.json from `results_dir` (None: no records)."""
    records, problems = load_records(Path(results_dir) / suite)
    if not records:
        return None
    return _render(load_suite_def(suite), Path(results_dir), records, problems, None, None, quiet=True)[2]


def _suite_profiles(results_dir: Path, suite: str, notes: list[str] | None = None) -> list[dict]:
    """results/profile/<folder>/<suite>.json: `harness profile --suite` records (one per step mode or card); with
    `notes`, those a report's tables can read (else those the index's predicted speedups can)."""
    return _readable(sorted((results_dir / "profile").glob(f"*/{suite}.json")), results_dir,
                     _read_speedups if notes is None else _read_profile, [] if notes is None else notes)


def _read_speedups(profile: Mapping[str, Any]) -> None:
    for run in profile.get("runs", []):  # the verdict and the overview read each as a number
        str(run["variant"]), float(run["predicted_speedup"] or 0)


def _read_profile(profile: Mapping[str, Any]) -> None:
    profile_table(profile), sub_batch_bn_table([profile]), _read_speedups(profile)


def _read_scaling(record: Mapping[str, Any]) -> None:
    int(record["world_size"])
    # A table sets 1 GPU beside N: the record beside itself reads every field of its shapes.
    scaling_tables([{**record, "world_size": 1}, {**record, "world_size": 2}])


def _read_throughput(record: Mapping[str, Any]) -> None:
    recipes = {r.get("recipe") for r in record.get("rows", []) if isinstance(r, dict)}
    throughput_table([record], recipes), step_kernels_table([record], recipes), compile_cost_table([record], recipes)


def _readable(paths: Iterable[Path], root: Path, read: Callable[[Mapping[str, Any]], None],
              notes: list[str]) -> list[dict]:
    """The JSON objects in `paths` (`harness profile`, `scaling` or `throughput` records) that `read`, the report's
    reading of one record, takes; each other file left out with a note naming it (relative to `root`). One edited
    by hand or written by another tool would otherwise end the report, and reports/index.html, which reads every
    suite's profiles, in a traceback."""
    records = []
    for path in paths:
        try:
            record = read_json_object(path)
            read(record)
        except (OSError, ValueError, TypeError, KeyError, AttributeError, IndexError, ZeroDivisionError) as err:
            notes.append(f"{path.relative_to(root)}: not a record the report can read ({type(err).__name__}: "
                         f"{str(err)[:120]}), left out")
            continue
        records.append(record)
    return records


def _summary(path: Path) -> dict | None:
    """A report's summary.json, or None where there is none, or none write_report wrote (unreadable, edited): the
    index then lists that suite as one without a report, from its definition and profiles."""
    try:
        summary = read_json_object(path)
    except (OSError, ValueError):
        return None
    overview = summary.get("overview")
    if overview is not None and not (isinstance(overview, list) and all(isinstance(r, dict) for r in overview)):
        return None
    return summary


def write_index(out_dir: Path, results_dir: Path | None = None) -> Path:
    """Write reports/index.html and reports/overview.md from every suite definition and the reports that exist
    (a suite without a report contributes its paper rows with the predicted speedups of results/profile/)."""
    results_dir = Path(results_dir) if results_dir else results_root()
    summaries, overview = _index_rows(results_dir, {name: _summary(Path(out_dir) / name / "summary.json")
                                                    for name in suite_names()})
    _write(Path(out_dir) / "overview.md", overview_markdown(overview))
    if Path(out_dir).resolve() == reports_dir().resolve():  # the checkout's reports: its README too
        readme.write_block(reports_dir().parent / "README.md", readme_results(summaries, overview))
    names = set(suite_names())
    collections = sorted(d.name for d in Path(out_dir).iterdir()
                         if d.is_dir() and d.name not in names and (d / "index.html").is_file())
    return _write(Path(out_dir) / "index.html", build_index(summaries, overview, collections))


def _index_rows(results_dir: Path, summaries: Mapping[str, dict | None]) -> tuple[list[dict], list[dict]]:
    """The index's suite list and overview rows from each suite's summary (None: the suite has no report)."""
    listed, overview = [], []
    for name, summary in summaries.items():
        if summary is not None:
            listed.append({**summary, "href": f"{name}/index.html"})
        else:
            listed.append({"suite": name, "description": load_suite_def(name).description})
        # A report of predictions only keeps no overview rows: its paper rows then come with their predicted
        # speedups from results/profile/, as for a suite without a report.
        overview += (summary or {}).get("overview") or overview_rows(
            name, None, build_tables(load_suite_def(name), {}, load_paper_rows()), _suite_profiles(results_dir, name))
    return listed, overview


def readme_results_from_records(results_dir: Path | None = None) -> str:
    """The README's results block as the records of `results_dir` make it, every suite's report built afresh in
    memory (what `harness report` of every suite would write)."""
    results_dir = Path(results_dir) if results_dir else results_root()
    summaries = {name: json.loads(json.dumps(summary_from_results(name, results_dir))) for name in suite_names()}
    return readme_results(*_index_rows(results_dir, summaries))


def readme_results(summaries: Sequence[Mapping[str, Any]], overview: Sequence[Mapping[str, Any]]) -> str:
    """The README's results block from the reports' summaries."""
    answers = {str(s["suite"]): [str(line) for line in s.get("answer") or []] for s in summaries
               if isinstance(s.get("answer"), list)}
    return readme.results_block(overview, answers)
