"""Reading a decoded-frame cache: serve clips of the cached videos by memory-mapping their uint8 frames.

A cache is built by :mod:`harness.data.cache_build` (``harness data cache``) in the layout of
:mod:`harness.data.cache_format`, and read here when ``data.cache`` is set. :class:`CachedVideoReader` has
:class:`~harness.data.decode.VideoReader`'s interface, and its :meth:`~CachedVideoReader.frames_at` picks frames
by the same rule (window, then nearest time), so a cache built without ``short_side`` serves bit-identical clips.
"""

from __future__ import annotations

import json
import logging
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from harness.data.annotations import Annotations
from harness.data.cache_format import CACHE_FORMAT, CACHE_VERSION, INDEX, TIMES, cache_key, source_size
from harness.data.errors import VideoError
from harness.data.video_file import unreadable
from harness.data.video_info import VideoInfo
from harness.io import unreadable_reason
from harness.spec import SpecError

log = logging.getLogger("harness.data")

REBUILD_HINT = "rebuild it with 'harness data cache data.name=NAME data.root=DIR --out CACHE_DIR'"


class CachedVideoReader:
    """A video served from a frame cache, with VideoReader's interface (`info`, `frames_at`, `frame_times`).

    `info` has the container's fps, duration and frame count, exactly as VideoReader reports them (clip times
    are computed from them), and the stored frames' upright height and width.
    """

    def __init__(self, frames: np.ndarray, times: np.ndarray, info: VideoInfo, views: bool = False):
        self._frames, self._times, self.info, self.views = frames, times, info, views
        self.path = Path(info.path)

    def close(self) -> None:
        """Nothing to release: the shard maps belong to the cache and serve every reader of the process."""

    def __enter__(self) -> CachedVideoReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _window(self, start: float, end: float) -> np.ndarray:
        """Indices of the frames VideoReader._decode(start, end) returns: in stream order, skip frames before
        `start - tol`, stop at the first frame after `end + tol`."""
        tol = 0.5 / self.info.fps
        keep = self._times >= start - tol
        over = np.flatnonzero(keep & (self._times > end + tol))
        stop = over[0] if len(over) else len(self._times)
        return np.flatnonzero(keep[:stop])

    def frames_at(self, times: Sequence[float]) -> torch.Tensor:
        """The frames nearest to `times` (seconds; clamped to the video), uint8 T×H×W×C RGB, upright.

        A fresh tensor, unless the cache was opened with `views`: then a strided pick (every clip that does
        not repeat the last frame) is a read-only view of the memory map, which saves a copy of the full frames
        per clip; writing into it in place crashes the process.
        """
        if not len(times):
            raise ValueError("frames_at needs at least one time")
        window = self._window(max(0.0, min(times)), max(times))
        if not len(window):  # asked past the end: VideoReader falls back to the whole video
            window = self._window(0.0, float("inf"))
        if not len(window):
            raise VideoError("undecodable", f"no frame of {self.path} could be decoded")
        stamps = self._times[window]
        t = np.asarray(times, dtype=np.float64)
        j = np.searchsorted(stamps, t, side="left")  # bisect_left, as VideoReader
        before = stamps[np.maximum(j - 1, 0)]
        after = stamps[np.minimum(j, len(stamps) - 1)]
        earlier = (j == len(stamps)) | ((j > 0) & (t - before <= after - t))
        picks = window[np.where(earlier, np.maximum(j - 1, 0), j)]
        step = int(picks[1] - picks[0]) if len(picks) > 1 else 1
        if self.views and step > 0 and np.array_equal(picks, picks[0] + step * np.arange(len(picks))):
            with warnings.catch_warnings():  # read-only on purpose (see above): torch would warn once per process
                warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
                return torch.from_numpy(self._frames[picks[0]:picks[-1] + 1:step])
        return torch.from_numpy(self._frames[picks])  # a gather: a fresh, writable copy

    def frame_times(self, indices: Sequence[int]) -> list[float]:
        """Times of frame indices at the video's average frame rate (as VideoReader.frame_times)."""
        return [i / self.info.fps for i in indices]


