"""What a prepared copy's video headers say, read once by `harness data prepare` and kept beside the copy.

Why: a clip's plan needs its video's length, rate and frame size (harness.data.clip_plan), which a loader worker
otherwise learns by opening the video. Where a smaller copy (data.low_res_copies) decodes the clip, that opening
of the full copy was all the full copy was used for, a sizeable share of what a coarse-shape clip costs a worker.
``headers.json`` holds each video's geometry as the reader gives it (so a plan from it equals a plan from the
header) and the file's size in bytes; the loader trusts an entry only while the file still has that size, and
opens the video where the file is missing, changed, or not listed.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from harness.data.annotation_records import path_under
from harness.data.clip_plan import VideoGeometry, geometry
from harness.data.decode import VideoReader
from harness.data.errors import VideoError
from harness.io import write_text_atomic

HEADERS = "headers.json"
FIELDS = (*(f.name for f in dataclasses.fields(VideoGeometry)), "bytes")


def read_header(path: str | Path) -> list[float] | None:
    """The FIELDS of the video at `path`: its geometry as the loader takes it from the header, and its size in
    bytes; None where it cannot be opened."""
    try:
        with VideoReader(path) as reader:
            video = geometry(reader.info)
        return [*dataclasses.astuple(video), Path(path).stat().st_size]
    except (VideoError, OSError):
        return None


def write_headers(out: Path, headers: dict[str, list[float] | None]) -> None:
    """``headers.json`` in the copy `out`: FIELDS per video path relative to `out` (atomic, compact: one entry per
    video of a dataset; unreadable ones left out)."""
    data = {"fields": list(FIELDS), "videos": {k: v for k, v in sorted(headers.items()) if v is not None}}
    write_text_atomic(out / HEADERS, json.dumps(data, separators=(",", ":")) + "\n")


class KnownHeaders:
    """The geometry of each listed video of a copy by record index, from its ``headers.json``; arrays, so that
    DataLoader workers forked from the process share one copy."""

    def __init__(self, paths: Sequence[Path], values: np.ndarray, known: np.ndarray):
        self._paths, self._values, self._known = paths, values, known

    def geometry(self, index: int) -> VideoGeometry | None:
        """Video `index`'s geometry, or None where the file is not listed or no longer has the listed size."""
        if not self._known[index]:
            return None
        duration, fps, frames, height, width, step, size = self._values[index].tolist()
        try:
            if os.stat(self._paths[index]).st_size != int(size):
                return None
        except OSError:
            return None
        return VideoGeometry(duration, fps, int(frames), int(height), int(width), int(step))


def load_headers(root: str | Path, paths: Iterable[Path]) -> KnownHeaders | None:
    """The copy at `root`'s known headers for the videos at `paths` (in record order), or None where it has no
    readable ``headers.json`` (a copy made before it existed, or not a prepared copy at all)."""
    root = Path(root)
    try:
        data = json.loads((root / HEADERS).read_text(encoding="utf-8"))
        if not isinstance(data.get("fields"), list) or not isinstance(data.get("videos"), dict):
            return None  # not the object write_headers writes (edited, or another tool's file)
        columns = [data["fields"].index(f) for f in FIELDS]
        videos = data["videos"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    paths = list(paths)
    values = np.zeros((len(paths), len(FIELDS)), dtype=np.float64)
    known = np.zeros(len(paths), dtype=bool)
    for i, path in enumerate(paths):
        entry = videos.get(_relative(path, root))
        if isinstance(entry, list) and len(entry) >= len(data["fields"]):
            try:
                values[i] = [float(entry[c]) for c in columns]
            except (TypeError, ValueError):
                continue
            if not np.isfinite(values[i]).all():  # JSON's NaN or Infinity: no geometry
                continue
            known[i] = True
    return KnownHeaders(paths, values, known)


def _relative(path: Path, root: Path) -> str:
    """`path` relative to `root`, as headers.json names it (harness.data.annotation_records.path_under); "" for a
    video outside it."""
    relative = path_under(path, root)
    return "" if relative is None else relative.as_posix()
