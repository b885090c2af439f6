"""The tables of the measurement records beside a suite's runs: predicted speedups and sub-batch BN's cost
(`harness profile --suite`), data-parallel scaling (`harness scaling`), and step times, kernels and compile cost
(`harness throughput`). Pure: records in, Table out; the records come read by harness.records."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.measure.kernels import short_name
from harness.measure.throughput_modes import as_it_is, row_setting
from harness.provenance import provenance_of
from harness.records import KERNEL_GROUPS
from harness.report.data_wait_table import layout_text
from harness.report.table_model import Column, Table


def profile_table(profile: Mapping[str, Any]) -> Table:
    """The predicted paper-scale speedup of every run (a `harness profile --suite` record) beside the paper's."""
    prov = provenance_of(profile)
    device = prov["hardware"].get("gpu") or profile.get("device", "?")
    rows = tuple({
        "run": r["variant"], "paper_rows": "; ".join(f"{p['table']}: {p['row']}" for p in r.get("paper", [])),
        "iteration_ratio": r["iteration_ratio"], "hours": r["predicted_gpu_hours"],
        "baseline_hours": r["baseline_predicted_gpu_hours"], "speedup": r["predicted_speedup"],
        "paper_speedup": _float_or_none(next((p.get("speedup") for p in r.get("paper", [])), None)),
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
