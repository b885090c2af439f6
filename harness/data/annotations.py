"""Readers of the annotation layouts the reference implementation expects, and the registry of dataset names.

The layouts under ``data.root`` (Kinetics and synthetic, SSv2, Charades; video lists written by PySlowFast,
PyTorchVideo and MMAction2; extracted-frame lists) are described in docs/data.md; the first match wins, and videos win
over a frame list where both exist. Every reader checks every line and raises one :class:`AnnotationError` listing
each malformed line with its file and line number, so a bad file fails at load time, not hours into training; a test
split without labels is an :class:`UnlabelledSplit`. Video files are not opened here (``harness data check`` does).
"""

from __future__ import annotations

import csv
import io
import json
import logging
import math
import re
import stat
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.data.annotation_records import Action, VideoRecord, first_line, read_text, text_lines, unreadable_file
from harness.data.errors import AnnotationError, AnnotationProblem, MissingAnnotations, UnlabelledSplit
from harness.data.frames import (
    CHARADES_FRAME_FPS,
    SSV2_FRAME_FPS,
    FrameFiles,
    FrameListRecord,
    ListedVideo,
    frame_actions,
    is_frame_list,
    parse_frame_labels,
    read_frame_list,
)
from harness.spec import SpecError, did_you_mean

log = logging.getLogger("harness.data")

SPLITS = {"train": ("train",), "val": ("val", "validate", "validation"), "test": ("test",)}
CHARADES_CLASSES = 157
KINETICS_CSV_HEADER = ("label", "youtube_id", "time_start", "time_end")
# A release's test split lists videos without labels (Kinetics-700-2020's test.csv, SSv2's test.json): there is
# nothing to train on or score, and commands that read every split (`harness data prepare`) pass it over.
UNLABELLED = "{what}: an unlabelled test split, as released; the harness trains on 'train' and scores on 'val'"


@dataclass(frozen=True)
class Annotations:
    """The videos of one split and what their labels mean."""

    records: tuple[VideoRecord, ...]
    num_classes: int
    classes: tuple[str, ...] | None  # class names in index order, where the layout names them
    multilabel: bool
    files: tuple[str, ...]  # the annotation files read

    def __len__(self) -> int:
        return len(self.records)


def _first_file(candidates: list[Path]) -> Path | None:
    """The first of `candidates` that is a file; AnnotationError where one before it is there but is no regular
    file (a folder, a named pipe, a link to nothing), which would otherwise be passed over as missing."""
    for path in candidates:
        if path.is_file():
            return path
        what = _not_a_file(path)
        if what:
            raise AnnotationError([AnnotationProblem(str(path), 0, f"is {what}, not a regular file; put the "
                                                                   f"annotation file there, or move it away")])
    return None


