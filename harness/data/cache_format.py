"""What a decoded-frame cache folder holds on disk: its file names, format tag and version, and how videos are keyed.

The builder (:mod:`harness.data.cache_build`) writes this layout and the reader (:mod:`harness.data.cache_read`)
serves clips from it; both take these names from here.

Layout of a cache folder (``harness data cache ... --out DIR``, used with ``data.cache=DIR``)::

    index.json          format/version, the dataset (name, root, splits), short_side, shards, and per video
                        (keyed by its path relative to data.root): shard, byte offset, stored frames and size,
                        the container's fps/duration/frames (as VideoReader reports them), rotation, codec;
                        unusable videos under "bad" with a VideoError kind and message
    times.npy           float64 presentation time of every stored frame (seconds from the first frame)
    frames-00000.u8 ... raw uint8 frames, T×H×W×3 RGB upright, one video after another
"""

from __future__ import annotations

from pathlib import Path

CACHE_FORMAT = "harness-frame-cache"
CACHE_VERSION = 1
INDEX = "index.json"
TIMES = "times.npy"


def cache_key(path: str | Path, root: str | Path) -> str:
    """The index key of a video: its path relative to data.root (so a moved or copied dataset keeps its cache),
    or the absolute path for a video outside the root."""
    path, root = Path(path), Path(root).expanduser()
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path.resolve())


def source_size(path: Path) -> int | None:
    """The size in bytes of a source video (recorded per video, so a cache of other files is recognised), or None
    if it cannot be read."""
    try:
        return path.stat().st_size
    except OSError:
        return None
