"""The loader's stages timed one at a time, in clips/s: decoding, cache reads and resampling in this process, whole
training items in this process, and the DataLoader as one stream of batches over its workers (harness data bench)."""

from __future__ import annotations

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

# The timed stream runs until this many seconds have passed: a single pass over the clips of a fast path is too
# short for two calls to measure it alike.
MIN_TIMED_S = 3.0

# A DataLoader worker that delivers no batch for this long counts as hung: its path is recorded without a rate
# (and the error) instead of stalling the whole bench.
WORKER_TIMEOUT_S = 120


def clip_requests(shape: dict[str, Any], n: int, size: int, seed: int) -> list[ClipRequest]:
    """`n` requests for clips at the planned loader `shape`, of random videos among `size`, keyed by `seed`."""
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


def decode_rate(ds: VideoClipDataset, reqs: list[ClipRequest], skipped: dict[str, str]
                 ) -> tuple[float, list[tuple[torch.Tensor, ClipRequest]]]:
    """Clips/s of decoding alone (open, seek, decode the window, convert the picked frames), and the clips with
    their requests; unusable videos are replaced and noted in `skipped` (path: reason)."""
    clips, start = [], time.perf_counter()
    for req in reqs:
        frames = _window(ds, req, lambda path: VideoReader(path, ds.decode_threads), skipped)
        if frames is not None:
            clips.append((frames, req))
    return len(clips) / (time.perf_counter() - start), clips


def cache_read_rate(ds: VideoClipDataset, reqs: list[ClipRequest], skipped: dict[str, str]) -> float:
    """Clips/s of reading the same windows from the frame cache alone (the counterpart of `decode_rate`)."""
    assert ds.cache is not None
    start, n = time.perf_counter(), 0
    for req in reqs:
        frames = _window(ds, req, ds.cache.reader, skipped)
        if frames is not None:
            frames.contiguous()  # materialize: a strided pick is only a view until used
            n += 1
    return n / (time.perf_counter() - start)


def resample_rate(clips: list[tuple[torch.Tensor, ClipRequest]]) -> float:
    """Clips/s of grid resampling alone (random scale and crop, one bilinear resize, uint8)."""
    start = time.perf_counter()
    for clip, req in clips:
        rng = np.random.default_rng(list(req.key))
        box = train_crop_box(clip.shape[1], clip.shape[2], req.s, req.jitter_range, rng)
        resize_crop(clip, box, req.s, flip=True)
    return len(clips) / (time.perf_counter() - start)


def item_rate(ds: VideoClipDataset, reqs: list[ClipRequest], min_seconds: float = 0.0) -> float | None:
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


def measure_path(row: dict[str, Any], column: str, ds: VideoClipDataset, reqs: list[ClipRequest],
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

