"""What an annotation file says about one video, and the error raised when a file is malformed."""

from __future__ import annotations

import codecs
import os
import re
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from harness.data.errors import AnnotationError, AnnotationProblem
from harness.io import unreadable_reason


def path_under(path: Path, root: Path) -> Path | None:
    """`path` relative to `root` (data.root), as a copy that mirrors data.root places it; None if it is not under it.
    Read as written first, so a video folder that is a link to another disk (as MMAction2's set-up makes them) stays
    under data.root; then with links resolved, so a list that names its videos through a link to data.root, or by
    an absolute path through one, still finds them."""
    def lexical(p: Path) -> Path:
        return Path(os.path.normpath(p.absolute()))

    try:
        return lexical(path).relative_to(lexical(root))
    except ValueError:
        pass
    try:
        return path.resolve().relative_to(root.resolve())
    except (ValueError, OSError):  # OSError: a loop of links
        return None


@dataclass(frozen=True)
class Action:
    """A labelled time span inside a video (Charades): class `label` from `start` to `end` seconds."""

    label: int
    start: float
    end: float


@dataclass(frozen=True)
class VideoRecord:
    """One annotated video: its file, its class (single-label) or classes (multi-label), and timed actions."""

    path: Path
    label: int | tuple[int, ...]  # int: single-label (Kinetics, SSv2); tuple: multi-label (Charades)
    actions: tuple[Action, ...] = ()  # Charades: which classes happen when (clip-level targets in training)

    @property
    def multilabel(self) -> bool:
        return isinstance(self.label, tuple)


def unreadable_file(err: OSError, default: str | Path) -> AnnotationProblem:
    """The problem of an annotation file (or a folder on its way) that cannot be opened, with the fix."""
    path = err.filename or default
    return AnnotationProblem(str(path), 0, unreadable_reason(path, err))


# ---------------------------------------------------------------- reading annotation files as text
# A CR not followed by LF ends a line too: Excel for Mac's "CSV (Macintosh)" and old Mac tools end lines so.
_LONE_CR = re.compile(r"(?<=\r)(?!\n)")

def _not_utf8(path: str | Path, line: int, raw: bytes, start: int | None) -> AnnotationError:
    """The error for line `line` of `path` that is not UTF-8 (`start`: the byte that fails; None: NUL bytes)."""
    if line == 1 and raw[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        what = "the file is UTF-16 (it starts with a UTF-16 byte-order mark)"
    elif start is None:
        what = "the line holds NUL bytes: the file is probably UTF-16"
    else:
        what = (f"byte 0x{raw[start]:02x} at column {start + 1} is not UTF-8: the file is probably Latin-1, "
                f"Windows-1252 or another legacy encoding")
    return AnnotationError([AnnotationProblem(str(path), line, f"{what}; re-save the file as UTF-8")])


def text_lines(path: str | Path) -> Iterator[str]:
    """The lines of an annotation file (line endings kept: LF, CRLF or a lone CR), decoded as UTF-8, read one at a
    time; a UTF-8 byte-order mark at the start (spreadsheet programs write one) is dropped. AnnotationError names
    the first line that is not UTF-8 (Latin-1, UTF-16, ...) and the fix."""
    with open(path, "rb") as f:
        for n, raw in enumerate(f, start=1):
            if n == 1 and raw.startswith(codecs.BOM_UTF8):
                raw = raw[len(codecs.BOM_UTF8):]
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise _not_utf8(path, n, raw, err.start) from None
            if "\x00" in text:  # valid UTF-8, but UTF-16 of ASCII text without a byte-order mark looks like this
                raise _not_utf8(path, n, raw, None)
            yield from (line for line in _LONE_CR.split(text) if line)


def read_text(path: str | Path) -> str:
    """A whole annotation file as text, decoded as :func:`text_lines` does."""
    return "".join(text_lines(path))


def first_line(path: str | Path) -> str:
    """The first line of an annotation file (to tell its format), decoded as :func:`text_lines` does."""
    with closing(text_lines(path)) as lines:
        return next(lines, "")
