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
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from harness.data.clip_dataset import VideoClipDataset
from harness.measure.data_bench_rates import (
    MIN_TIMED_S,
    cache_read_rate,
    clip_requests,
    decode_rate,
    item_rate,
    measure_path,
    resample_rate,
)
from harness.measure.data_bench_table import format_bench, keeping_up
from harness.schedule import Plan
from harness.schedule.trained import planned_loader_shapes
from harness.spec import SpecError

# With the default seconds per path and the record's table, which `harness data bench` imports from here too.
__all__ = [
    "IN_PROCESS_CLIPS", "ITEM_TIMED_S", "MIN_TIMED_S", "PATHS", "bench_loader", "consumer_rates", "format_bench",
    "keeping_up", "loader_batches", "loader_paths", "synthetic_preset",
]

# The in-process rate of whole training items (prepared_item_clips_per_s) is timed for at least this long, or the
# bench's --min-seconds where that is shorter.
ITEM_TIMED_S = 1.0

# The in-process columns (decode, resample, cache read) time at most this many of a shape's clips: one process
# decodes them slowly, and the loader columns need many more clips to keep every worker busy.
IN_PROCESS_CLIPS = 32


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
    reqs = clip_requests(shape, clips, len(dataset.records), seed)
    alone = reqs[:IN_PROCESS_CLIPS]
    skipped: dict[str, str] = {}
    decode, decoded = decode_rate(dataset, alone, skipped)
    batch = loader_batches(clips, shape["per_gpu_batch"], max(1, *workers))
    row = {**shape, "clips": len(reqs), "in_process_clips": len(alone), "loader_batch": batch,
           "min_timed_s": min_seconds,
           "decode_clips_per_s": decode, "resample_clips_per_s": resample_rate(decoded)}
    measure_path(row, "loader_clips_per_s", dataset, reqs, workers, log=log)
    if cached is not None:
        row["cache_read_clips_per_s"] = cache_read_rate(cached, alone, skipped)
        measure_path(row, "cache_loader_clips_per_s", cached, reqs, workers, log=log)
    if skipped:  # replaced by other videos, as the loader replaces them ('harness data check' names them all)
        row["skipped_videos"] = [{"path": path, "reason": reason} for path, reason in sorted(skipped.items())]
    if prepared is not None:
        row["prepared_item_clips_per_s"] = item_rate(prepared, alone, min(min_seconds, ITEM_TIMED_S))
        measure_path(row, "prepared_loader_clips_per_s", prepared, reqs, workers, log=log)
    if low_res is not None:
        measure_path(row, "prepared_low_res_loader_clips_per_s", low_res, reqs, workers, log=log)
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