class FrameCache:
    """An open frame cache (index in memory; shards memory-mapped lazily, once per process).

    Pickles without its maps, so DataLoader workers (fork or spawn) map the shards themselves. `root` is the
    data.root the annotation paths start with (default: the one it was built from); `views`: readers return
    read-only views of the map where they can (see CachedVideoReader.frames_at).
    """

    def __init__(self, folder: str | Path, root: str | Path | None = None, *, views: bool = False):
        self.folder, self.views = Path(folder).expanduser(), views
        try:
            index = json.loads((self.folder / INDEX).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise SpecError(f"'data.cache={folder}' holds no frame cache ({INDEX} missing); build one with "
                            f"'harness data cache data.name=NAME data.root=DIR --out {folder}', or unset "
                            f"data.cache.") from None
        except PermissionError as err:
            raise self._refused(self.folder / INDEX, err) from None
        except (OSError, ValueError) as err:
            raise SpecError(f"'data.cache={folder}': cannot read {INDEX} ({err}); {REBUILD_HINT}.") from None
        if not isinstance(index, dict) or index.get("format") != CACHE_FORMAT or index.get("version") != CACHE_VERSION \
                or not all(isinstance(index.get(key), dict) for key in ("videos", "bad")):
            raise SpecError(f"'data.cache={folder}' is not a version-{CACHE_VERSION} frame cache; {REBUILD_HINT}.")
        self.index = index
        self.videos: dict[str, dict[str, Any]] = index["videos"]
        self.bad: dict[str, dict[str, Any]] = index["bad"]
        self.root = Path(root if root is not None else index["dataset"]["root"]).expanduser()
        self._maps: dict[str, np.ndarray] = {}
        self._times: np.ndarray | None = None

    @property
    def short_side(self) -> int | None:
        return self.index["short_side"]

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_maps": {}, "_times": None}

    def check(self, annotations: Annotations, name: str) -> None:
        """Raise SpecError naming data.cache unless the cache holds every video of `annotations`, unchanged, and
        its files can be read (see _require_readable)."""
        built = self.index["dataset"]
        where = f"'data.cache={self.folder}'"
        if built["name"] != name:
            raise SpecError(f"{where} was built for data.name={built['name']} (data.root={built['root']}), not "
                            f"data.name={name}; {REBUILD_HINT}.")
        missing, changed = [], []
        for r in annotations.records:
            key = cache_key(r.path, self.root)
            entry = self.videos.get(key) or self.bad.get(key)
            if entry is None:
                missing.append(key)
                continue
            size = source_size(Path(r.path))
            if size is not None and size != entry["size"]:  # another dataset with the same file names
                changed.append(key)
        for problem, keys in (("does not hold", missing), ("holds other versions of", changed)):
            if keys:
                raise SpecError(f"{where} {problem} {len(keys)} of the {len(annotations)} videos data.name={name} "
                                f"data.root={self.root} lists (first: {keys[0]}); it was built from data.root="
                                f"{built['root']}. The cache does not match the dataset: {REBUILD_HINT}.")
        self._require_readable()

    def _refused(self, path: Path, err: OSError) -> SpecError:
        return SpecError(f"'data.cache={self.folder}': {path} {unreadable_reason(path, err)}; or {REBUILD_HINT}.")

    def _require_readable(self) -> None:
        """Open the frame times and every shard once, before any work, so that a file the file system refuses
        is met here rather than in a DataLoader worker: a shard of one video makes that video unusable
        ('unreadable', skipped and counted as an unreadable source video is), a shard of more videos or the times
        (every video's) is a SpecError naming the file and the fix."""
        holders: dict[str, list[str]] = {}
        for key, entry in self.videos.items():
            holders.setdefault(entry["shard"], []).append(key)
        for name in [TIMES, *holders]:
            path = self.folder / name
            try:
                with open(path, "rb"):
                    pass
            except OSError as err:
                keys = holders.get(name, [])
                if len(keys) != 1:
                    raise self._refused(path, err) from None
                entry = self.videos.pop(keys[0])
                self.bad[keys[0]] = {"reason": "unreadable", "size": entry["size"],
                                     "message": f"frame cache file {path} {unreadable_reason(path, err)}"}

    def _shard(self, name: str) -> np.ndarray:
        if name not in self._maps:
            # Read-only, not copy-on-write: an in-place write into a view must fail loudly rather than silently
            # change what this process reads for that video from then on.
            self._maps[name] = self._map(name, lambda path: np.memmap(path, dtype=np.uint8, mode="r"))
        return self._maps[name]

    def _map(self, name: str, load: Callable[[Path], np.ndarray]) -> np.ndarray:
        """`load` of file `name` of the cache; a file refused since the cache was checked (permissions changed
        during a run) makes the video being read unusable, as an unreadable source video, not a traceback."""
        try:
            return load(self.folder / name)
        except OSError as err:
            raise unreadable(self.folder / name, err, "frame cache file ") from None

    def reader(self, path: str | Path) -> CachedVideoReader:
        """The cached video of `path` (a path of the annotations); VideoError if it was unusable at build time."""
        key = cache_key(path, self.root)
        if key in self.bad:
            raise VideoError(self.bad[key]["reason"], self.bad[key]["message"])
        e = self.videos.get(key)
        if e is None:
            raise SpecError(f"'data.cache={self.folder}' does not hold {path}; {REBUILD_HINT}.")
        if self._times is None:
            self._times = self._map(TIMES, lambda path: np.load(path, mmap_mode="r"))
        n, h, w = e["stored_frames"], e["height"], e["width"]
        frames = self._shard(e["shard"])[e["offset"]:e["offset"] + n * h * w * 3].reshape(n, h, w, 3)
        times = np.asarray(self._times[e["times"]:e["times"] + n])
        info = VideoInfo(str(path), w, h, e["fps"], e["duration"], e["frames"], e["rotation"], e["codec"],
                         e["container"])
        return CachedVideoReader(frames, times, info, self.views)


def open_frame_cache(folder: str | Path, annotations: Annotations, name: str, root: str | Path,
                     jitter_max: int | None = None) -> FrameCache:
    """Open the cache at `folder` for dataset `name` at `root` and check it holds every annotated video.

    Readers return views (no copy of the full frames per clip): the dataset only reads them (resize_crop
    makes a new tensor), which is where the cache's speed comes from.
    """
    cache = FrameCache(folder, root, views=True)
    cache.check(annotations, name)
    if jitter_max is not None and cache.short_side is not None and cache.short_side < jitter_max:
        log.warning("data.cache=%s stores frames with short side %d, below the jitter maximum %d: the largest "
                    "crops are upsampled (rebuild with --short-side %d or more for full resolution)",
                    folder, cache.short_side, jitter_max, jitter_max)
    return cache
