"""Extracted-frame datasets: PySlowFast frame lists, and a reader of JPEG frames with VideoReader's interface.

A frame list (PySlowFast's ``load_image_lists`` format, used for SSv2 and Charades) is a space-separated file
with the header ``original_vido_id video_id frame_id path labels`` (the typo is PySlowFast's) and one row per
frame::

    original_vido_id video_id frame_id path labels
    46GP8 0 0 46GP8/46GP8-000001.jpg ""
    46GP8 0 1 46GP8/46GP8-000002.jpg "92,147"

``path`` is relative to a frames folder (PySlowFast's DATA.PATH_PREFIX); ``labels`` is a class index (SSv2) or
a quoted comma-separated list of the classes active at that frame (Charades, possibly empty). A video's frames
are its rows in ``frame_id`` order, shown at a fixed rate (24 fps for Charades as PySlowFast extracts them, 12
fps for SSv2, its videos' rate), so frame ``i`` is at ``i / fps`` seconds and the sampler, the transforms and
``harness data check`` treat a folder of frames like a video file. The layout rules (which folder, when frame
lists are used instead of videos) are in :mod:`harness.data.annotations`.
"""

from __future__ import annotations

import io
import math
import os
import re
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from PIL import Image, UnidentifiedImageError

from harness.data.annotation_records import Action, VideoRecord, first_line, text_lines
from harness.data.errors import AnnotationProblem, VideoError
from harness.data.video_file import unreadable
from harness.data.video_info import VideoInfo

FRAME_LIST_HEADERS = ("original_vido_id", "original_video_id")  # PySlowFast's spelling, and the corrected one
FRAME_LIST_COLUMNS = "original_vido_id video_id frame_id path labels"
CHARADES_FRAME_FPS = 24.0  # PySlowFast's Charades frames (DATA.TARGET_FPS in its Charades configs)
SSV2_FRAME_FPS = 12.0  # SSv2 videos are 12 fps; frames are extracted at the source rate


# ---------------------------------------------------------------- records
@dataclass(frozen=True)
class FrameFiles:
    """The image files of one video's frames, in order, under `root`.

    Stored as a numbered pattern when the names follow one (``prefix{first + i:0{digits}d}suffix``, as every
    extraction script writes them) and as a tuple of names otherwise: SSv2 lists about 10 M frames, which as
    separate strings would cost gigabytes in every DataLoader worker.
    """

    root: Path
    count: int
    pattern: tuple[str, str, int, int] | None = None  # (prefix, suffix, digits, first number)
    names: tuple[str, ...] = ()

    @classmethod
    def of(cls, root: Path, names: Sequence[str]) -> FrameFiles:
        """The compact form of `names` (paths relative to `root`, in frame order)."""
        m = re.fullmatch(r"(.*?)(\d+)(\D*)", names[0]) if names else None
        if m:
            prefix, digits, suffix = m.groups()
            first, width = int(digits), len(digits)
            if all(n == f"{prefix}{first + i:0{width}d}{suffix}" for i, n in enumerate(names)):
                return cls(root, len(names), (prefix, suffix, width, first))
        return cls(root, len(names), None, tuple(names))

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, i: int) -> Path:
        if not 0 <= i < self.count:
            raise IndexError(i)
        if self.pattern is None:
            return self.root / self.names[i]
        prefix, suffix, width, first = self.pattern
        return self.root / f"{prefix}{first + i:0{width}d}{suffix}"

    def folder(self) -> Path:
        """The folder holding the frames (the 'video' that errors and `harness data check` name)."""
        first, last = self[0].parent, self[self.count - 1].parent
        return first if first == last else Path(os.path.commonpath([first, last]))


@dataclass(frozen=True)
class FrameListRecord(VideoRecord):
    """A video stored as extracted frames: `path` is its frame folder, `files` its frames, `fps` their rate."""

    files: FrameFiles = field(default_factory=lambda: FrameFiles(Path(), 0))
    fps: float = CHARADES_FRAME_FPS


# ---------------------------------------------------------------- parsing
@dataclass
class ListedVideo:
    """The rows of one video in a frame list: (frame_id, path, labels field, line), in frame_id order."""

    name: str
    line: int  # the line of its first row
    rows: list[tuple[int, str, str, int]]


