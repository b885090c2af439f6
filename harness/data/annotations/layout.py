"""What every layout reader shares: the split names, finding a layout's files, and the Annotations it returns."""

from __future__ import annotations

import stat
from dataclasses import dataclass
from pathlib import Path

from harness.data.annotation_records import VideoRecord
from harness.data.errors import AnnotationError, AnnotationProblem, MissingAnnotations
from harness.spec import SpecError, did_you_mean

SPLITS = {"train": ("train",), "val": ("val", "validate", "validation"), "test": ("test",)}
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


def first_file(candidates: list[Path]) -> Path | None:
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


def first_dir(candidates: list[Path], default: Path) -> Path:
    return next((p for p in candidates if p.is_dir()), default)


def split_names(split: str) -> tuple[str, ...]:
    """The names a split's files go by ("val": also "validate", "validation"); SpecError for an unknown split."""
    if split not in SPLITS:
        raise SpecError(f"Unknown split '{split}'.{did_you_mean(split, SPLITS)} Use one of {', '.join(SPLITS)}.")
    return SPLITS[split]


def missing_files(root: Path, what: str) -> MissingAnnotations:
    return MissingAnnotations([AnnotationProblem(str(root), 0, f"no {what} found; check data.root and data.name")])


def raise_if(problems: list[AnnotationProblem]) -> None:
    if problems:
        raise AnnotationError(problems)
