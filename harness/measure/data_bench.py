"""`harness data bench`: loader throughput (clips/s) at every planned shape, split into decode, resample, workers.

Multigrid's small shapes come in large batches of the same clips, so they need several times the baseline's
decode throughput. This measures, per planned (t, s): PyAV decoding of random strided windows
alone, grid resampling of already decoded frames alone, and the whole loader (DataLoader + the short-cycle
sampler's requests) at several worker counts. Loader timings exclude a warm-up of two batches per worker and
stream batches as a training epoch does (one DataLoader iteration).
Given a decoded-frame cache (`harness data cache`), it also measures reading the same clips from the cache
and the whole loader on the cache, so the two can be compared shape by shape in one record. Given copies at
smaller short sides (`--low-res`), it measures the prepared copy read together with them as `data.low_res_copies`
reads them (`pyav_prepared_low_res`). On a prepared copy it also times whole training items in one process
(`prepared_item_clips_per_s`): against the loader's clips/s over its workers, how well they scale.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from harness.data.clip_dataset import VideoClipDataset, collate_clips
from harness.data.clip_plan import attempt_index
from harness.data.decode import VideoReader
from harness.data.errors import DataError, VideoError
from harness.data.sampler import ClipRequest
from harness.data.transforms import random_stride, resize_crop, train_clip_times, train_crop_box
from harness.data.worker_memory import loader_worker_init
from harness.provenance import provenance_of
from harness.schedule import Plan
from harness.schedule.trained import planned_loader_shapes
from harness.spec import SpecError


def _requests(shape: dict[str, Any], n: int, size: int, seed: int) -> list[ClipRequest]:
    rng = np.random.default_rng(seed)
    return [ClipRequest(int(rng.integers(size)), shape["t"], shape["s"], tuple(shape["stride_range"]),
                        tuple(shape["jitter_range"]), (seed, k)) for k in range(n)]


def _window(ds: VideoClipDataset, req: ClipRequest, open_reader: Callable[[Path], Any],
            skipped: dict[str, str]) -> torch.Tensor | None:
    """The frames of `req`'s random window, from the first of its attempts' videos that can be used: as the loader
    does, an unusable video is replaced by another drawn from the request's key, and noted in `skipped` (path:
    reason). None where every attempt fails (the loader's paths then record the dataset's error)."""
    for attempt in range(ds.max_retries + 1):
        path = ds.records[attempt_index(req, attempt, len(ds.records))].path
        rng = np.random.default_rng(list(req.key))
        try:
            with open_reader(path) as reader:
                stride = random_stride(req.stride_range, rng)
                times = train_clip_times(reader.info.duration, req.t, stride, ds.sampling.fps or reader.info.fps,
                                         rng)
                return reader.frames_at(times)
        except VideoError as err:
            skipped[str(path)] = str(err)
    return None


def _decode_rate(ds: VideoClipDataset, reqs: list[ClipRequest], skipped: dict[str, str]
                 ) -> tuple[float, list[tuple[torch.Tensor, ClipRequest]]]:
    """Clips/s of decoding alone (open, seek, decode the window, convert the picked frames), and the clips with
    their requests; unusable videos are replaced and noted in `skipped` (path: reason)."""
    clips, start = [], time.perf_counter()
    for req in reqs:
        frames = _window(ds, req, lambda path: VideoReader(path, ds.decode_threads), skipped)
        if frames is not None:
            clips.append((frames, req))
    return len(clips) / (time.perf_counter() - start), clips


def _cache_read_rate(ds: VideoClipDataset, reqs: list[ClipRequest], skipped: dict[str, str]) -> float:
    """Clips/s of reading the same windows from the frame cache alone (the counterpart of `_decode_rate`)."""
    assert ds.cache is not None
    start, n = time.perf_counter(), 0
    for req in reqs:
        frames = _window(ds, req, ds.cache.reader, skipped)
        if frames is not None:
            frames.contiguous()  # materialize: a strided pick is only a view until used
            n += 1
    return n / (time.perf_counter() - start)


def _resample_rate(clips: list[tuple[torch.Tensor, ClipRequest]]) -> float:
    """Clips/s of grid resampling alone (random scale and crop, one bilinear resize, uint8)."""
    start = time.perf_counter()
    for clip, req in clips:
        rng = np.random.default_rng(list(req.key))
        box = train_crop_box(clip.shape[1], clip.shape[2], req.s, req.jitter_range, rng)
        resize_crop(clip, box, req.s, flip=True)
    return len(clips) / (time.perf_counter() - start)


def _item_rate(ds: VideoClipDataset, reqs: list[ClipRequest], min_seconds: float = 0.0) -> float | None:
    """Clips/s of whole training items in this process: what one loader worker does per clip (open, decode, convert,
    crop, resize), beside which the loader's clips/s over its workers shows how well they scale. Passes over `reqs`
    repeat until `min_seconds` have passed (32 clips of a coarse shape take a fifth of a second). None where the
    dataset gives up (too many unusable videos in a row, as the loader would)."""
    n, start = 0, time.perf_counter()
    try:
        while True:
            for req in reqs:
                ds[req]
            n += len(reqs)
            if time.perf_counter() - start >= min_seconds:
                break
    except DataError:
        return None
    return n / (time.perf_counter() - start)


# The in-process rate of whole training items (prepared_item_clips_per_s) is timed for at least this long, or the
# bench's --min-seconds where that is shorter.
ITEM_TIMED_S = 1.0


class _Endless:
    """A batch sampler that cycles through `batches` without end (it runs in the main process): one DataLoader
    iteration then streams batches as a training epoch does, with no pass whose end idles the workers."""

    def __init__(self, batches: list[list[ClipRequest]]):
        if not batches:
            raise ValueError("a loader stream needs at least one batch of clips")
        self._batches = batches

    def __iter__(self):
        while True:
            yield from self._batches


# The in-process columns (decode, resample, cache read) time at most this many of a shape's clips: one process
# decodes them slowly, and the loader columns need many more clips to keep every worker busy.
IN_PROCESS_CLIPS = 32

# The timed stream runs until this many seconds have passed: a single pass over the clips of a fast path is too
# short for two calls to measure it alike.
MIN_TIMED_S = 3.0

# A DataLoader worker that delivers no batch for this long counts as hung: its path is recorded without a rate
# (and the error) instead of stalling the whole bench.
WORKER_TIMEOUT_S = 120


def _loader_rate(ds: VideoClipDataset, reqs: list[ClipRequest], batch: int, workers: int,
                 min_seconds: float = MIN_TIMED_S) -> float:
    """Clips/s of the whole loader with `workers` processes in its steady state: one stream of batches cycling
    through `reqs`, timed from the end of the warm-up (two batches per worker: worker start-up and the first
    round are not throughput) until `min_seconds` have passed and every batch of `reqs` was delivered once more.

    Why one stream: a training epoch is one DataLoader iteration, and the workers build batches ahead of it. Timed
    in separate passes of a few rounds each, the fastest shapes would lose each pass's end (workers idle until the
    slowest finishes, then a round trip to restart them)."""
    batches = [reqs[i:i + batch] for i in range(0, len(reqs), batch)]
    loader = torch.utils.data.DataLoader(ds, batch_sampler=_Endless(batches), num_workers=workers,
                                         collate_fn=collate_clips, timeout=WORKER_TIMEOUT_S if workers > 0 else 0,
                                         worker_init_fn=loader_worker_init)  # as the trainer's workers
    stream = iter(loader)
    try:
        for _ in range(2 * max(1, workers)):
            next(stream)
        n, count, start = 0, 0, time.perf_counter()
        while True:
            n += next(stream)["clips"].shape[0]
            count += 1
            if count >= len(batches) and time.perf_counter() - start >= min_seconds:
                break
        elapsed = time.perf_counter() - start
    finally:
        del stream, loader  # shuts the workers down
    return n / elapsed


def _measure_path(row: dict[str, Any], column: str, ds: VideoClipDataset, reqs: list[ClipRequest],
                  workers: tuple[int, ...], log: Callable[[str], None] | None = None) -> None:
    """Fill `row[column]`: one loader path's clips/s by worker count; a worker that times out (or dies) leaves
    that count without a rate and its error in `row["errors"]`, and the bench goes on."""
    rates: dict[str, float | None] = {}
    for w in workers:
        start = time.perf_counter()
        try:
            rates[str(w)] = _loader_rate(ds, reqs, row["loader_batch"], w, row.get("min_timed_s", MIN_TIMED_S))
        except RuntimeError as err:
            rates[str(w)] = None
            row.setdefault("errors", {})[f"{column} w={w}"] = str(err).splitlines()[0][:300]
        if log is not None:
            rate = rates[str(w)]
            log(f"{row['t']}x{row['s']} {column.removesuffix('_clips_per_s')} w={w}: "
                f"{'failed' if rate is None else f'{rate:.1f} clips/s'} ({time.perf_counter() - start:.0f} s)")
    row[column] = rates


def loader_batches(clips: int, per_gpu_batch: int, workers: int) -> int:
    """The batch size of a loader stream with `workers` processes over `clips` distinct clips: the trainer's batch
    (a worker's clips/s does not depend on how many clips it collates) where the clips make at least two batches
    per worker, else smaller."""
    return max(1, min(per_gpu_batch, clips // (2 * workers)))


def _bench_shape(shape: dict[str, Any], dataset: VideoClipDataset, clips: int, workers: tuple[int, ...], seed: int,
                 cached: VideoClipDataset | None, prepared: VideoClipDataset | None = None,
                 log: Callable[[str], None] | None = None, low_res: VideoClipDataset | None = None,
                 min_seconds: float = MIN_TIMED_S) -> dict[str, Any]:
    """One row of the record: decode, resample and CPU loader clips/s at `shape` (and from the cache and the
    prepared copy, if given). `log` gets a line per loader path and worker count as it is measured."""
    reqs = _requests(shape, clips, len(dataset.records), seed)
    alone = reqs[:IN_PROCESS_CLIPS]
    skipped: dict[str, str] = {}
    decode, decoded = _decode_rate(dataset, alone, skipped)
    batch = loader_batches(clips, shape["per_gpu_batch"], max(1, *workers))
    row = {**shape, "clips": len(reqs), "in_process_clips": len(alone), "loader_batch": batch,
           "min_timed_s": min_seconds,
           "decode_clips_per_s": decode, "resample_clips_per_s": _resample_rate(decoded)}
    _measure_path(row, "loader_clips_per_s", dataset, reqs, workers, log=log)
    if cached is not None:
        row["cache_read_clips_per_s"] = _cache_read_rate(cached, alone, skipped)
        _measure_path(row, "cache_loader_clips_per_s", cached, reqs, workers, log=log)
    if skipped:  # replaced by other videos, as the loader replaces them ('harness data check' names them all)
        row["skipped_videos"] = [{"path": path, "reason": reason} for path, reason in sorted(skipped.items())]
    if prepared is not None:
        row["prepared_item_clips_per_s"] = _item_rate(prepared, alone, min(min_seconds, ITEM_TIMED_S))
        _measure_path(row, "prepared_loader_clips_per_s", prepared, reqs, workers, log=log)
    if low_res is not None:
        _measure_path(row, "prepared_low_res_loader_clips_per_s", low_res, reqs, workers, log=log)
    return row


# Loader paths of the record's `paths[]`: (name, the per-shape column of loader clips/s by worker count).
PATHS = (("pyav", "loader_clips_per_s"), ("pyav_prepared", "prepared_loader_clips_per_s"),
         ("cache", "cache_loader_clips_per_s"), ("pyav_prepared_low_res", "prepared_low_res_loader_clips_per_s"))


def _video_bytes(dataset: VideoClipDataset) -> int:
    """Bytes of the dataset's videos, and of the copies at smaller short sides it reads (data.low_res_copies)."""
    paths = [r.path for r in dataset.records]
    if dataset.root is not None:
        root = dataset.root.resolve()
        paths += [c.root / p.resolve().relative_to(root) for c in dataset.low_res for p in paths]
    return sum(p.stat().st_size for p in paths if p.is_file())


def loader_paths(rows: list[dict[str, Any]], storage_ratio: dict[str, float | None]) -> list[dict[str, Any]]:
    """Per loader path measured: its storage against the source videos and, per shape, the best whole-loader
    clips/s over the worker counts (and which count gave it)."""
    paths = []
    for name, column in PATHS:
        if not any(column in r for r in rows):
            continue
        shapes = []
        for r in (r for r in rows if column in r):  # a path measured after the others may not have every shape yet
            measured = [(w, rate) for w, rate in r[column].items() if rate is not None]
            workers, rate = max(measured, key=lambda item: item[1]) if measured else (None, None)
            shapes.append({"t": r["t"], "s": r["s"], "clips_per_s": rate,
                           "workers": None if workers is None else int(workers)})
        paths.append({"name": name, "storage_ratio": storage_ratio.get(name), "shapes": shapes})
    return paths


def consumer_rates(profile: dict[str, Any], source: str = "the consumer record") -> dict[tuple[int, int], float]:
    """Clips/s the trainer consumes per (t, s), from a `harness profile` record's timed shapes (per-GPU batch /
    step time; the fastest layout where a shape comes with several BN layouts). SpecError naming `source` where a
    shape lacks its integer t, s and batch (a record edited by hand or of another tool)."""
    rates: dict[tuple[int, int], float] = {}
    for row in profile.get("shapes", []):
        if not isinstance(row, dict) or not all(type(row.get(k)) is int for k in ("t", "s", "batch")):
            raise SpecError(f"{source} is not a `harness profile --out` record: the shape {json.dumps(row)[:80]} "
                            f"has no integer 't', 's' and 'batch'. Give the file `harness profile --out` wrote.")
        ms = row.get("median_ms")
        if isinstance(ms, (int, float)) and ms > 0:
            key = (row["t"], row["s"])
            rates[key] = max(rates.get(key, 0.0), row["batch"] * 1e3 / ms)
    return rates


def bench_loader(plan: Plan, dataset: VideoClipDataset, clips: int = 16, workers: tuple[int, ...] = (0, 2),
                 seed: int = 0, cached: VideoClipDataset | None = None, prepared: VideoClipDataset | None = None,
                 low_res: VideoClipDataset | None = None,
                 consumer: dict[str, Any] | None = None, preset: str | None = None,
                 on_shape: Callable[[dict[str, Any]], None] | None = None,
                 log: Callable[[str], None] | None = None, min_seconds: float = MIN_TIMED_S) -> dict[str, Any]:
    """The benchmark record's fields (harness.records.DataBenchRecord): per planned shape, decode, resample and
    loader clips/s (by worker count).

    `cached`: the same dataset reading a frame cache; adds per shape `cache_read_clips_per_s` and
    `cache_loader_clips_per_s` (by worker count), and the record's `cache` (folder, short side, bytes).
    `prepared`: the same videos in a copy made by `harness data prepare`; adds `prepared_loader_clips_per_s`.
    `low_res`: that copy with copies at smaller short sides (data.low_res_copies); adds
    `prepared_low_res_loader_clips_per_s`, its storage counting every copy.
    `consumer`: a `harness profile` record of the same recipe on the training GPU; adds per shape
    `consumer_clips_per_s`, what the trainer consumes there. `paths[]` sums up every loader path measured.
    `on_shape`: called with the fields measured so far after each shape (`planned_shapes` says how many there
    are), so a bench cut off keeps what it measured. The costliest shape, the baseline's, is measured first.
    `log` gets a line per loader path as it is measured (a path that hangs shows where it stopped).
    `min_seconds`: each loader path's stream is timed for at least this long (per shape: `min_timed_s`).
    """
    shapes = planned_loader_shapes(plan)
    cache = None
    if cached is not None and cached.cache is not None:
        cache = {"folder": str(cached.cache.folder), "short_side": cached.cache.short_side,
                 "bytes": cached.cache.index["bytes"]}
    fixed = {"preset": preset, "dataset": {
        "name": plan.spec.data.name, "root": plan.spec.data.root, "videos": len(dataset.records)},
        "decode_threads": dataset.decode_threads, "intra_op_threads": 1, "cache": cache}
    # once: it reads every file's size
    ratios = _storage_ratios(dataset, prepared, cached if cache is not None else None, low_res)
    consumed = consumer_rates(consumer) if consumer is not None else {}
    rows: list[dict[str, Any]] = []

    def fields() -> dict[str, Any]:
        """The record's fields from the shapes measured so far (listed cheapest first, as the plan's shapes)."""
        done = sorted((dict(r) for r in rows), key=lambda e: (e["t"] * e["s"] ** 2, e["t"]))
        if consumer is not None:
            for row in done:
                row["consumer_clips_per_s"] = consumed.get((row["t"], row["s"]))
        return {**fixed, "paths": loader_paths(done, ratios), "shapes": done, "planned_shapes": len(shapes)}

    # One intra-op thread, as in DataLoader workers: the in-process columns are then per-process rates, and
    # they do not collapse when other processes hold the cores (OpenMP threads spin on a busy machine).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for shape in reversed(shapes):
            rows.append(_bench_shape(shape, dataset, clips, workers, seed, cached, prepared, log, low_res,
                                     min_seconds))
            if on_shape is not None:
                on_shape(fields())
    finally:
        torch.set_num_threads(threads)
    return fields()


def _storage_ratios(dataset: VideoClipDataset, prepared: VideoClipDataset | None, cached: VideoClipDataset | None,
                    low_res: VideoClipDataset | None = None) -> dict[str, float | None]:
    """Bytes on disk of each loader path over the source videos' bytes."""
    source = _video_bytes(dataset)
    ratios: dict[str, float | None] = {"pyav": 1.0}
    if prepared is not None:
        ratios["pyav_prepared"] = _video_bytes(prepared) / source if source else None
    if low_res is not None:
        ratios["pyav_prepared_low_res"] = _video_bytes(low_res) / source if source else None
    if cached is not None:  # the cache holds train and val, so its bytes are set against both splits' videos
        sizes = [v.get("size") for v in cached.cache.index.get("videos", {}).values()]
        ratios["cache"] = cached.cache.index["bytes"] / sum(sizes) if sizes and all(sizes) else None
    return ratios


def synthetic_preset(root: str | Path | None) -> str | None:
    """The synthetic preset whose frame size and length a dataset made by `harness data synth` has, if any."""
    from harness.data.synth.config import PRESETS

    try:
        made = json.loads((Path(root) / "synth.json").read_text(encoding="utf-8"))
    except (TypeError, OSError, ValueError):
        return None
    if not isinstance(made, dict):  # another tool's synth.json
        return None
    return next((name for name, cfg in PRESETS.items()
                 if list(cfg.size) == made.get("size") and cfg.frames == made.get("frames")), None)


def _rate(clips_per_s: float | None) -> str:
    return "failed" if clips_per_s is None else f"{clips_per_s:.1f}"


def format_bench(record: dict[str, Any]) -> str:
    """A table of a benchmark record (with the cache's columns, `cache` and `c w=N`, when it measured one)."""
    workers = list(record["shapes"][0]["loader_clips_per_s"]) if record["shapes"] else []
    cached = bool(record.get("cache"))
    head = f"{'t':>4} {'s':>4} {'batch':>6} {'decode':>9} {'resample':>9} " + " ".join(
        f"{'w=' + w:>9}" for w in workers)
    if cached:
        head += f" {'cache':>9} " + " ".join(f"{'c w=' + w:>9}" for w in workers)
    cores = provenance_of(record)["hardware"].get("cpu_count", "?")
    planned = record.get("planned_shapes") or len(record["shapes"])
    cut = f", {len(record['shapes'])} of {planned} shapes (cut off)" if planned > len(record["shapes"]) else ""
    lines = [f"loader clips/s on {cores} cores ({record['dataset']['videos']} videos{cut})"
             + (f"; cache {record['cache']['folder']}" if cached else ""), head]
    for r in record["shapes"]:
        line = (f"{r['t']:>4} {r['s']:>4} {r['per_gpu_batch']:>6} {r['decode_clips_per_s']:>9.1f} "
                f"{r['resample_clips_per_s']:>9.1f} "
                + " ".join(f"{_rate(r['loader_clips_per_s'][w]):>9}" for w in workers))
        if cached:
            line += f" {r['cache_read_clips_per_s']:>9.1f} " + " ".join(
                f"{_rate(r['cache_loader_clips_per_s'][w]):>9}" for w in workers)
        lines.append(line)
    shapes = [f"{r['t']}x{r['s']}" for r in record["shapes"]]
    if record.get("paths"):
        lines.append("best loader clips/s per path (" + ", ".join(shapes) + "):")
    for path in record.get("paths", []):
        ratio = path["storage_ratio"]
        rates = {(p["t"], p["s"]): _rate(p["clips_per_s"]) for p in path["shapes"]}
        lines.append(f"  {path['name']:<21} storage {'?' if ratio is None else f'{ratio:.2f}x'}: "
                     + ", ".join(rates.get((r["t"], r["s"]), "-") for r in record["shapes"]))
    for r in record["shapes"]:
        for name, error in r.get("errors", {}).items():
            lines.append(f"  {r['t']}x{r['s']} {name}: {error}")
    skipped = {s["path"]: s["reason"] for r in record["shapes"] for s in r.get("skipped_videos", [])}
    if skipped:
        lines.append(f"  {len(skipped)} unusable video(s) skipped, as the loader skips them ('harness data check' "
                     f"lists every one):")
        lines += [f"    {path}: {reason}" for path, reason in sorted(skipped.items())]
    if any(r.get("consumer_clips_per_s") for r in record["shapes"]):
        lines.append("  the trainer consumes: " + ", ".join(
            "?" if r.get("consumer_clips_per_s") is None else f"{r['consumer_clips_per_s']:.1f}"
            for r in record["shapes"]))
        lines += [f"  {line}" for line in keeping_up(record)]
    return "\n".join(lines)


def keeping_up(record: dict[str, Any]) -> list[str]:
    """Per loader path of a record with the trainer's consumption: at how many of the shapes it measured it
    delivers at least what the trainer consumes, and how much of it at the others (a shape it did not measure, or
    whose consumption is unknown, counts as neither)."""
    consumed = {(r["t"], r["s"]): r.get("consumer_clips_per_s") for r in record["shapes"]}
    lines = []
    for path in record.get("paths", []):
        pairs = [(f"{p['t']}x{p['s']}", p["clips_per_s"], consumed.get((p["t"], p["s"]))) for p in path["shapes"]]
        pairs = [(shape, rate, need) for shape, rate, need in pairs if rate is not None and need]
        if not pairs:
            continue
        # percent rounded down: 99.6% of what the trainer consumes is short, and reads so
        short = [f"{shape} at {int(100 * rate / need)}%" for shape, rate, need in pairs if rate < need]
        lines.append(f"{path['name']} keeps up at {len(pairs) - len(short)} of {len(pairs)} shapes"
                     + (f"; short: {', '.join(short)}" if short else ""))
    return lines
