"""Extracted frames (PySlowFast's frame lists) as the records of SSv2 and Charades, where they have no videos."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from harness.data.annotation_records import Action
from harness.data.annotations.layout import first_dir, first_file, raise_if
from harness.data.errors import AnnotationProblem
from harness.data.frames import FrameFiles, FrameListRecord, ListedVideo, is_frame_list, read_frame_list


def frame_list_file(root: Path, names: tuple[str, ...]) -> Path | None:
    """The split's frame list: `frame_lists/{split}.csv` (its header is checked when it is read), or `{split}.csv`
    in the root if it starts with the frame-list header (a root CSV may be something else)."""
    listed = first_file([root / "frame_lists" / f"{n}.csv" for n in names])
    return listed or next((p for n in names if (p := root / f"{n}.csv").is_file() and is_frame_list(p)), None)


def _frames_root(root: Path, folders: tuple[str, ...], videos: list[ListedVideo]) -> Path:
    """The folder the frame paths start from: the first candidate holding the list's first frame."""
    candidates = [root / f for f in folders] + [root]
    first = videos[0].rows[0][1] if videos and videos[0].rows else None
    found = next((d for d in candidates if first is not None and (d / first).exists()), None)
    # None found: the first folder that exists, so `harness data check` names the missing frame files there.
    return found or first_dir(candidates, root)


def read_frame_list_records(list_file: Path, root: Path, folders: tuple[str, ...], fps: float,
                            target: Callable[[ListedVideo], tuple[int | tuple[int, ...], tuple[Action, ...]]]
                            ) -> list[FrameListRecord]:
    """The videos of a frame list as records; `target` gives a video's (label, actions) or raises RowError (its
    message names what is wrong, its line where)."""
    videos, problems = read_frame_list(list_file)
    frames_root = _frames_root(root, folders, videos)
    records = []
    for video in videos:
        try:
            label, actions = target(video)
        except RowError as err:
            problems.append(AnnotationProblem(str(list_file), err.line, f"video {video.name}: {err}"))
            continue
        files = FrameFiles.of(frames_root, [r[1] for r in video.rows])
        records.append(FrameListRecord(files.folder(), label, actions, files, fps))
    raise_if(problems)
    return records


class RowError(ValueError):
    """A bad labels field at `line` of a frame list."""

    def __init__(self, line: int, message: str):
        self.line = line
        super().__init__(message)
