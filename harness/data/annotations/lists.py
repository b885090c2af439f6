"""Video lists, one `path label` a line, as PySlowFast, PyTorchVideo and MMAction2 write them (Kinetics' other
layout, and the synthetic data's)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from pathlib import Path

from harness.data.annotation_records import VideoRecord, text_lines
from harness.data.annotations.layout import raise_if
from harness.data.errors import AnnotationProblem


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
    raise_if(problems)
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
