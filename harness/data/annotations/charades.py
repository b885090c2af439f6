"""Charades v1: the release's CSVs of timed actions (multi-label targets over 157 classes), as videos or extracted
frames."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

from harness.data.annotation_records import Action, VideoRecord
from harness.data.annotations.csv_tables import csv_rows
from harness.data.annotations.frame_lists import RowError, frame_list_file, read_frame_list_records
from harness.data.annotations.layout import Annotations, first_dir, first_file, missing_files, raise_if, split_names
from harness.data.errors import AnnotationError, AnnotationProblem
from harness.data.frames import CHARADES_FRAME_FPS, ListedVideo, frame_actions, parse_frame_labels

CHARADES_CLASSES = 157


def _parse_actions(text: str, num_classes: int) -> tuple[Action, ...]:
    """`c092 11.90 21.20;c147 0.00 12.60` → Actions; raises ValueError saying what is wrong."""
    actions = []
    for item in filter(None, (a.strip() for a in text.split(";"))):
        parts = item.split()
        if len(parts) != 3:
            raise ValueError(f"action {item!r} is not 'cNNN start end'")
        cls, start, end = parts
        if not (cls[:1] == "c" and cls[1:].isdigit()):
            raise ValueError(f"unknown class {cls!r} (expected c000..c{num_classes - 1:03d})")
        label = int(cls[1:])
        if label >= num_classes:
            raise ValueError(f"class {cls} is out of range [c000, c{num_classes - 1:03d}]")
        try:
            times = float(start), float(end)
        except ValueError:
            raise ValueError(f"action {item!r} has non-numeric times") from None
        if not all(math.isfinite(t) for t in times):  # nan or inf: an action no clip window would ever overlap
            raise ValueError(f"action {item!r} has times that are not finite numbers")
        actions.append(Action(label, *times))
    return tuple(actions)


def read_charades(csv_file: Path, video_root: Path, num_classes: int = CHARADES_CLASSES) -> list[VideoRecord]:
    """Charades_v1_{train,test}.csv: `id,...,actions`; videos `{id}.mp4`; multi-label targets."""
    header, rows = csv_rows(csv_file)
    if "id" not in header or "actions" not in header:
        raise AnnotationError([AnnotationProblem(str(csv_file), 1, "header lacks the 'id' and 'actions' columns")])
    records, problems = [], []
    for n, row in rows:
        vid = (row.get("id") or "").strip()
        if not vid:
            problems.append(AnnotationProblem(str(csv_file), n, "missing video id"))
            continue
        try:
            actions = _parse_actions(row.get("actions") or "", num_classes)
        except ValueError as err:
            problems.append(AnnotationProblem(str(csv_file), n, str(err)))
            continue
        records.append(VideoRecord(video_root / f"{vid}.mp4", tuple(sorted({a.label for a in actions})), actions))
    if not records and not problems:
        problems.append(AnnotationProblem(str(csv_file), 0, "lists no videos"))
    raise_if(problems)
    return records


def _charades_frame_target(num_classes: int) -> Callable[[ListedVideo], tuple[tuple[int, ...], tuple[Action, ...]]]:
    def target(video: ListedVideo) -> tuple[tuple[int, ...], tuple[Action, ...]]:
        per_frame = []
        for _, _, field, line in video.rows:
            try:
                per_frame.append(parse_frame_labels(field, num_classes))
            except ValueError as err:
                raise RowError(line, str(err)) from None
        return tuple(sorted({c for labels in per_frame for c in labels})), frame_actions(per_frame,
                                                                                       CHARADES_FRAME_FPS)
    return target


def load_charades(root: Path, split: str, num_classes: int) -> Annotations:
    """Charades v1 (layouts in docs/data.md); the val split is the official test CSV."""
    names = split_names(split)
    name = "Charades_v1_train.csv" if split == "train" else "Charades_v1_test.csv"
    ann = first_file([root / name, root / "annotations" / name, root / "Charades" / name])
    video_dirs = [root / "Charades_v1", root / "Charades_v1_480", root / "videos"]
    frame_list = frame_list_file(root, names)
    if frame_list is not None and (ann is None or not any(d.is_dir() for d in video_dirs)):
        records = read_frame_list_records(frame_list, root, ("frames", "Charades_v1_rgb"), CHARADES_FRAME_FPS,
                                          _charades_frame_target(CHARADES_CLASSES))
        return Annotations(tuple(records), CHARADES_CLASSES, None, True, (str(frame_list),))
    if ann is None:
        raise missing_files(root, f"{name}, or a frame list frame_lists/{names[0]}.csv")
    video_root = first_dir(video_dirs, root)
    records = read_charades(ann, video_root, CHARADES_CLASSES)
    return Annotations(tuple(records), CHARADES_CLASSES, None, True, (str(ann),))
