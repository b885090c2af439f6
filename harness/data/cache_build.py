"""Building a decoded-frame cache: decode every video of a small dataset once into uint8 frames on disk.

Why: multigrid trains on larger batches of smaller clips, so its loader must deliver several times the
baseline's clips/s, and PyAV decoding of random windows caps a CPU process at a few clips/s (results/data_bench/).
For datasets that fit on local disk (the ``proxy`` synthetic preset: 10k videos × 64 frames × 128×170 RGB: 42 GB)
decoding once and memory-mapping the frames removes that cap: a clip is then a gather of ``t`` frames from the
page cache (:mod:`harness.data.cache_read`), and the only per-clip work left is grid resampling. The folder
layout is in :mod:`harness.data.cache_format`.

Frames are stored exactly as :class:`~harness.data.decode.VideoReader` returns them (RGB, rotation applied), so a
cache built without ``short_side`` serves bit-identical clips. With ``short_side`` frames are downscaled once
(antialiased) so the short side is at most that; the crop geometry is relative to the short side
(transforms.train_crop_box), so augmentation stays the same, but a short side below the jitter maximum
(data.jitter[1]) upsamples the baseline's crops: keep ``short_side >= data.jitter[1]``.

Building is atomic and resumable: the cache is written into a sibling folder ``.NAME.building`` in chunks of
videos (each chunk's files renamed into place, then a marker written), an interrupted build resumes from the
finished chunks (or moves the cache it had finished into place), and the finished folder replaces ``DIR`` by a
rename.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import os
import shutil
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, wait
from pathlib import Path
from typing import Any

import av
import numpy as np
import torch
from torchvision.transforms.v2 import functional as TF
from tqdm import tqdm

from harness.data.annotations import load_annotations
from harness.data.cache_format import CACHE_FORMAT, CACHE_VERSION, INDEX, TIMES, cache_key, source_size
from harness.data.decode import VideoReader
from harness.data.errors import MissingAnnotations, VideoError
from harness.data.rgb import rotation_steps, to_rgb
from harness.data.video_info import require_whole
from harness.data.worker_pool import worker_pool
from harness.io import naming_the_file
from harness.spec import SpecError


def _stored_size(h: int, w: int, short_side: int | None) -> tuple[int, int]:
    """(height, width) with the short side scaled down to `short_side`, aspect ratio kept; never upscales
    (the loader resizes every crop anyway, so larger frames would only cost disk)."""
    short = min(h, w)
    if short_side is None or short <= short_side:
        return h, w
    scale = short_side / short
    return (short_side, max(1, round(w * scale))) if h <= w else (max(1, round(h * scale)), short_side)


def _decode_into(path: Path, out: Any, short_side: int | None) -> tuple[dict[str, Any], list[float]]:
    """Decode every frame of `path` and append it (upright RGB, resized) to the open file `out`.

    Returns the index entry (without shard/offset) and the frame times. Raises VideoError for an unusable
    video with the reasons scan_video gives; the caller truncates what was written.
    """
    try:
        reader = VideoReader(path)
    except OSError as err:  # e.g. a folder where the annotations name a file: a bad video, not a failed build
        raise VideoError("not_a_video", f"{path} cannot be read as a file ({err})") from None
    # The private members are used as scan_video uses them: one sequential pass over the whole stream.
    with reader:
        info, stated = reader.info, reader._stream.frames
        times: list[float] = []
        count, last, k, size, stored = 0, 0.0, 0, None, None
        try:
            # The same times as VideoReader.frames_at gives the frames, so it picks the same frames.
            for t, frame in reader.timed_frames():
                if count == 0:
                    k = rotation_steps(getattr(frame, "rotation", 0) or 0)
                array = to_rgb(frame)
                if k:  # as VideoReader.frames_at: the first frame's display matrix turns the whole video
                    array = np.rot90(array, k=k, axes=(0, 1))
                if size is None:
                    size = array.shape[:2]
                    stored = _stored_size(*size, short_side)
                elif array.shape[:2] != size:  # VideoReader could not stack such frames into one clip either
                    raise VideoError("undecodable", f"{path}: frame size changes from {size} to "
                                                    f"{array.shape[:2]} at frame {count}")
                if stored != size:
                    x = torch.from_numpy(np.ascontiguousarray(array)).permute(2, 0, 1)
                    array = TF.resize(x, list(stored), antialias=True).permute(1, 2, 0).numpy()
                out.write(np.ascontiguousarray(array).data)
                times.append(t)
                count += 1
                last = max(last, t)
        except (av.error.FFmpegError, ValueError) as err:  # ValueError: a pixel format PyAV cannot convert
            raise VideoError("undecodable", f"{path}: decoding failed after {count} frame(s) ({err})") from None
    if count == 0 or size is None or stored is None:
        raise VideoError("undecodable", f"{path}: no frame could be decoded")
    # The same rule as scan_video (what `harness data check` calls truncated is bad here too).
    require_whole(path, info, count, last, stated)
    entry = {"stored_frames": count, "height": stored[0], "width": stored[1], "source_height": size[0],
             "source_width": size[1], "fps": info.fps, "duration": info.duration, "frames": info.frames,
             "rotation": 90 * k, "codec": info.codec, "container": info.container}
    return entry, times


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f"{path.name}.partial")
    with naming_the_file(path):
        tmp.write_bytes(data)
    os.replace(tmp, path)


def _build_chunk(job: tuple[str, int, list[tuple[str, str]], int | None]) -> dict[str, Any]:
    """Decode one chunk of videos into `frames-K.u8` + `times-K.npy` in the staging folder; write the marker
    `chunk-K.json` last, so a chunk whose marker exists is complete."""
    staging, k, videos, short_side = job
    torch.set_num_threads(1)  # one process per core already; intra-op threads would oversubscribe
    folder = Path(staging)
    shard, times_file = folder / f"frames-{k:05d}.u8", folder / f"times-{k:05d}.npy"
    entries: dict[str, dict[str, Any]] = {}
    bad: dict[str, dict[str, Any]] = {}
    times: list[float] = []
    with naming_the_file(shard), open(shard.with_name(shard.name + ".partial"), "wb") as out:
        for key, path in videos:
            offset = out.tell()
            try:
                entry, stamps = _decode_into(Path(path), out, short_side)
            except VideoError as err:
                out.seek(offset)
                out.truncate()
                message = str(err).removeprefix(f"{err.kind}: ")
                bad[key] = {"reason": err.kind, "message": message, "size": source_size(Path(path))}
                continue
            entries[key] = {"shard": shard.name, "offset": offset, "times": len(times), **entry,
                            "size": source_size(Path(path))}
            times += stamps
        nbytes = out.tell()
    os.replace(shard.with_name(shard.name + ".partial"), shard)
    with naming_the_file(times_file), open(times_file.with_name(times_file.name + ".partial"), "wb") as f:
        np.save(f, np.asarray(times, dtype=np.float64))
    os.replace(times_file.with_name(times_file.name + ".partial"), times_file)
    marker = {"chunk": k, "keys": [key for key, _ in videos], "videos": entries, "bad": bad, "bytes": nbytes,
              "frames": len(times)}
    _atomic_write(folder / f"chunk-{k:05d}.json", json.dumps(marker).encode())
    return marker


def _dataset_videos(name: str, root: Path, num_classes: int,
                    splits: Sequence[str]) -> tuple[list[tuple[str, str]], dict[str, int]]:
    """(key, path) of every video the splits list (each once, in order) and the number per split."""
    videos: dict[str, str] = {}
    counts: dict[str, int] = {}
    for split in splits:
        try:
            ann = load_annotations(name, root, split, num_classes)
        except MissingAnnotations:
            if split == "train":
                raise
            continue  # no val split: cache what there is (as `harness data check` does)
        counts[split] = len(ann)
        for r in ann.records:
            videos.setdefault(cache_key(r.path, root), str(r.path))
    return list(videos.items()), counts


def _clear_target(out: Path) -> None:
    """Refuse to replace a folder that is neither empty nor a frame cache (it may hold someone's data)."""
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / INDEX).is_file())):
        raise SpecError(f"--out {out} exists and is not a frame cache; choose an empty or new folder.")


