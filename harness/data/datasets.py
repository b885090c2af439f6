"""Readers of the annotation layouts the reference implementation expects, and the registry of dataset names.

Every reader checks every line and raises one :class:`AnnotationError` listing each malformed line with its
file and line number (missing label, label out of range, unknown class), so a bad file fails at load time,
not hours into training. Video files are not opened here (``harness data check`` does that).

Layouts under ``data.root`` (first match wins):

- Kinetics / synthetic: ``{split}.csv`` or ``annotations/{split}.csv``, either ``relative/path.mp4 label``
  lines (PySlowFast; optional ``classes.txt``) or the official CSV ``label,youtube_id,time_start,time_end,split``
  with videos ``{youtube_id}_{time_start:06d}_{time_end:06d}.mp4`` in ``{split}/``, ``videos/`` or the root;
  classes are the train CSV's labels sorted alphabetically.
- SSv2: ``[something-something-v2-]labels.json`` (template → index) and ``[...-]train.json`` /
  ``[...-]validation.json`` (lists of {id, label, template, placeholders}); videos ``{id}.webm`` in
  ``20bn-something-something-v2/``, ``videos/`` or the root. The class is the template without brackets.
- Charades: ``Charades_v1_train.csv`` / ``Charades_v1_test.csv`` (``id,...,actions`` with actions like
  ``c092 11.90 21.20;c147 0.00 12.60``); videos ``{id}.mp4`` in ``Charades_v1/``, ``Charades_v1_480/``,
  ``videos/`` or the root; multi-label targets over 157 classes.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.data.records import Action, AnnotationError, AnnotationProblem, MissingAnnotations, VideoRecord
from harness.spec import SpecError, did_you_mean

SPLITS = {"train": ("train",), "val": ("val", "validate", "validation"), "test": ("test",)}
CHARADES_CLASSES = 157
KINETICS_CSV_HEADER = ("label", "youtube_id", "time_start", "time_end")


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
    return next((p for p in candidates if p.is_file()), None)


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
def read_path_label_list(list_file: Path, root: Path, num_classes: int) -> list[VideoRecord]:
    """`relative/path.mp4 label` lines (paths may hold spaces; the label is the last field)."""
    records, problems = [], []
    for n, raw in enumerate(Path(list_file).read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.rsplit(maxsplit=1)
        if len(parts) < 2:
            problems.append(AnnotationProblem(str(list_file), n, f"missing label: expected 'path label', got {line!r}"))
            continue
        path, label = parts
        try:
            value = int(label)
        except ValueError:
            problems.append(AnnotationProblem(str(list_file), n, f"label {label!r} is not an integer class index"))
            continue
        if not 0 <= value < num_classes:
            problems.append(AnnotationProblem(
                str(list_file), n, f"label {value} is out of range [0, {num_classes}) (data.num_classes or "
                                   f"classes.txt sets the number of classes)"))
            continue
        records.append(VideoRecord(root / path, value))
    if not records and not problems:
        problems.append(AnnotationProblem(str(list_file), 0, "lists no videos"))
    _raise_if(problems)
    return records


def _csv_rows(csv_file: Path) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """Header and (line number, row) pairs of a CSV file, line numbers 1-based as an editor shows them."""
    with open(csv_file, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
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
    if missing:
        raise AnnotationError([AnnotationProblem(str(csv_file), 1, f"header lacks column(s) {missing}; expected "
                                                                   f"{','.join(KINETICS_CSV_HEADER)},split")])
    index = {name: i for i, name in enumerate(classes)}
    records, problems = [], []
    for n, row in rows:
        label = (row.get("label") or "").strip()
        if not label:
            problems.append(AnnotationProblem(str(csv_file), n, "missing label"))
            continue
        if label not in index:
            problems.append(AnnotationProblem(str(csv_file), n, f"unknown class {label!r} (not in the train CSV)"
                                              + did_you_mean(label, classes)))
            continue
        try:
            name = f"{row['youtube_id'].strip()}_{int(row['time_start']):06d}_{int(row['time_end']):06d}.mp4"
        except (ValueError, AttributeError):
            problems.append(AnnotationProblem(str(csv_file), n, f"bad youtube_id/time_start/time_end in {row}"))
            continue
        path = video_root / name
        if not path.exists() and (video_root / label / name).exists():  # some downloaders sort videos by class
            path = video_root / label / name
        records.append(VideoRecord(path, index[label]))
    if not records and not problems:
        problems.append(AnnotationProblem(str(csv_file), 0, "lists no videos"))
    _raise_if(problems)
    return records


def _sniff_official_csv(path: Path) -> bool:
    with open(path, encoding="utf-8") as f:
        first = f.readline().strip().lower().replace(" ", "")
    return first.startswith("label,youtube_id")


def load_kinetics(root: Path, split: str, num_classes: int) -> Annotations:
    """Kinetics in either layout (see the module docstring); `synthetic` data uses the path-label layout."""
    names = _split_names(split)
    ann = _first_file([d / f"{n}.csv" for n in names for d in (root, root / "annotations")])
    if ann is None:
        raise _missing(root, f"{names[0]}.csv (or annotations/{names[0]}.csv)")
    if _sniff_official_csv(ann):
        train_csv = _first_file([root / "train.csv", root / "annotations" / "train.csv"]) or ann
        classes = kinetics_csv_classes(train_csv)
        video_root = _first_dir([root / n for n in names] + [root / "videos" / n for n in names] + [root / "videos"],
                                root)
        records = read_kinetics_csv(ann, video_root, classes)
        return Annotations(tuple(records), len(classes), classes, False, (str(ann),))
    classes_file = _first_file([root / "classes.txt", root / "annotations" / "classes.txt"])
    classes = None
    if classes_file is not None:
        classes = tuple(c.strip() for c in classes_file.read_text(encoding="utf-8").splitlines() if c.strip())
        num_classes = len(classes)
    records = read_path_label_list(ann, root, num_classes)
    return Annotations(tuple(records), num_classes, classes, False, (str(ann),))


# ---------------------------------------------------------------- Something-Something v2
def _json_array_entries(path: Path) -> list[tuple[int, object]]:
    """The entries of a JSON array file with the line each starts on (json.load loses line numbers)."""
    text = path.read_text(encoding="utf-8")
    decoder = json.JSONDecoder()
    pos = len(text) - len(text.lstrip())
    if not text[pos:pos + 1] == "[":
        raise AnnotationError([AnnotationProblem(str(path), 1, "expected a JSON list of {id, template, ...}")])
    pos += 1
    entries = []
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            break
        line = text.count("\n", 0, pos) + 1
        try:
            obj, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as err:
            raise AnnotationError([AnnotationProblem(str(path), err.lineno, f"invalid JSON: {err.msg}")]) from err
        entries.append((line, obj))
    return entries


def read_ssv2_labels(labels_json: Path) -> dict[str, int]:
    """The labels JSON: class template (without brackets) → index (the index may be a string, as published)."""
    try:
        raw = json.loads(labels_json.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise AnnotationError([AnnotationProblem(str(labels_json), err.lineno, f"invalid JSON: {err.msg}")]) from err
    if not isinstance(raw, dict):
        raise AnnotationError([AnnotationProblem(str(labels_json), 1, "expected a JSON object {template: index}")])
    labels, problems = {}, []
    for name, value in raw.items():
        try:
            labels[name] = int(value)
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
    for line, entry in _json_array_entries(split_json):
        if not isinstance(entry, dict) or "id" not in entry:
            problems.append(AnnotationProblem(str(split_json), line, "entry is not an object with an 'id'"))
            continue
        template = entry.get("template")
        if not template:
            problems.append(AnnotationProblem(str(split_json), line,
                                              f"video {entry['id']}: missing label ('template')"))
            continue
        name = str(template).replace("[", "").replace("]", "")
        if name not in labels:
            problems.append(AnnotationProblem(str(split_json), line, f"video {entry['id']}: unknown class {name!r}"
                                              + did_you_mean(name, labels)))
            continue
        records.append(VideoRecord(video_root / f"{entry['id']}.webm", labels[name]))
    if not records and not problems:
        problems.append(AnnotationProblem(str(split_json), 0, "lists no videos"))
    _raise_if(problems)
    return records


def load_ssv2(root: Path, split: str, num_classes: int) -> Annotations:
    """Something-Something v2 (see the module docstring)."""
    names = _split_names(split)
    prefixes = ("", "something-something-v2-")
    dirs = (root, root / "labels", root / "annotations")
    labels_json = _first_file([d / f"{p}labels.json" for d in dirs for p in prefixes])
    split_json = _first_file([d / f"{p}{n}.json" for n in names for d in dirs for p in prefixes])
    if labels_json is None or split_json is None:
        raise _missing(root, f"labels.json and {names[-1]}.json (optionally prefixed 'something-something-v2-')")
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
            actions.append(Action(label, float(start), float(end)))
        except ValueError:
            raise ValueError(f"action {item!r} has non-numeric times") from None
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
    _split_names(split)
    name = "Charades_v1_train.csv" if split == "train" else "Charades_v1_test.csv"
    ann = _first_file([root / name, root / "annotations" / name, root / "Charades" / name])
    if ann is None:
        raise _missing(root, name)
    video_root = _first_dir([root / "Charades_v1", root / "Charades_v1_480", root / "videos"], root)
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
    return DATASETS[name](root, split, num_classes)