def is_frame_list(path: Path) -> bool:
    """Whether `path` starts with the frame-list header."""
    return first_line(path).strip().startswith(FRAME_LIST_HEADERS)


def read_frame_list(list_file: Path) -> tuple[list[ListedVideo], list[AnnotationProblem]]:
    """The videos of a frame list in order of appearance, and the malformed lines (file and line named)."""
    videos: dict[str, ListedVideo] = {}
    problems: list[AnnotationProblem] = []
    where = str(list_file)
    with closing(text_lines(list_file)) as lines:  # one line at a time: SSv2's lists hold millions of frames
        header = next(lines, "").strip()
        if not header.startswith(FRAME_LIST_HEADERS):
            return [], [AnnotationProblem(where, 1, f"not a frame list: the header must be '{FRAME_LIST_COLUMNS}' "
                                                    f"(PySlowFast's format), got {header[:80]!r}")]
        for n, raw in enumerate(lines, start=2):
            row = raw.split()
            if not row:
                continue
            if len(row) != 5:
                what = "missing labels column" if len(row) == 4 else f"{len(row)} fields"
                problems.append(AnnotationProblem(where, n, f"{what}: expected '{FRAME_LIST_COLUMNS}' separated by "
                                                            f"spaces (an empty label is \"\")"))
                continue
            name, _video_id, frame_id, path, labels = row
            if not (_video_id.isdigit() and frame_id.isdigit()):
                problems.append(AnnotationProblem(where, n, f"video_id {_video_id!r} and frame_id {frame_id!r} must "
                                                            f"be non-negative integers"))
                continue
            video = videos.setdefault(name, ListedVideo(name, n, []))
            video.rows.append((int(frame_id), path, labels, n))
    for video in videos.values():
        video.rows.sort(key=lambda r: r[0])
        for a, b in zip(video.rows, video.rows[1:], strict=False):
            if a[0] == b[0]:
                problems.append(AnnotationProblem(where, b[3], f"video {video.name}: frame_id {b[0]} repeats line "
                                                               f"{a[3]}"))
    if not videos and not problems:
        problems.append(AnnotationProblem(where, 0, "lists no frames"))
    return list(videos.values()), problems


def parse_frame_labels(text: str, num_classes: int) -> tuple[int, ...]:
    """A labels field (`"92,147"`, `""`, `12`) → class indices; ValueError saying what is wrong."""
    labels = []
    for item in filter(None, (x.strip() for x in text.strip('"').split(","))):
        try:
            value = int(item)
        except ValueError:
            raise ValueError(f"label {item!r} is not an integer class index") from None
        if not 0 <= value < num_classes:
            raise ValueError(f"label {value} is out of range [0, {num_classes})")
        labels.append(value)
    return tuple(labels)


def frame_actions(per_frame: Sequence[tuple[int, ...]], fps: float) -> tuple[Action, ...]:
    """Per-frame labels as Actions: one per run of consecutive frames with a class, widened by half a frame.

    Why half a frame: the dataset's target for a clip is the actions overlapping [first time, last time]
    (the Charades video reader's rule), and a clip takes the frames nearest to its times; with each frame
    covering [i - ½, i + ½] / fps, that rule gives exactly the union of the labels of the frames from the
    clip's first frame to its last (PySlowFast's `aggregate_labels` over that range).
    """
    actions = []
    for c in sorted({c for labels in per_frame for c in labels}):
        start = None
        for i, labels in enumerate([*per_frame, ()]):
            if c in labels and start is None:
                start = i
            elif c not in labels and start is not None:
                actions.append(Action(c, (start - 0.5) / fps, (i - 0.5) / fps))
                start = None
    return tuple(actions)