def build_frame_cache(root: str | Path, out_dir: str | Path, *, name: str = "synthetic", num_classes: int = 400,
                      short_side: int | None = None, workers: int | None = None, progress: bool = True,
                      splits: Sequence[str] = ("train", "val"), chunk_videos: int | None = None,
                      force: bool = False) -> dict[str, Any]:
    """Decode every video of `splits` of dataset `name` (data.name) under `root` (data.root) into a frame cache
    at `out_dir` (then data.cache).

    `num_classes` (data.num_classes) bounds labels where the layout does not name its classes. `short_side`
    downscales frames so their short side is at most that (None: as decoded; keep it at least data.jitter[1]).
    `workers` processes decode in parallel (None: all cores). Unusable videos are recorded in the index as bad,
    with the VideoError kind as reason. A cache at `out_dir` built from the same videos (paths and sizes) with
    the same settings is kept as it is (`reused`), unless `force`. Returns a summary: out, videos, cached, bad
    [{path, reason, message, size}], bytes, frames, seconds, resumed_chunks, reused, splits.
    """
    began = time.perf_counter()
    root, out = Path(root).expanduser(), Path(out_dir).expanduser()
    videos, counts, chunks, staging, settings = _prepare_build(name, root, out, num_classes, splits, short_side,
                                                               chunk_videos)
    if not force and _current(out, settings):
        shutil.rmtree(staging)
        _drop_old(out)  # a swap stopped after the new cache was in place
        index = json.loads((out / INDEX).read_text(encoding="utf-8"))
        return _summary(out, index, len(videos), counts, time.perf_counter() - began, 0, reused=True)
    if _current(staging, settings):  # assembled by a build stopped before it moved the cache into place
        index = json.loads((staging / INDEX).read_text(encoding="utf-8"))
        _tidy(staging, index)
        _swap_in(staging, out)
        return _summary(out, index, len(videos), counts, time.perf_counter() - began, len(chunks), reused=False)
    markers: dict[int, dict[str, Any]] = {}
    for k, chunk in enumerate(chunks):
        marker = _finished_chunk(staging, k, chunk)
        if marker is not None:
            markers[k] = marker
    resumed = len(markers)
    todo = [(str(staging), k, chunk, short_side) for k, chunk in enumerate(chunks) if k not in markers]
    bar = tqdm(total=len(videos), initial=sum(len(chunks[k]) for k in markers), desc="frame cache", unit="video",
               disable=not progress)
    workers = max(1, workers or os.cpu_count() or 1)
    if workers > 1 and len(todo) > 1:
        with worker_pool(min(workers, len(todo))) as pool:
            pending = {pool.submit(_build_chunk, job) for job in todo}
            try:
                while pending:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for future in done:
                        marker = future.result()
                        markers[marker["chunk"]] = marker
                        bar.update(len(marker["keys"]))
                    if pending:
                        _check_space(staging, markers, len(videos))
            except BaseException:  # disk full, no space left, Ctrl-C: stop now; finished chunks stay for a resume
                for future in pending:
                    future.cancel()
                raise
    else:
        for job in todo:
            marker = _build_chunk(job)
            markers[marker["chunk"]] = marker
            bar.update(len(marker["keys"]))
            _check_space(staging, markers, len(videos))
    bar.close()
    index = _assemble(staging, markers, len(chunks), name, root, num_classes, counts, settings,
                      time.perf_counter() - began)
    _swap_in(staging, out)
    return _summary(out, index, len(videos), counts, time.perf_counter() - began, resumed, reused=False)