def _not_a_file(path: Path) -> str | None:
    """What stands at `path` where it is not a regular file ("a folder", "a named pipe (FIFO)", ...); None where
    nothing does."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "a symbolic link to nothing" if path.is_symlink() else None
    except OSError:
        return None  # not searchable: opening says so
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
    return next((name for test, name in kinds if test(mode)), None)


def _first_dir(candidates: list[Path], default: Path) -> Path:
    return next((p for p in candidates if p.is_dir()), default)


def _split_names(split: str) -> tuple[str, ...]:
    if split not in SPLITS:
        raise SpecError(f"Unknown split '{split}'.{did_you_mean(split, SPLITS)} Use one of {', '.join(SPLITS)}.")
    return SPLITS[split]


def _missing(root: Path, what: str) -> MissingAnnotations:
    return MissingAnnotations([AnnotationProblem(str(root), 0, f"no {what} found; check data.root and data.name")])


def _raise_if(problems: list[AnnotationProblem]) -> None:
    if problems:
        raise AnnotationError(problems)


# ---------------------------------------------------------------- Kinetics (and the synthetic data)
def _path_label(line: str) -> tuple[str, str] | str:
    """(path, label) of a list line, or why it is not one. The label is the last field after whitespace (paths may
    hold spaces), or the number after the last comma where that field is none (PySlowFast's
    DATA.PATH_LABEL_SEPARATOR=",")."""
    parts = line.rsplit(maxsplit=1)
    comma = re.fullmatch(r"(.+?)\s*,\s*(-?\d+)", line)
    if comma and (len(parts) < 2 or not re.fullmatch(r"-?\d+", parts[1])):
        parts = [comma[1], comma[2]]
    if len(parts) < 2:
        return f"missing label: expected 'path label', got {line!r}"
    path, label = parts
    path = _unquoted(path)
    # MMAction2's rawframe lists ('frame_dir total_frames label') and multi-label lists ('path label label ...') put
    # a number before the last one: read as 'path label' they would name videos 'frame_dir 300' that do not exist.
    if path.rsplit(maxsplit=1)[-1].isdigit() and len(path.split()) > 1:
        return (f"{line!r} has two numbers after the path: an MMAction2 rawframe list ('frame_dir total_frames label') "
                f"or a multi-label list ('path label label ...'), which is not read; give a list of videos, one "
                f"'path label' a line with one class index (PySlowFast's and MMAction2's video lists)")
    return path, label


# Names a video file in a list ends with: a path followed by other fields is a line with more columns.
_VIDEO_NAME = re.compile(r".*\.(mp4|m4v|mkv|webm|avi|mov|mpg|mpeg|mts|m2ts|ts|flv|wmv|3gp|ogv|gif)", re.IGNORECASE)


def _extra_columns(line: str, path: str) -> str | None:
    """Why `line` is not 'path label' where its `path` holds a video's file name and then other fields (a text
    column, `path label name`): read as one path, its last field taken for the label, it would name no video and
    a wrong class; None otherwise."""
    fields = re.split(r"[\s,]+", path)
    last = max((i for i, f in enumerate(fields) if _VIDEO_NAME.fullmatch(f)), default=None)
    if last is None or last == len(fields) - 1:
        return None
    rest = line[line.index(fields[last]) + len(fields[last]):].strip(" \t,")
    return (f"{line!r} has other columns after the video {fields[last]!r} ({rest!r}): give one 'path label' a "
            f"line, the label a class index or a class name of classes.txt")


def _named_label(line: str, index: dict[str, int]) -> tuple[str, int] | None:
    """(path, class index) of a list line that ends in a class name of `index` (after whitespace or a comma; names
    may hold spaces, as Kinetics' do: the longest that fits), or None."""
    words = line.replace(",", " , ").split()
    for k in range(min(len(words) - 1, _MAX_NAME_WORDS), 0, -1):
        name = " ".join(words[-k:])
        if name in index:
            path = re.sub(r"[\s,]*" + r"\s*".join(map(re.escape, words[-k:])) + r"$", "", line)
            if path:
                return _unquoted(path), index[name]
    return None


def _unquoted(path: str) -> str:
    """`path` without the quotes CSV writers put around a field with spaces (pandas)."""
    if len(path) >= 2 and path[0] == path[-1] == '"':
        return path[1:-1].replace('""', '"')
    return path


_MAX_NAME_WORDS = 8  # words in the longest class name looked for at a list line's end


def _label_problems(list_file: Path, unknown: dict[str, list[int]], classes_file: Path | None,
                    ) -> list[AnnotationProblem]:
    """One problem per label that is neither a class index nor a class name, at its first line."""
    problems = []
    for label, lines in unknown.items():
        more = f" (and {len(lines) - 1} more line(s))" if len(lines) > 1 else ""
        if classes_file is None:
            why = (f"label {label!r}{more} is not an integer class index; give indices, or put a classes.txt naming "
                   f"the classes (one a line) beside {list_file.name}")
        else:
            why = f"label {label!r}{more} is neither a class index nor one of the class names in {classes_file}"
        problems.append(AnnotationProblem(str(list_file), lines[0], why))
    return problems


def read_path_label_list(list_file: Path, root: Path, num_classes: int, bases: tuple[Path, ...] = (),
                         classes: tuple[str, ...] | None = None, classes_file: Path | None = None,
                         ) -> list[VideoRecord]:
    """`relative/path.mp4 label` lines (PySlowFast, PyTorchVideo and MMAction2 video lists; paths may hold spaces).
    The label is a class index, or a class name of `classes` (read from `classes_file`). Relative paths start where
    :func:`_list_base` finds the first listed video (`root` unless it is elsewhere)."""
    listed, problems, unknown = [], [], {}
    index = {name: i for i, name in enumerate(classes or ())}
    for n, raw in enumerate(text_lines(list_file), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parsed = _path_label(line)
        if index and (isinstance(parsed, str) or not re.fullmatch(r"-?\d+", parsed[1])):  # a class index comes first
            parsed = _named_label(line, index) or parsed
        if isinstance(parsed, str):
            problems.append(AnnotationProblem(str(list_file), n, parsed))
            continue
        path, label = parsed
        extra = _extra_columns(line, path)
        if extra:
            problems.append(AnnotationProblem(str(list_file), n, extra))
            continue
        if "\\" in path and "/" not in path:  # a list written on Windows: backslashes between its folders
            path = path.replace("\\", "/")
        try:
            value = int(label)
        except ValueError:
            unknown.setdefault(label, []).append(n)
            continue
        if not 0 <= value < num_classes:
            problems.append(AnnotationProblem(
                str(list_file), n, f"label {value} is out of range [0, {num_classes}) (data.num_classes or "
                                   f"classes.txt sets the number of classes)"))
            continue
        listed.append((Path(path), value))
    problems += _label_problems(list_file, unknown, classes_file)
    if not listed and not problems:
        problems.append(AnnotationProblem(str(list_file), 0, "lists no videos"))
    _raise_if(problems)
    place = _list_base([p for p, _ in listed if not p.is_absolute()][:_BASE_PROBES], root, bases)
    return [VideoRecord(_as_on_disk(place(path)), label) for path, label in listed]


def _as_on_disk(path: Path) -> Path:
    """`path`, or the same name in the other Unicode normal form where only that exists: a list written on macOS
    (decomposed accents, NFD) names files stored composed (NFC) on Linux, and the other way round."""
    if str(path).isascii() or path.exists():
        return path
    for form in ("NFC", "NFD"):
        other = Path(unicodedata.normalize(form, str(path)))
        if other != path and other.exists():
            return other
    return path


_BASE_PROBES = 64  # listed videos looked for to tell where a list's relative paths start


def _list_base(relative: list[Path], root: Path, bases: tuple[Path, ...]) -> Callable[[Path], Path]:
    """Where a list's relative paths start, told by the first of `relative` (the list's first relative paths, in
    order) that is found: `root`, unless the video is not there but is under one of `bases` (the split's video
    folder), or under `root` once leading folders are dropped: lists written for a PySlowFast DATA.PATH_PREFIX
    further up (`k400/train/a.mp4` under data.root=/data/k400, also in a prepared copy of it under another name).
    Those folders are dropped from every path that starts with them. A video missing from the disk (a failed
    download) tells nothing, so the next one is asked; unchanged (under `root`) where none of them is found, so a
    missing one is named there."""
    for path in relative:
        if (root / path).exists():
            break
        for base in bases:
            if (base / path).exists():
                return lambda p, base=base: base / p
        parts = path.parts
        for k in range(1, len(parts)):
            if root.joinpath(*parts[k:]).exists():
                return lambda p, k=k, parts=parts: root.joinpath(*p.parts[k:]) if p.parts[:k] == parts[:k] else root / p
    return lambda p: root / p


def read_class_names(classes_file: Path) -> tuple[str, ...]:
    """The class names of a label map, in index order: one name a line (index = position, as MMAction2's
    label_map_*.txt), `index name` lines (also `index,name`, after a header such as `id,name`), or a JSON object
    {name: index} (PyTorchVideo's kinetics_classnames.json, whose names carry quotes, which are dropped). A name
    listed twice is an error: it would add a class that no label can be told from, and shift the number of classes
    the model is built with; so are indices that are not 0..n-1, each once (UCF-101's classInd.txt counts from 1)."""
    text = read_text(classes_file)
    if text.lstrip().startswith("{"):
        return _json_class_names(classes_file, text)
    lines = [(n, raw.strip()) for n, raw in enumerate(text_lines(classes_file), start=1) if raw.strip()]
    numbered = [re.fullmatch(r"(\d+)\s*[\s,]\s*(\S.*)", line) for _, line in lines]
    if len(lines) > 1 and all(numbered[1:]) and not numbered[0]:  # a header line above numbered ones
        lines, numbered = lines[1:], numbered[1:]
    if lines and all(numbered):
        return _indexed_class_names(classes_file, [(n, int(m[1]), m[2].strip()) for (n, _), m in zip(lines, numbered)])
    return _indexed_class_names(classes_file, [(n, i, name) for i, (n, name) in enumerate(lines)])


def _json_class_names(classes_file: Path, text: str) -> tuple[str, ...]:
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as err:
        raise AnnotationError([AnnotationProblem(str(classes_file), err.lineno, f"invalid JSON: {err.msg}")]) from err
    if not isinstance(raw, dict):
        raise AnnotationError([AnnotationProblem(str(classes_file), 1, "expected a JSON object {name: index}")])
    entries, problems = [], []
    for name, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, int | str) or not str(value).strip().isdigit():
            problems.append(AnnotationProblem(str(classes_file), 0, f"class {name!r} has index {value!r}, not an "
                                                                    f"integer"))
            continue
        entries.append((0, int(value), name.strip().strip('"').strip()))
    _raise_if(problems)
    return _indexed_class_names(classes_file, entries)


def _indexed_class_names(classes_file: Path, entries: list[tuple[int, int, str]]) -> tuple[str, ...]:
    """Names by index from (line, index, name) entries (line 0: the file as a whole); every problem named."""
    problems, first_line_of, by_index = [], {}, {}
    for n, index, name in entries:
        if name in first_line_of:
            where = f" (first on line {first_line_of[name]})" if first_line_of[name] else ""
            problems.append(AnnotationProblem(str(classes_file), n, f"class {name!r} is listed again{where}; list "
                                                                    f"each class once"))
        elif index in by_index:
            problems.append(AnnotationProblem(str(classes_file), n, f"class index {index} is given twice "
                                                                    f"({by_index[index]!r} and {name!r})"))
        first_line_of.setdefault(name, n)
        by_index.setdefault(index, name)
    if not problems and sorted(by_index) != list(range(len(by_index))):
        base = " (they count from 1: renumber them from 0, as the lists' labels count)" if min(by_index) == 1 else ""
        problems.append(AnnotationProblem(str(classes_file), 0, f"class indices must be 0..{len(by_index) - 1}, each "
                                                                f"once{base}"))
    _raise_if(problems)
    return tuple(by_index[i] for i in range(len(by_index)))


def _delimiter(header_line: str) -> str:
    """The delimiter of a CSV file from its header line: a comma, unless the header holds none but semicolons (what
    Excel writes where the comma is the decimal mark) or tabs (a spreadsheet's "text, tab separated")."""
    if "," not in header_line:
        for other in (";", "\t"):
            if other in header_line:
                return other
    return ","


def _csv_rows(csv_file: Path) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """Header and (line number, row) pairs of a CSV file, line numbers 1-based as an editor shows them."""
    with io.StringIO(read_text(csv_file), newline="") as f:
        reader = csv.DictReader(f, delimiter=_delimiter(first_line(csv_file)))
        header = [h.strip() for h in (reader.fieldnames or [])]
        reader.fieldnames = header
        rows, start = [], reader.line_num + 1
        for row in reader:
            rows.append((start, row))
            start = reader.line_num + 1
    return header, rows


def kinetics_csv_classes(csv_file: Path) -> tuple[str, ...]:
    """The class names of an official Kinetics CSV, sorted alphabetically (the reference's class indices)."""
    _, rows = _csv_rows(csv_file)
    return tuple(sorted({(row.get("label") or "").strip() for _, row in rows} - {""}))


def read_kinetics_csv(csv_file: Path, video_root: Path, classes: tuple[str, ...]) -> list[VideoRecord]:
    """The official `label,youtube_id,time_start,time_end,split` CSV; videos named by id and times."""
    header, rows = _csv_rows(csv_file)
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
    _raise_if(problems)
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
    found = _first_file([d / f"{p}{n}.csv" for p in ("", "kinetics_") for n in names for d in folders])
    return found or next((f for n in names for f in sorted(root.glob(f"*_{n}_list_videos.txt"))), None)


def _kinetics_json(root: Path, names: tuple[str, ...]) -> Path | None:
    """A split's JSON as the original release names it (`kinetics_{split}.json`, also `{split}.json`), in the root
    or annotations/."""
    return _first_file([d / f"{p}{n}.json" for p in ("kinetics_", "") for n in names
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
    fields = next(csv.reader([header], delimiter=_delimiter(header)), [])
    return "youtube_id" in {f.strip().lower() for f in fields}


def load_kinetics(root: Path, split: str, num_classes: int) -> Annotations:
    """Kinetics in either layout (see the module docstring); `synthetic` data uses the path-label layout."""
    names = _split_names(split)
    ann = _kinetics_list(root, names)
    video_dirs = _kinetics_video_dirs(root, names)
    if ann is None and (json_file := _kinetics_json(root, names)) is not None:
        rows, train_json = _kinetics_json_rows(json_file), _kinetics_json(root, SPLITS["train"])
        # The train split's classes; the train split itself is read once.
        classes = kinetics_json_classes(rows if train_json in (None, json_file) else _kinetics_json_rows(train_json))
        records = _kinetics_records(json_file, rows, _first_dir(video_dirs, root), classes, "the train JSON")
        return Annotations(tuple(records), len(classes), classes, False, (str(json_file),))
    if ann is None:
        raise _missing(root, f"{names[0]}.csv (or annotations/{names[0]}.csv, or the release's "
                             f"kinetics_{names[0]}.json)")
    if _sniff_official_csv(ann):
        train_csv = _kinetics_list(root, SPLITS["train"])
        classes = kinetics_csv_classes(train_csv if train_csv is not None and _sniff_official_csv(train_csv) else ann)
        records = read_kinetics_csv(ann, _first_dir(video_dirs, root), classes)
        return Annotations(tuple(records), len(classes), classes, False, (str(ann),))
    classes_file = _first_file([root / "classes.txt", root / "annotations" / "classes.txt"])
    classes = None
    if classes_file is not None:
        classes = read_class_names(classes_file)
        num_classes = len(classes)
    records = read_path_label_list(ann, root, num_classes, tuple(d for d in video_dirs if d.is_dir()), classes,
                                   classes_file)
    # The label map too, so that a prepared copy keeps the classes; the list last (the file duplicates are named in).
    files = (str(classes_file), str(ann)) if classes_file is not None else (str(ann),)
    return Annotations(tuple(records), num_classes, classes, False, files)


# ---------------------------------------------------------------- Something-Something v2
def _json_array_entries(path: Path) -> list[tuple[int, object]]:
    """The entries of a JSON array file with the line each starts on (json.load loses line numbers)."""
    text = read_text(path)
    decoder = json.JSONDecoder()
    pos = len(text) - len(text.lstrip())
    if not text[pos:pos + 1] == "[":
        raise AnnotationError([AnnotationProblem(str(path), 1, "expected a JSON list of {id, template, ...}")])
    pos += 1
    entries = []
    line, counted = 1, 0  # the line of text[counted], counted on from the last entry (linear in the file's size)
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            break
        line += text.count("\n", counted, pos)
        counted = pos
        try:
            obj, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as err:
            raise AnnotationError([AnnotationProblem(str(path), err.lineno, f"invalid JSON: {err.msg}")]) from err
        entries.append((line, obj))
    return entries


def _template_class(template: object) -> str:
    """The class a template names: the template without the brackets around its placeholders (the reference's
    rule). Applied to the labels JSON's keys too: the release writes them without brackets, copies of it with."""
    return str(template).replace("[", "").replace("]", "")


def read_ssv2_labels(labels_json: Path) -> dict[str, int]:
    """The labels JSON: class template (without brackets) → index (the index may be a string, as published)."""
    try:
        raw = json.loads(read_text(labels_json))
    except json.JSONDecodeError as err:
        raise AnnotationError([AnnotationProblem(str(labels_json), err.lineno, f"invalid JSON: {err.msg}")]) from err
    if not isinstance(raw, dict):
        raise AnnotationError([AnnotationProblem(str(labels_json), 1, "expected a JSON object {template: index}")])
    labels, problems = {}, []
    for name, value in raw.items():
        try:
            labels[_template_class(name)] = int(value)
        except (TypeError, ValueError):
            problems.append(AnnotationProblem(str(labels_json), 0, f"class {name!r} has a non-integer index {value!r}"))
    if sorted(labels.values()) != list(range(len(labels))):
        problems.append(AnnotationProblem(str(labels_json), 0,
                                          f"class indices must be 0..{len(labels) - 1}, each once"))
    _raise_if(problems)
    return labels


def read_ssv2_split(split_json: Path, video_root: Path, labels: dict[str, int]) -> list[VideoRecord]:
    """A train/validation JSON list of {id, label, template, placeholders}; videos `{id}.webm`."""
    records, problems = [], []
    entries = _json_array_entries(split_json)
    if entries and not any(isinstance(e, dict) and e.get("template") for _, e in entries):
        raise UnlabelledSplit([AnnotationProblem(str(split_json), 0,
                                                 UNLABELLED.format(what="no video has a 'template'"))])
    for line, entry in entries:
        if not isinstance(entry, dict) or "id" not in entry:
            problems.append(AnnotationProblem(str(split_json), line, "entry is not an object with an 'id'"))
            continue
        template = entry.get("template")
        if not template:
            problems.append(AnnotationProblem(str(split_json), line,
                                              f"video {entry['id']}: missing label ('template')"))
            continue
        name = _template_class(template)
        if name not in labels:
            problems.append(AnnotationProblem(str(split_json), line, f"video {entry['id']}: unknown class {name!r}"
                                              + did_you_mean(name, labels)))
            continue
        records.append(VideoRecord(_ssv2_video(video_root, str(entry["id"])), labels[name]))
    if not records and not problems:
        problems.append(AnnotationProblem(str(split_json), 0, "lists no videos"))
    _raise_if(problems)
    return records


def _ssv2_video(video_root: Path, video_id: str) -> Path:
    """`{id}.webm` as released, else `{id}.mp4` where the videos were converted (as several codebases do); the
    .webm path where neither exists, so a missing video is named as released."""
    webm = video_root / f"{video_id}.webm"
    if not webm.exists() and (mp4 := webm.with_suffix(".mp4")).exists():
        return mp4
    return webm


# ---------------------------------------------------------------- extracted frames (SSv2, Charades)
def _frame_list_file(root: Path, names: tuple[str, ...]) -> Path | None:
    """The split's frame list: `frame_lists/{split}.csv` (its header is checked when it is read), or `{split}.csv`
    in the root if it starts with the frame-list header (a root CSV may be something else)."""
    listed = _first_file([root / "frame_lists" / f"{n}.csv" for n in names])
    return listed or next((p for n in names if (p := root / f"{n}.csv").is_file() and is_frame_list(p)), None)


def _frames_root(root: Path, folders: tuple[str, ...], videos: list[ListedVideo]) -> Path:
    """The folder the frame paths start from: the first candidate holding the list's first frame."""
    candidates = [root / f for f in folders] + [root]
    first = videos[0].rows[0][1] if videos and videos[0].rows else None
    found = next((d for d in candidates if first is not None and (d / first).exists()), None)
    # None found: the first folder that exists, so `harness data check` names the missing frame files there.
    return found or _first_dir(candidates, root)


def read_frame_list_records(list_file: Path, root: Path, folders: tuple[str, ...], fps: float,
                            target: Callable[[ListedVideo], tuple[int | tuple[int, ...], tuple[Action, ...]]]
                            ) -> list[FrameListRecord]:
    """The videos of a frame list as records; `target` gives a video's (label, actions) or raises ValueError
    (the message names what is wrong; the problem is reported at the video's first line)."""
    videos, problems = read_frame_list(list_file)
    frames_root = _frames_root(root, folders, videos)
    records = []
    for video in videos:
        try:
            label, actions = target(video)
        except _RowError as err:
            problems.append(AnnotationProblem(str(list_file), err.line, f"video {video.name}: {err}"))
            continue
        files = FrameFiles.of(frames_root, [r[1] for r in video.rows])
        records.append(FrameListRecord(files.folder(), label, actions, files, fps))
    _raise_if(problems)
    return records


class _RowError(ValueError):
    """A bad labels field at `line` of a frame list."""

    def __init__(self, line: int, message: str):
        self.line = line
        super().__init__(message)


def _ssv2_frame_target(labels_by_id: dict[str, int] | None, num_classes: int
                       ) -> Callable[[ListedVideo], tuple[int, tuple[Action, ...]]]:
    def target(video: ListedVideo) -> tuple[int, tuple[Action, ...]]:
        if labels_by_id is not None and video.name in labels_by_id:
            return labels_by_id[video.name], ()
        _, _, field, line = video.rows[0]
        try:
            labels = parse_frame_labels(field, num_classes)
        except ValueError as err:
            raise _RowError(line, str(err)) from None
        if len(labels) != 1:
            where = "not in the split JSON and " if labels_by_id is not None else ""
            raise _RowError(line, f"{where}its labels column {field!r} is not one class index (missing label)")
        return labels[0], ()
    return target


def _charades_frame_target(num_classes: int) -> Callable[[ListedVideo], tuple[tuple[int, ...], tuple[Action, ...]]]:
    def target(video: ListedVideo) -> tuple[tuple[int, ...], tuple[Action, ...]]:
        per_frame = []
        for _, _, field, line in video.rows:
            try:
                per_frame.append(parse_frame_labels(field, num_classes))
            except ValueError as err:
                raise _RowError(line, str(err)) from None
        return tuple(sorted({c for labels in per_frame for c in labels})), frame_actions(per_frame,
                                                                                       CHARADES_FRAME_FPS)
    return target


def _ssv2_ids(split_json: Path, labels: dict[str, int]) -> dict[str, int]:
    """Video id → class index of a split JSON (read and checked as for videos; the id is the file's stem)."""
    return {r.path.stem: int(r.label) for r in read_ssv2_split(split_json, Path(), labels)}  # type: ignore[arg-type]


def load_ssv2(root: Path, split: str, num_classes: int) -> Annotations:
    """Something-Something v2, as videos or extracted frames (see the module docstring)."""
    names = _split_names(split)
    prefixes = ("", "something-something-v2-")
    dirs = (root, root / "labels", root / "annotations")
    labels_json = _first_file([d / f"{p}labels.json" for d in dirs for p in prefixes])
    split_json = _first_file([d / f"{p}{n}.json" for n in names for d in dirs for p in prefixes])
    video_dir = next((d for d in (root / "20bn-something-something-v2", root / "videos") if d.is_dir()), None)
    frame_list = _frame_list_file(root, names)
    if frame_list is not None and (split_json is None or video_dir is None):
        labels = read_ssv2_labels(labels_json) if labels_json is not None else None
        by_id = _ssv2_ids(split_json, labels) if labels is not None and split_json is not None else None
        k = len(labels) if labels is not None else num_classes
        records = read_frame_list_records(frame_list, root, ("frames",), SSV2_FRAME_FPS, _ssv2_frame_target(by_id, k))
        classes = tuple(sorted(labels, key=labels.__getitem__)) if labels is not None else None
        files = tuple(str(f) for f in (labels_json, split_json, frame_list) if f is not None)
        return Annotations(tuple(records), k, classes, False, files)
    if labels_json is None or split_json is None:
        raise _missing(root, f"labels.json and {names[-1]}.json (optionally prefixed 'something-something-v2-'), "
                             f"or a frame list frame_lists/{names[0]}.csv")
    labels = read_ssv2_labels(labels_json)
    video_root = _first_dir([root / "20bn-something-something-v2", root / "videos"], root)
    records = read_ssv2_split(split_json, video_root, labels)
    classes = tuple(sorted(labels, key=labels.__getitem__))
    return Annotations(tuple(records), len(labels), classes, False, (str(labels_json), str(split_json)))


# ---------------------------------------------------------------- Charades
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
    header, rows = _csv_rows(csv_file)
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
    _raise_if(problems)
    return records


def load_charades(root: Path, split: str, num_classes: int) -> Annotations:
    """Charades v1 (see the module docstring); the val split is the official test CSV."""
    names = _split_names(split)
    name = "Charades_v1_train.csv" if split == "train" else "Charades_v1_test.csv"
    ann = _first_file([root / name, root / "annotations" / name, root / "Charades" / name])
    video_dirs = [root / "Charades_v1", root / "Charades_v1_480", root / "videos"]
    frame_list = _frame_list_file(root, names)
    if frame_list is not None and (ann is None or not any(d.is_dir() for d in video_dirs)):
        records = read_frame_list_records(frame_list, root, ("frames", "Charades_v1_rgb"), CHARADES_FRAME_FPS,
                                          _charades_frame_target(CHARADES_CLASSES))
        return Annotations(tuple(records), CHARADES_CLASSES, None, True, (str(frame_list),))
    if ann is None:
        raise _missing(root, f"{name}, or a frame list frame_lists/{names[0]}.csv")
    video_root = _first_dir(video_dirs, root)
    records = read_charades(ann, video_root, CHARADES_CLASSES)
    return Annotations(tuple(records), CHARADES_CLASSES, None, True, (str(ann),))


# ---------------------------------------------------------------- registry
Loader = Callable[[Path, str, int], Annotations]

DATASETS: dict[str, Loader] = {
    "kinetics400": load_kinetics,
    "kinetics600": load_kinetics,
    "kinetics700": load_kinetics,
    "kinetics": load_kinetics,
    "synthetic": load_kinetics,  # `harness data synth` writes the Kinetics path-label layout
    "ssv2": load_ssv2,
    "charades": load_charades,
}


def load_annotations(name: str, root: str | Path | None, split: str = "train", num_classes: int = 400) -> Annotations:
    """The annotations of `split` ("train", "val" or "test") of dataset `name` (data.name) under `root` (data.root).

    `num_classes` (data.num_classes) bounds integer labels where the layout does not name its classes.
    """
    if name not in DATASETS:
        raise SpecError(f"Unknown dataset 'data.name={name}'.{did_you_mean(name, DATASETS)} "
                        f"Known: {', '.join(DATASETS)}.")
    if root is None:
        raise SpecError("'data.root' is not set: point it at the dataset folder (e.g. data.root=/data/kinetics), "
                        "or make synthetic video with 'harness data synth --out DIR'.")
    root = Path(root).expanduser()
    if not root.is_dir():
        raise SpecError(f"'data.root' {str(root)!r} is not a directory.")
    try:
        annotations = DATASETS[name](root, split, num_classes)
    except OSError as err:  # an annotation file, or a folder searched for one, the file system refuses
        raise AnnotationError([unreadable_file(err, root)]) from None
    _warn_duplicates(annotations)
    return annotations


_WARNED: set[str] = set()  # files already warned about in this process (the splits are loaded more than once)


def _warn_duplicates(annotations: Annotations) -> None:
    """Warn once per file when videos are listed more than once: each copy would be trained on (and scored) as
    another video."""
    repeats = len(annotations.records) - len({r.path for r in annotations.records})
    listing = annotations.files[-1]  # the file that lists the videos (after any labels file)
    if repeats and listing not in _WARNED:
        _WARNED.add(listing)
        log.warning("%s lists %d video(s) more than once (duplicate lines): each copy counts as another video; "
                    "remove the duplicates", listing, repeats)
