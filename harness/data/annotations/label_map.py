"""Label maps (`classes.txt`): the class names of a video list, in index order, as MMAction2, PyTorchVideo and
UCF-101 write them."""

from __future__ import annotations

import json
import re
from pathlib import Path

from harness.data.annotation_records import read_text, text_lines
from harness.data.annotations.layout import raise_if
from harness.data.errors import AnnotationError, AnnotationProblem


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
    raise_if(problems)
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
    raise_if(problems)
    return tuple(by_index[i] for i in range(len(by_index)))