def _finished_chunk(staging: Path, k: int, chunk: list[tuple[str, str]]) -> dict[str, Any] | None:
    """The marker of chunk `k` where an earlier build finished it with these videos and its files are whole (the
    marker is written last, but a crash before the data reached the disk can leave it beside a short file); None
    where the chunk must be decoded (again)."""
    try:
        marker = json.loads((staging / f"chunk-{k:05d}.json").read_text(encoding="utf-8"))
        if not (isinstance(marker, dict) and marker.get("keys") == [key for key, _ in chunk]):
            return None
        shard = staging / f"frames-{k:05d}.u8"
        size = shard.stat().st_size if marker["bytes"] or shard.exists() else 0  # _assemble drops empty shards
        stamps = np.load(staging / f"times-{k:05d}.npy")
        whole = size == marker["bytes"] and stamps.shape == (marker["frames"],)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return marker if whole else None


def _summary(out: Path, index: dict[str, Any], videos: int, counts: dict[str, int], seconds: float, resumed: int,
             reused: bool) -> dict[str, Any]:
    return {"out": str(out), "videos": videos, "cached": len(index["videos"]),
            "bad": [{"path": key, **v} for key, v in index["bad"].items()], "bytes": index["bytes"],
            "frames": index["frames"], "seconds": seconds, "resumed_chunks": resumed, "reused": reused,
            "splits": counts}


