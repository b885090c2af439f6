"""Kinetics (and the synthetic data): the official CSVs and the original release's JSON, or a video list (see
:mod:`harness.data.annotations.lists`) with an optional label map."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from harness.data.annotation_records import VideoRecord, first_line, read_text
from harness.data.annotations.csv_tables import csv_rows, delimiter
from harness.data.annotations.label_map import read_class_names
from harness.data.annotations.layout import (
    SPLITS,
    UNLABELLED,
    Annotations,
    first_dir,
    first_file,
    missing_files,
    raise_if,
    split_names,
)
from harness.data.annotations.lists import read_path_label_list
from harness.data.errors import AnnotationError, AnnotationProblem, UnlabelledSplit
from harness.spec import did_you_mean

KINETICS_CSV_HEADER = ("label", "youtube_id", "time_start", "time_end")


def kinetics_csv_classes(csv_file: Path) -> tuple[str, ...]:
    """The class names of an official Kinetics CSV, sorted alphabetically (the reference's class indices)."""
    _, rows = csv_rows(csv_file)
    return tuple(sorted({(row.get("label") or "").strip() for _, row in rows} - {""}))


def read_kinetics_csv(csv_file: Path, video_root: Path, classes: tuple[str, ...]) -> list[VideoRecord]:
    """The official `label,youtube_id,time_start,time_end,split` CSV; videos named by id and times."""
    header, rows = csv_rows(csv_file)
    missing = [h for h in KINETICS_CSV_HEADER if h not in header]
    if missing == ["label"]:
        raise UnlabelledSplit([AnnotationProblem(str(csv_file), 0, UNLABELLED.format(what="no label column"))])
    if missing:
        raise AnnotationError([AnnotationProblem(str(csv_file), 1, f"header lacks column(s) {missing}; expected "
                                                                   f"{','.join(KINETICS_CSV_HEADER)},split")])
    return _kinetics_records(csv_file, rows, video_root, classes, "the train CSV")


def _kinetics_records(source: Path, rows: list[tuple[int, dict[str, Any]]], video_root: Path,
                      classes: tuple[str, ...], classes_from: str) -> list[VideoRecord]:
    """The videos of official Kinetics annotations (`label`, `youtube_id`, `time_start`, `time_end` per row, with
    the row's line in `source`); the classes come from the train split's file (`classes_from`)."""
    index = {name: i for i, name in enumerate(classes)}
    records, problems = [], []
    for n, row in rows:
        label = str(row.get("label") or "").strip()
        if not label:
            problems.append(AnnotationProblem(str(source), n, "missing label"))
            continue
        if label not in index:
            problems.append(AnnotationProblem(str(source), n, f"unknown class {label!r} (not in {classes_from})"
                                              + did_you_mean(label, classes)))
            continue
        try:
            # Whole seconds, as the downloaders name the files ('%06d'); a CSV saved by pandas after a column held
            # a gap writes them as floats ("5.0"), which the downloaders' '%06d' truncates the same way.
            start, end = (int(float(row[k])) for k in ("time_start", "time_end"))
            stem = f"{str(row['youtube_id']).strip()}_{start:06d}_{end:06d}"
        except (ValueError, TypeError, AttributeError, OverflowError, KeyError):
            problems.append(AnnotationProblem(str(source), n, f"bad youtube_id/time_start/time_end in {row}"))
            continue
        records.append(VideoRecord(_kinetics_video(video_root, label, stem), index[label]))
    if not records and not problems:
        problems.append(AnnotationProblem(str(source), 0, "lists no videos"))
    raise_if(problems)
    return records


def _kinetics_json_rows(json_file: Path) -> list[tuple[int, dict[str, Any]]]:
    """The rows of the original release's JSON (as the ActivityNet crawler reads it): {youtube_id: {"annotations":
    {"label": ..., "segment": [start, end]}, "subset": ..., ...}}, each with the line its id is on. A test split
    without labels is an UnlabelledSplit."""
    text = read_text(json_file)
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as err:
        raise AnnotationError([AnnotationProblem(str(json_file), err.lineno, f"invalid JSON: {err.msg}")]) from err
    if not isinstance(raw, dict):
        raise AnnotationError([AnnotationProblem(str(json_file), 1, "expected a JSON object {youtube_id: {annotations:"
                                                                    " {label, segment}, ...}}")])
    rows, pos, line = [], 0, 1
    for youtube_id, entry in raw.items():  # in the file's order, so the ids are found walking forward
        found = text.find(json.dumps(youtube_id), pos)
        if found >= 0:
            line += text.count("\n", pos, found)
            pos = found
        annotations = entry.get("annotations") if isinstance(entry, dict) else None
        segment = annotations.get("segment") if isinstance(annotations, dict) else None
        start, end = segment if isinstance(segment, list) and len(segment) == 2 else (None, None)
        label = annotations.get("label") if isinstance(annotations, dict) else None
        rows.append((line, {"youtube_id": youtube_id, "label": label, "time_start": start, "time_end": end}))
    if rows and not any(r["label"] for _, r in rows):
        raise UnlabelledSplit([AnnotationProblem(str(json_file), 0, UNLABELLED.format(what="no labels"))])
    return rows


def kinetics_json_classes(rows: list[tuple[int, dict[str, Any]]]) -> tuple[str, ...]:
    """The class names of the release's JSON (its rows, `_kinetics_json_rows`), sorted as those of its CSV."""
    return tuple(sorted({str(r["label"]).strip() for _, r in rows if r["label"]} - {""}))


# Where a downloader could not get MP4 it keeps what YouTube served: yt-dlp merges VP9/Opus streams into .mkv or
# .webm under the same name.
KINETICS_SUFFIXES = (".mp4", ".mkv", ".webm")


def _class_folders(label: str) -> tuple[str, ...]:
    """The names a class's folder has: the label, or as MMAction2's rename_classnames.sh leaves it (spaces to
    underscores; its Kinetics-400 version also turns parentheses into hyphens)."""
    underscores = label.replace(" ", "_")
    return tuple(dict.fromkeys((label, underscores, underscores.replace("(", "-").replace(")", "-"))))


def _kinetics_video(video_root: Path, label: str, stem: str) -> Path:
    """The file of a Kinetics clip: `stem`.mp4 in `video_root`, else in its class's folder (some downloaders sort
    videos by class), else with another suffix a downloader writes; the .mp4 path where none exists, so that it is
    reported missing under the name the CSV gives."""
    folders = (video_root, *(video_root / name for name in _class_folders(label)))
    for suffix in KINETICS_SUFFIXES:
        for folder in folders:
            if (path := folder / f"{stem}{suffix}").exists():
                return path
    return video_root / f"{stem}.mp4"


def _kinetics_list(root: Path, names: tuple[str, ...]) -> Path | None:
    """A split's list: `{split}.csv` in the root or annotations/, else as MMAction2 names it: the official CSV that
    its download script renames `kinetics_{split}.csv`, or its video list `{dataset}_{split}_list_videos.txt`."""
    folders = (root, root / "annotations")
    found = first_file([d / f"{p}{n}.csv" for p in ("", "kinetics_") for n in names for d in folders])
    return found or next((f for n in names for f in sorted(root.glob(f"*_{n}_list_videos.txt"))), None)


def _kinetics_json(root: Path, names: tuple[str, ...]) -> Path | None:
    """A split's JSON as the original release names it (`kinetics_{split}.json`, also `{split}.json`), in the root
    or annotations/."""
    return first_file([d / f"{p}{n}.json" for p in ("kinetics_", "") for n in names
                        for d in (root, root / "annotations")])


def _kinetics_video_dirs(root: Path, names: tuple[str, ...]) -> list[Path]:
    """The folders that may hold a split's videos: `{split}/` (the CVDF release), `videos_{split}/` (MMAction2),
    `videos/{split}/`, `videos/`."""
    return ([root / n for n in names] + [root / f"videos_{n}" for n in names] + [root / "videos" / n for n in names]
            + [root / "videos"])


def _sniff_official_csv(path: Path) -> bool:
    """Whether `path` is a CSV with a youtube_id column: the official release's header, also as other tools write
    it (quoted by R or spreadsheets, separated by semicolons or tabs, after pandas' unnamed index column, without
    the label of a test split)."""
    header = first_line(path)
    fields = next(csv.reader([header], delimiter=delimiter(header)), [])
    return "youtube_id" in {f.strip().lower() for f in fields}


def load_kinetics(root: Path, split: str, num_classes: int) -> Annotations:
    """Kinetics in either layout (docs/data.md); `synthetic` data uses the path-label layout."""
    names = split_names(split)
    ann = _kinetics_list(root, names)
    video_dirs = _kinetics_video_dirs(root, names)
    if ann is None and (json_file := _kinetics_json(root, names)) is not None:
        rows, train_json = _kinetics_json_rows(json_file), _kinetics_json(root, SPLITS["train"])
        # The train split's classes; the train split itself is read once.
        classes = kinetics_json_classes(rows if train_json in (None, json_file) else _kinetics_json_rows(train_json))
        records = _kinetics_records(json_file, rows, first_dir(video_dirs, root), classes, "the train JSON")
        return Annotations(tuple(records), len(classes), classes, False, (str(json_file),))
    if ann is None:
        raise missing_files(root, f"{names[0]}.csv (or annotations/{names[0]}.csv, or the release's "
                                  f"kinetics_{names[0]}.json)")
    if _sniff_official_csv(ann):
        train_csv = _kinetics_list(root, SPLITS["train"])
        classes = kinetics_csv_classes(train_csv if train_csv is not None and _sniff_official_csv(train_csv) else ann)
        records = read_kinetics_csv(ann, first_dir(video_dirs, root), classes)
        return Annotations(tuple(records), len(classes), classes, False, (str(ann),))
    classes_file = first_file([root / "classes.txt", root / "annotations" / "classes.txt"])
    classes = None
    if classes_file is not None:
        classes = read_class_names(classes_file)
        num_classes = len(classes)
    records = read_path_label_list(ann, root, num_classes, tuple(d for d in video_dirs if d.is_dir()), classes,
                                   classes_file)
    # The label map too, so that a prepared copy keeps the classes; the list last (the file duplicates are named in).
    files = (str(classes_file), str(ann)) if classes_file is not None else (str(ann),)
    return Annotations(tuple(records), num_classes, classes, False, files)
