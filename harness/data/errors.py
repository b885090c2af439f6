"""The errors of the data layer: annotation files that cannot be read, videos that cannot be used, datasets that
are broken."""

from __future__ import annotations

from dataclasses import dataclass

from harness.spec import SpecError

# Why a video cannot be used. The keys are stable (they go into run records and `harness data check --json`).
REASONS = ("missing", "unreadable", "empty", "not_a_video", "no_video_stream", "undecodable", "truncated",
           "too_short")


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
        what = "malformed annotation line(s)" if any(p.line for p in self.problems) else "annotation file problem(s)"
        super().__init__(f"{len(self.problems)} {what}:\n  " + "\n  ".join(lines))


class MissingAnnotations(AnnotationError):
    """The annotation files of a split are not where the layout expects them."""


class UnlabelledSplit(MissingAnnotations):
    """A split's annotation file lists videos but gives none of them a label (a release's test split)."""


class VideoError(Exception):
    """A video cannot be used. `kind` is one of REASONS; the message says why."""

    def __init__(self, kind: str, message: str):
        assert kind in REASONS, kind
        self.kind = kind
        super().__init__(f"{kind}: {message}")


class DataError(RuntimeError):
    """Too many unreadable videos in a row: the dataset is broken, not one file."""

    def __str__(self) -> str:
        # Raised in a DataLoader worker, it comes back as DataError("Caught DataError in DataLoader worker ...
        # Original Traceback ... harness.data.errors.DataError: <message>"): the message is what a user needs.
        text = super().__str__()
        marker = f"{DataError.__module__}.{DataError.__qualname__}: "
        return text.rsplit(marker, 1)[-1].strip() if text.startswith("Caught ") and marker in text else text
