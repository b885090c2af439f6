"""What an annotation file says about one video, and the error raised when a file is malformed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.spec import SpecError


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


@dataclass(frozen=True)
class AnnotationProblem:
    """One malformed annotation line: `file`, 1-based `line` (0 = the file as a whole) and `reason`."""

    file: str
    line: int
    reason: str

    def __str__(self) -> str:
        where = f"{self.file}, line {self.line}" if self.line else self.file
        return f"{where}: {self.reason}"


class AnnotationError(SpecError):
    """Annotation files are malformed. `problems` lists every bad line found; the message names the first ones."""

    def __init__(self, problems: list[AnnotationProblem], shown: int = 5):
        self.problems = list(problems)
        lines = [str(p) for p in self.problems[:shown]]
        more = len(self.problems) - shown
        if more > 0:
            lines.append(f"... and {more} more (run 'harness data check' to list them all)")
        super().__init__(f"{len(self.problems)} malformed annotation line(s):\n  " + "\n  ".join(lines))


class MissingAnnotations(AnnotationError):
    """The annotation files of a split are not where the layout expects them."""
