"""The one reader of run record files, for the report and `reproduce` alike: a record, or why the file is none
(unreadable, another tool's, an unfinished run's), so that the two always agree on which runs are done."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.io import unreadable_reason
from harness.records.run_checks import run_record_problem
from harness.spec import SpecError


def read_run_record(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """(the run record in `path`, None), or (None, why it is none: unreadable, not JSON or not UTF-8, truncated,
    another tool's file). The one test of a record file: the report leaves out what fails it, and `reproduce` does
    not count a run as recorded by it, so the two always agree on which runs are done. SpecError naming the file
    where the file system refuses it: that says nothing of its content."""
    try:
        # utf-8-sig: a record saved again by an editor that adds a byte-order mark (Windows tools do) is still one.
        record = json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except PermissionError as err:
        # Perhaps a whole record: counted as damaged, it would be moved aside and its run trained again.
        raise SpecError(f"Run record {path} {unreadable_reason(path, err)}; then start again.") from None
    except (OSError, ValueError) as err:  # ValueError: invalid JSON (a truncated write), or bytes that are not UTF-8
        return None, f"unreadable ({err})"
    problem = run_record_problem(record)  # JSON of another kind than an object included, named as such
    return (None, problem) if problem else (record, None)


COMPLETE = "complete"  # the status of a finished run's record (harness.train writes no other)


def incomplete_reason(record: dict[str, Any]) -> str | None:
    """Why the run record `record` (one read_run_record returns) is no finished run's, or None where it is one:
    the report shows only finished runs, and `reproduce` counts only those as done."""
    status = record.get("status")
    return None if status == COMPLETE else f"status {status!r}, not {COMPLETE!r}: not a finished run's record"


def read_complete_run_record(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """As read_run_record, and a record of an unfinished run (incomplete_reason) is none either: the one test of
    whether a file records a run done, for `reproduce` and the report alike."""
    record, problem = read_run_record(path)
    problem = problem or incomplete_reason(record)
    return (None, problem) if problem else (record, None)