def _current(out: Path, settings: dict[str, Any]) -> bool:
    """Whether `out` holds a finished cache of exactly these videos and settings (nothing to rebuild)."""
    try:
        index = json.loads((out / INDEX).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not (isinstance(index, dict) and all(isinstance(index.get(key), dict) for key in ("videos", "bad"))
            and isinstance(index.get("shards", []), list)):
        return False  # damaged or edited: built again
    shards = index.get("shards", [])
    if index.get("build") != settings or not all(isinstance(s, dict) for s in shards):
        return False
    # Opened, not only there: a file the file system refuses (permissions) gets the cache built again.
    return all(_opens(out / name) for name in [TIMES, *(str(s.get("file")) for s in shards)])


def _opens(path: Path) -> bool:
    try:
        with open(path, "rb"):
            return True
    except OSError:  # missing, a folder, or refused
        return False


def _prepare_build(name: str, root: Path, out: Path, num_classes: int, splits: Sequence[str],
                   short_side: int | None, chunk_videos: int | None
                   ) -> tuple[list[tuple[str, str]], dict[str, int], list[list[tuple[str, str]]], Path, dict[str, Any]]:
    """List the videos, cut them into chunks and ready the staging folder (kept if it is an interrupted build of
    the same videos and settings, emptied otherwise). Returns (videos, counts per split, chunks, staging, the
    build settings)."""
    if short_side is not None and short_side < 1:
        raise SpecError(f"--short-side must be a positive number of pixels, got {short_side}")
    _clear_target(out)
    videos, counts = _dataset_videos(name, root, num_classes, splits)
    # Chunks depend on the video count only (not on `workers`), so a resumed build can reuse finished ones;
    # about 64 of them keep all workers busy to the end without thousands of shard files.
    size = chunk_videos or min(256, max(16, math.ceil(len(videos) / 64)))
    chunks = [videos[i:i + size] for i in range(0, len(videos), size)]
    staging = out.with_name(f".{out.name}.building")
    settings = {"format": CACHE_FORMAT, "version": CACHE_VERSION, "name": name, "short_side": short_side,
                "chunk_videos": size, "videos": hashlib.sha256(json.dumps(
                    [(k, p, source_size(Path(p))) for k, p in videos]).encode()).hexdigest()}
    if staging.exists():
        try:
            same = json.loads((staging / "build.json").read_text(encoding="utf-8")) == settings
        except (OSError, ValueError):
            same = _current(staging, settings)  # assembled (build.json is removed last) but not moved into place
        if not same:  # another dataset or other settings: nothing there can be reused
            shutil.rmtree(staging)
    try:
        staging.mkdir(parents=True, exist_ok=True)
    except OSError as err:  # e.g. --out below a file
        raise SpecError(f"--out {out} cannot be created ({err.strerror or err}); choose a folder you can create "
                        f"and write.") from None
    _atomic_write(staging / "build.json", json.dumps(settings).encode())
    return videos, counts, chunks, staging, settings


def _check_space(staging: Path, markers: dict[int, dict[str, Any]], total: int) -> None:
    """Stop early (resumable) when the bytes per video so far say the rest will not fit on the disk."""
    done = sum(len(m["keys"]) for m in markers.values())
    written = sum(m["bytes"] for m in markers.values())
    if not done or done >= total:
        return
    need = written / done * (total - done)
    free = shutil.disk_usage(staging).free
    if need > free:
        raise SpecError(f"the frame cache needs about {need / 2**30:.1f} GiB more but {staging.parent} has "
                        f"{free / 2**30:.1f} GiB free: free space (the build resumes where it stopped), use "
                        f"--short-side to store smaller frames, or choose another --out disk.")


def _assemble(staging: Path, markers: dict[int, dict[str, Any]], n_chunks: int, name: str, root: Path,
              num_classes: int, counts: dict[str, int], settings: dict[str, Any], seconds: float) -> dict[str, Any]:
    """Merge the chunk markers into index.json and the chunk times into times.npy (in the staging folder)."""
    videos: dict[str, dict[str, Any]] = {}
    bad: dict[str, dict[str, Any]] = {}
    parts, base, shards, nbytes = [], 0, [], 0
    for k in range(n_chunks):
        m = markers[k]
        stamps = np.load(staging / f"times-{k:05d}.npy")
        parts.append(stamps)
        for key, entry in m["videos"].items():
            videos[key] = {**entry, "times": entry["times"] + base}
        bad.update(m["bad"])
        base += len(stamps)
        shard = staging / f"frames-{k:05d}.u8"
        if m["bytes"]:
            shards.append({"file": shard.name, "bytes": m["bytes"]})
            nbytes += m["bytes"]
        else:
            shard.unlink(missing_ok=True)  # a chunk of bad videos only: numpy cannot map an empty file
    times = np.concatenate(parts) if parts else np.zeros(0)
    with open(staging / f"{TIMES}.partial", "wb") as f:
        np.save(f, times)
    os.replace(staging / f"{TIMES}.partial", staging / TIMES)
    index = {"format": CACHE_FORMAT, "version": CACHE_VERSION,
             "dataset": {"name": name, "root": str(root.resolve()), "num_classes": num_classes, "splits": counts},
             "short_side": settings["short_side"], "build": settings, "bytes": nbytes, "frames": int(len(times)),
             "shards": shards,
             "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
             "build_seconds": round(seconds, 1), "videos": videos, "bad": bad}
    _atomic_write(staging / INDEX, json.dumps(index).encode())
    _tidy(staging, index)
    return index


def _tidy(staging: Path, index: dict[str, Any]) -> None:
    """Delete from the finished staging folder every file the cache does not hold: chunk markers and times, the
    build settings, empty shards and .partial files of chunks an interrupted build had begun. A build stopped in
    here is finished by the next one, which finds the index."""
    keep = {INDEX, TIMES, *(str(shard["file"]) for shard in index["shards"])}
    for path in staging.iterdir():
        if path.name not in keep:
            path.unlink()


def _swap_in(staging: Path, out: Path) -> None:
    """Replace `out` by the finished staging folder (a rename; an old cache is moved aside, then deleted)."""
    old = out.with_name(f".{out.name}.old")
    if old.exists():
        shutil.rmtree(old)
    if out.exists():
        out.rename(old)
    staging.rename(out)
    _drop_old(out)


def _drop_old(out: Path) -> None:
    """Delete the earlier cache that _swap_in moved aside (once the new one is in place)."""
    old = out.with_name(f".{out.name}.old")
    if old.exists():
        shutil.rmtree(old)
