"""Something-Something v2: the labels JSON and the split JSONs of 20BN's release, as videos or extracted frames."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from harness.data.annotation_records import Action, VideoRecord, read_text
from harness.data.annotations.frame_lists import RowError, frame_list_file, read_frame_list_records
from harness.data.annotations.layout import (
    UNLABELLED,
    Annotations,
    first_dir,
    first_file,
    missing_files,
    raise_if,
    split_names,
)
from harness.data.errors import AnnotationError, AnnotationProblem, UnlabelledSplit
from harness.data.frames import SSV2_FRAME_FPS, ListedVideo, parse_frame_labels
from harness.spec import did_you_mean


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
    raise_if(problems)
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
    raise_if(problems)
    return records


def _ssv2_video(video_root: Path, video_id: str) -> Path:
    """`{id}.webm` as released, else `{id}.mp4` where the videos were converted (as several codebases do); the
    .webm path where neither exists, so a missing video is named as released."""
    webm = video_root / f"{video_id}.webm"
    if not webm.exists() and (mp4 := webm.with_suffix(".mp4")).exists():
        return mp4
    return webm



def _ssv2_frame_target(labels_by_id: dict[str, int] | None, num_classes: int
                       ) -> Callable[[ListedVideo], tuple[int, tuple[Action, ...]]]:
    def target(video: ListedVideo) -> tuple[int, tuple[Action, ...]]:
        if labels_by_id is not None and video.name in labels_by_id:
            return labels_by_id[video.name], ()
        _, _, field, line = video.rows[0]
        try:
            labels = parse_frame_labels(field, num_classes)
        except ValueError as err:
            raise RowError(line, str(err)) from None
        if len(labels) != 1:
            where = "not in the split JSON and " if labels_by_id is not None else ""
            raise RowError(line, f"{where}its labels column {field!r} is not one class index (missing label)")
        return labels[0], ()
    return target



def _ssv2_ids(split_json: Path, labels: dict[str, int]) -> dict[str, int]:
    """Video id → class index of a split JSON (read and checked as for videos; the id is the file's stem)."""
    return {r.path.stem: int(r.label) for r in read_ssv2_split(split_json, Path(), labels)}  # type: ignore[arg-type]


def load_ssv2(root: Path, split: str, num_classes: int) -> Annotations:
    """Something-Something v2, as videos or extracted frames (layouts in docs/data.md)."""
    names = split_names(split)
    prefixes = ("", "something-something-v2-")
    dirs = (root, root / "labels", root / "annotations")
    labels_json = first_file([d / f"{p}labels.json" for d in dirs for p in prefixes])
    split_json = first_file([d / f"{p}{n}.json" for n in names for d in dirs for p in prefixes])
    video_dir = next((d for d in (root / "20bn-something-something-v2", root / "videos") if d.is_dir()), None)
    frame_list = frame_list_file(root, names)
    if frame_list is not None and (split_json is None or video_dir is None):
        labels = read_ssv2_labels(labels_json) if labels_json is not None else None
        by_id = _ssv2_ids(split_json, labels) if labels is not None and split_json is not None else None
        k = len(labels) if labels is not None else num_classes
        records = read_frame_list_records(frame_list, root, ("frames",), SSV2_FRAME_FPS, _ssv2_frame_target(by_id, k))
        classes = tuple(sorted(labels, key=labels.__getitem__)) if labels is not None else None
        files = tuple(str(f) for f in (labels_json, split_json, frame_list) if f is not None)
        return Annotations(tuple(records), k, classes, False, files)
    if labels_json is None or split_json is None:
        raise missing_files(root, f"labels.json and {names[-1]}.json (optionally prefixed "
                                  f"'something-something-v2-'), or a frame list frame_lists/{names[0]}.csv")
    labels = read_ssv2_labels(labels_json)
    video_root = first_dir([root / "20bn-something-something-v2", root / "videos"], root)
    records = read_ssv2_split(split_json, video_root, labels)
    classes = tuple(sorted(labels, key=labels.__getitem__))
    return Annotations(tuple(records), len(labels), classes, False, (str(labels_json), str(split_json)))
