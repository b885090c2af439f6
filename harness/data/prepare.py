"""`harness data prepare`: a copy of a dataset re-encoded for random access.

Why: a training clip is a short random window, and a decoder must start at the keyframe before it. Kinetics-like
video keeps x264's default keyframe interval (250 frames, over 8 s at 30 fps), so every clip decodes up to 250
frames it throws away; that, not the cores, caps a PyAV loader (results/data_bench/). Re-encoding once with a
keyframe every few frames, at the largest short side training uses, makes a clip's decode proportional to the clip.

The copy mirrors the source: every video the annotations list is re-encoded (H.264, all frames, each at its source
time (AVI: at the source's frame rate, without B-frames), upright, short side at most ``short_side``, a keyframe
every ``keyframe_interval`` frames, ``b_frames`` B-frames between references that no frame refers to, so the reader
can leave out those a clip does not show, x264 tuned for fast decoding unless ``tune`` is None) to the same relative
path.
With ``frame_step`` K > 1 it keeps every K-th frame at its source time and says so in the container's comment (with
the source's frame rate), so the reader reports the source's rate and frame count and strides keep counting source
frames: a recipe whose strides are multiples of K reads the very frames it would read from the source, decoding K
times fewer (other strides get the nearest kept frame). AVI, which stores no frame times, is refused for K > 1. The
annotation files are copied unchanged, so ``data.root=OUT`` reads the copy with the same ``data.name``. A file keeps
its name (and container, except that ``.webm``, which cannot hold H.264, holds it in Matroska, which the same
demuxer reads). Unusable videos are skipped and listed, never fatal.

Each video is written to a temporary name and renamed, and ``prepare.json`` records the settings first, so an
interrupted run resumes with the videos still missing; other settings in the same folder are refused.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from concurrent.futures import as_completed
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import numpy as np
import torch
from torchvision.transforms.v2 import functional as TF
from tqdm import tqdm

from harness.data.annotation_records import path_under
from harness.data.annotations import load_annotations
from harness.data.decode import VideoReader
from harness.data.errors import MissingAnnotations, VideoError
from harness.data.headers import read_header, write_headers
from harness.data.rgb import rotation_steps, to_rgb
from harness.data.video_info import frame_step_tag, require_whole
from harness.data.worker_pool import worker_pool
from harness.io import naming_the_file, read_json_object, require_writable_dir
from harness.records import PrepareRecord
from harness.spec import SpecError

MANIFEST = "prepare.json"
# The copy's time base: MPEG's 90 kHz clock, which holds every common frame rate's frame times exactly and keeps
# any other time within 6 microseconds.
COPY_TIME_BASE = Fraction(1, 90000)
FORMATS = {".mp4": "mp4", ".m4v": "mp4", ".mov": "mov", ".mkv": "matroska", ".webm": "matroska", ".avi": "avi"}


@dataclass(frozen=True)
class PrepareSettings:
    short_side: int | None  # None: keep the source's size
    keyframe_interval: int = 16
    crf: int = 23
    preset: str = "veryfast"
    # Keep every frame_step-th frame at its source time: a recipe whose strides are all multiples of k never asks
    # for the others (harness.cli_data.strides_off_the_step lists those that do), and each clip decodes k times
    # fewer frames.
    frame_step: int = 1
    # x264's fastdecode tuning (no CABAC, no deblocking filter, no weighted prediction): clips decode faster for a
    # few more bytes (`harness data bench --prepared` times both copies; prepare prints the storage ratio); None
    # encodes with x264's defaults.
    tune: str | None = "fastdecode"
    # B-frames between reference frames: a fixed number (no adaptive placement) and none of them a reference (no
    # B-pyramid), so that three of every four frames are frames the reader leaves out unless a clip shows them
    # (harness.data.decode): a clip at a stride above 1 decodes fewer frames, for a few more bytes. None: x264's
    # adaptive B-frames with its pyramid, fewer of which the reader can leave out.
    b_frames: int | None = 3


TUNES = ("fastdecode", None)
MAX_B_FRAMES = 16  # x264's limit


def encoded_size(h: int, w: int, short_side: int | None) -> tuple[int, int]:
    """(height, width) with the short side at most `short_side` (never upscaled), both even as 4:2:0 needs."""
    if short_side is not None and min(h, w) > short_side:
        scale = short_side / min(h, w)
        h, w = round(h * scale), round(w * scale)
    return max(2, h - h % 2), max(2, w - w % 2)


def reencode(src: Path, dst: Path, settings: PrepareSettings) -> int:
    """Re-encode `src` to `dst` (atomically); returns the frames written. Raises VideoFailed if `src` is unusable."""
    tmp = dst.with_name(f".{dst.name}.partial")
    dst.parent.mkdir(parents=True, exist_ok=True)
    frames = decoded = 0
    last = 0.0
    try:
        # VideoReader: its reasons for a file that is no video, and the header the truncation check compares with
        with VideoReader(src) as reader:
            stream, stated = reader._stream, reader._stream.frames
            fps = stream.average_rate or stream.guessed_rate or 30
            fmt = FORMATS.get(dst.suffix.lower(), "mp4")
            step = settings.frame_step
            with av.open(str(tmp), "w", format=fmt) as out:
                if step > 1:  # how the reader learns that the file's frames are every step-th of the source's
                    out.metadata["comment"] = frame_step_tag(step, Fraction(fps))
                gop = str(settings.keyframe_interval)
                # A fixed GOP (no scene-cut keyframes, no open GOP) so that every window starts near a keyframe.
                x264 = f"keyint={gop}:min-keyint={gop}:scenecut=0"
                # AVI stores frames in decoding order without their times, which B-frames reorder: readers can
                # only guess where each is shown (FFmpeg's guess puts H.264's out of order).
                timed = fmt != "avi"
                if not timed:
                    x264 += ":bframes=0"
                elif settings.b_frames is not None:
                    x264 += f":bframes={settings.b_frames}:b-adapt=0:b-pyramid=none"
                options = {"crf": str(settings.crf), "preset": settings.preset, "threads": "1",
                           "x264-params": x264}
                if settings.tune:
                    options["tune"] = settings.tune
                video = out.add_stream("libx264", rate=fps, options=options)
                video.pix_fmt = "yuv420p"
                if timed:  # each frame keeps its source time: variable-rate video (phones, GIFs) is not re-timed
                    video.codec_context.time_base = COPY_TIME_BASE
                turn = size = None
                pts = -1
                for index, (t, frame) in enumerate(reader.timed_frames()):
                    last = max(last, t)
                    decoded += 1
                    if index % step:
                        continue
                    array = to_rgb(frame)
                    if turn is None:  # the first frame's display matrix turns the whole video, as the reader does
                        turn = rotation_steps(getattr(frame, "rotation", 0) or 0)
                    if turn:
                        array = np.ascontiguousarray(np.rot90(array, k=turn, axes=(0, 1)))
                    if size is None:
                        size = encoded_size(*array.shape[:2], settings.short_side)
                        video.height, video.width = size
                    if array.shape[:2] != size:
                        x = torch.from_numpy(array).permute(2, 0, 1)
                        array = TF.resize(x, list(size), antialias=True).permute(1, 2, 0).contiguous().numpy()
                    picture = av.VideoFrame.from_ndarray(array, format="rgb24")
                    if timed:  # the source frame's time, kept frames or not
                        pts = max(pts + 1, round(t / COPY_TIME_BASE))
                        picture.pts, picture.time_base = pts, COPY_TIME_BASE
                    else:  # AVI's frames at their places, 1/fps apart: a dropped frame stays a null entry
                        pts = max(pts + 1, round(t * float(fps)))
                        picture.pts = pts
                    out.mux(video.encode(picture))
                    frames += 1
                if frames == 0:
                    raise VideoFailed("no frame could be decoded")
                out.mux(video.encode())
            # A cut source re-encodes into a copy that looks whole: skip it as harness data check names it.
            require_whole(src, reader.info, decoded, last, stated)
        os.replace(tmp, dst)
        return frames
    except VideoError as err:
        raise VideoFailed(str(err)) from None
    except (av.error.FFmpegError, ValueError, OSError) as err:
        raise VideoFailed(f"{type(err).__name__}: {err}") from None
    finally:
        tmp.unlink(missing_ok=True)


class VideoFailed(Exception):
    """A source video that could not be decoded or re-encoded (skipped and listed, never fatal)."""


def _job(args: tuple[str, str, PrepareSettings]) -> dict[str, Any]:
    src, dst, settings = args
    torch.set_num_threads(1)  # one process per core already
    try:
        frames = reencode(Path(src), Path(dst), settings)
    except VideoFailed as err:
        return {"path": src, "error": str(err)}
    return {"path": src, "frames": frames, "bytes": Path(dst).stat().st_size}


def _listed(name: str, root: Path, num_classes: int) -> tuple[dict[Path, None], list[Path]]:
    """The videos the splits list (in order, each once) and the annotation files that list them."""
    videos: dict[Path, None] = {}
    files: list[Path] = []
    for split in ("train", "val", "test"):
        try:
            ann = load_annotations(name, root, split, num_classes)
        except MissingAnnotations:
            if split == "train":
                raise
            continue
        files += [Path(f) for f in ann.files if Path(f) not in files]
        videos.update((r.path, None) for r in ann.records)
    return videos, files


def _inside(path: Path, root: Path, what: str) -> Path:
    relative = path_under(path, root)
    if relative is None:
        raise SpecError(f"{what} {path} lies outside data.root {root}: a prepared copy mirrors data.root, so it "
                        f"can only hold files under it.")
    return relative


def _start(out: Path, root: Path, settings: dict[str, Any]) -> None:
    """Check `out` and record the settings there before any video is written."""
    if out.resolve() == root.resolve() or root.resolve() in out.resolve().parents:
        raise SpecError(f"--out {out} is data.root or inside it: choose a folder outside {root}.")
    manifest = out / MANIFEST
    if manifest.is_file():
        try:
            old = read_json_object(manifest).get("settings")
        except (OSError, ValueError) as err:  # the copy's settings are unknown: neither resume it nor write over it
            raise SpecError(f"--out {out} holds a {MANIFEST} that cannot be read ({err}), so the settings of the "
                            f"copy there are unknown; use another folder, or delete {out} to prepare it "
                            f"anew.") from None
        if isinstance(old, dict):  # copies made before these settings existed: every frame, x264's defaults
            old = {"frame_step": 1, "tune": None, "b_frames": None, **old}
        if old != settings:
            raise SpecError(f"--out {out} holds a copy prepared with other settings ({old}); use another folder or "
                            f"delete it.")
    elif out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise SpecError(f"--out {out} exists and is not a prepared copy; choose an empty or new folder.")
    require_writable_dir(out, "--out")
    _write_json(manifest, {"settings": settings, "complete": False})


def _write_headers(out: Path, videos: list[Path], workers: int, progress: bool) -> None:
    """headers.json (harness.data.headers): every video's header as the loader reads it, so that a clip decoded
    from a smaller copy need not open this one."""
    parallel = workers > 1 and len(videos) > 1
    headers = []
    with (tqdm(total=len(videos), desc="headers", unit="video", disable=not progress) as bar,
          worker_pool(min(workers, len(videos))) if parallel else nullcontext() as pool):
        for header in pool.map(read_header, videos, chunksize=64) if parallel else map(read_header, videos):
            headers.append(header)
            bar.update()
    write_headers(out, {v.relative_to(out).as_posix(): h for v, h in zip(videos, headers)})


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.partial")
    with naming_the_file(path):
        tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def prepare_dataset(root: str | Path, out_dir: str | Path, *, name: str, num_classes: int = 400,
                    short_side: int | None = None, keyframe_interval: int = 16, crf: int = 23, frame_step: int = 1,
                    tune: str | None = "fastdecode", b_frames: int | None = 3, workers: int = 1,
                    progress: bool = True) -> dict[str, Any]:
    """Re-encode every video that dataset `name` under `root` lists into `out_dir` (see the module docstring).

    Returns the summary also written to ``prepare.json`` (harness.records.PrepareRecord): videos, prepared,
    reused (already there), bad [{path, error}], source_bytes and bytes (of the videos in the copy),
    storage_ratio, seconds, settings, and its provenance."""
    began = time.perf_counter()
    root, out = Path(root).expanduser(), Path(out_dir).expanduser()
    wrong = [f"{flag} {rule} (got {value})" for flag, rule, value, ok in (
        ("--keyframe-interval", "must be >= 1", keyframe_interval, keyframe_interval >= 1),
        ("--short-side", "must be >= 2", short_side, short_side is None or short_side >= 2),
        ("--crf", "must be in 0..51", crf, 0 <= crf <= 51),
        ("--frame-step", "must be >= 1", frame_step, frame_step >= 1)) if not ok]
    if wrong:
        raise SpecError("; ".join(wrong) + ".")
    if tune not in TUNES:
        raise SpecError(f"--tune must be one of {', '.join(t or 'none' for t in TUNES)} (got {tune}).")
    if b_frames is not None and not 0 <= b_frames <= MAX_B_FRAMES:
        raise SpecError(f"--b-frames must be in 0..{MAX_B_FRAMES} or 'adaptive' (got {b_frames}).")
    settings = PrepareSettings(short_side, keyframe_interval, crf, frame_step=frame_step, tune=tune,
                               b_frames=b_frames)
    record = {"dataset": name, "root": str(root), **asdict(settings)}
    videos, files = _listed(name, root, num_classes)
    if frame_step > 1:
        timeless = next((src for src in videos if FORMATS.get(src.suffix.lower()) == "avi"), None)
        if timeless is not None:  # AVI plays frames at a fixed rate: a kept frame cannot keep its source time
            raise SpecError(f"--frame-step {frame_step} keeps each kept frame at its source time, which AVI cannot "
                            f"store ({timeless}); use --frame-step 1 for this dataset.")
    targets = {src: out / _inside(src, root, "video") for src in videos}
    copies = {f: out / _inside(f, root, "annotation file") for f in files}
    _start(out, root, record)
    for src, dst in copies.items():  # unchanged: the copy's videos keep their relative paths
        dst.parent.mkdir(parents=True, exist_ok=True)
        tmp = dst.with_name(f".{dst.name}.partial")
        with naming_the_file(dst):
            shutil.copyfile(src, tmp)
        os.replace(tmp, dst)
    done = [src for src, dst in targets.items() if dst.is_file()]
    todo = [(str(src), str(dst), settings) for src, dst in targets.items() if not dst.is_file()]
    results = []
    with tqdm(total=len(targets), initial=len(done), desc="prepare", unit="video", disable=not progress) as bar:
        if workers > 1 and len(todo) > 1:
            with worker_pool(min(workers, len(todo))) as pool:
                for future in as_completed([pool.submit(_job, job) for job in todo]):
                    results.append(future.result())
                    bar.update()
        else:
            for job in todo:
                results.append(_job(job))
                bar.update()
    bad = [{"path": r["path"], "error": r["error"]} for r in results if "error" in r]
    kept = [src for src, dst in targets.items() if dst.is_file()]
    _write_headers(out, [targets[src] for src in kept], workers, progress)
    source_bytes = sum(src.stat().st_size for src in kept)
    out_bytes = sum(targets[src].stat().st_size for src in kept)
    summary = PrepareRecord(settings=record, complete=True, videos=len(targets), prepared=len(results) - len(bad),
                            reused=len(done), bad=bad, source_bytes=source_bytes, bytes=out_bytes,
                            storage_ratio=out_bytes / source_bytes if source_bytes else None,
                            annotation_files=[str(p) for p in copies.values()],
                            seconds=time.perf_counter() - began).to_dict()
    _write_json(out / MANIFEST, summary)
    return summary