# ---------------------------------------------------------------- reading
def _read_frame(path: Path) -> torch.Tensor:
    """One frame image, uint8 H×W×3 RGB; VideoError (missing, empty, undecodable) naming the file.

    Decoded with Pillow (libjpeg-turbo in its wheels): torchvision's image decoders are deprecated since
    torchvision 0.29.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise VideoError("missing", f"frame file {path} does not exist (re-extract the video's frames or "
                                    f"remove it from the frame list)") from None
    except PermissionError as err:
        raise unreadable(path, err, "frame file ") from None
    except OSError as err:
        raise VideoError("missing", f"frame file {path} cannot be read ({err})") from None
    if not data:
        raise VideoError("empty", f"frame file {path} is empty (0 bytes); re-extract the video's frames")
    try:
        with Image.open(io.BytesIO(data)) as image:
            array = np.asarray(image.convert("RGB"))  # load() happens here: a cut file fails here, not later
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as err:
        raise VideoError("undecodable", f"frame file {path} is not a readable JPEG/PNG image ({err}); re-extract "
                                        f"the video's frames") from None
    return torch.from_numpy(array.copy())  # Pillow's buffer is read-only


class FrameListReader:
    """A video stored as image files (one per frame), with VideoReader's interface.

    Opening reads the first frame's image header (for the size); `frames_at` decodes only the frames a clip
    uses, each once. Errors are VideoErrors of the same kinds as for video files, naming the frame file.
    """

    def __init__(self, files: FrameFiles, fps: float, path: str | Path | None = None):
        self.files, self.path = files, Path(path) if path is not None else files.root
        if not len(files):
            raise VideoError("too_short", f"{self.path}: the frame list gives this video no frames")
        if not files.root.is_dir():
            raise VideoError("missing", f"{self.path}: frames folder {files.root} does not exist")
        first = files[0]
        try:
            with Image.open(first) as image:  # the header only: no pixel is decoded here
                width, height = image.size
        except FileNotFoundError:
            raise VideoError("missing", f"{self.path}: frame file {first} does not exist") from None
        except PermissionError as err:
            raise unreadable(first, err, f"{self.path}: frame file ") from None
        except (UnidentifiedImageError, OSError) as err:
            kind = "empty" if first.is_file() and first.stat().st_size == 0 else "undecodable"
            raise VideoError(kind, f"{self.path}: frame file {first} is not a readable image ({err})") from None
        n = len(files)
        self.info = VideoInfo(str(self.path), width, height, fps, n / fps, n, 0, "image", "frames")

    def close(self) -> None:
        """Nothing to release: each frame file is opened and closed as it is read."""

    def __enter__(self) -> FrameListReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def index_at(self, t: float) -> int:
        """The frame nearest to time `t` (ties to the earlier frame, as VideoReader), clamped to the video."""
        # The epsilon keeps k/fps·fps (rounding error either way) on frame k.
        return min(self.info.frames - 1, max(0, math.ceil(t * self.info.fps - 0.5 - 1e-6)))

    def frames_at(self, times: Sequence[float]) -> torch.Tensor:
        """The frames nearest to `times` (seconds; clamped to the video), uint8 T×H×W×C RGB."""
        if not len(times):
            raise ValueError("frames_at needs at least one time")
        picks = [self.index_at(t) for t in times]
        decoded = {i: _read_frame(self.files[i]) for i in sorted(set(picks))}
        sizes = {tuple(f.shape) for f in decoded.values()}
        if len(sizes) > 1:
            raise VideoError("undecodable", f"{self.path}: frames differ in size ({sorted(sizes)}); re-extract "
                                            f"the video's frames at one size")
        return torch.stack([decoded[i] for i in picks])

    def frame_times(self, indices: Sequence[int]) -> list[float]:
        """Times of frame indices (frame i is at i / fps)."""
        return [i / self.info.fps for i in indices]


def scan_frames(record: FrameListRecord, min_frames: int = 1) -> VideoInfo:
    """Decode every frame of `record` and raise VideoError naming the first bad frame file (`harness data check`)."""
    with FrameListReader(record.files, record.fps, record.path) as reader:
        info, size = reader.info, None
        for i in range(len(record.files)):
            frame = _read_frame(record.files[i])
            if size is None:
                size = frame.shape
            elif frame.shape != size:
                raise VideoError("undecodable", f"{record.path}: frame file {record.files[i]} is "
                                                f"{frame.shape[1]}×{frame.shape[0]}, the first frame "
                                                f"{size[1]}×{size[0]}; re-extract the frames at one size")
    if info.frames < min_frames:
        raise VideoError("too_short", f"{record.path}: {info.frames} frame(s), fewer than the {min_frames} a clip "
                                      f"needs")
    return info
