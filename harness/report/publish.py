"""Publishing a suite's report folder (reports/<suite>/): never over a report built from more records, or from an
unknown number of them, and all of its files at once.

The report's files are written into a temporary folder beside the report's, which is then swapped in: the old
folder renamed aside, the new one renamed in, the old one removed. A reader, or a run killed at any moment, sees
the old report or the new one, never tables of one and a page of the other. Files in the folder that the report
does not write (`harness report --screenshot`'s screenshot.png, a user's notes) are carried into the new folder.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness.spec import SpecError

# The files a report is made of; summary.json says how many run records it was built from.
REPORT_FILES = ("index.html", "tables.csv", "tables.md", "summary.json")


class FewerRecords(SpecError):
    """The report would replace one built from more run records, or from an unknown number of them (`refusal` says
    which, without the fix)."""

    def __init__(self, refusal: str):
        super().__init__(f"{refusal} Check --results, pass --force to replace it anyway, or --out DIR to write the "
                         f"report elsewhere.")
        self.refusal = refusal


def records_behind(folder: Path) -> tuple[int | None, str | None]:
    """(how many run records the report in `folder` was built from, None); (None, why that is unknown) where the
    folder holds a report's files but its summary.json does not say; (None, None) where it holds no report.
    Reports written before summary.json counted records say how many runs they showed ("done")."""
    summary_path = Path(folder) / "summary.json"
    present = [name for name in REPORT_FILES if (Path(folder) / name).exists()]
    if not present:
        return None, None
    try:
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, f"has no summary.json (it holds {', '.join(present)})"
    except (OSError, ValueError) as err:
        return None, f"has a summary.json that cannot be read ({err})"
    count = summary.get("records", summary.get("done")) if isinstance(summary, dict) else None
    if not isinstance(count, int) or isinstance(count, bool):
        return None, "has a summary.json that does not say how many run records it was built from"
    return count, None


def require_not_fewer(folder: Path, records: int, source: Path) -> None:
    """FewerRecords unless a report of `records` run records (from `source`) may replace the report in `folder`:
    where that one was built from more, or from a number its summary.json does not tell (unknown is not fewer)."""
    before, unknown = records_behind(folder)
    report = Path(folder) / "index.html"
    if unknown is not None:
        raise FewerRecords(f"The report in {folder} {unknown}, so how many run records it was built from is "
                           f"unknown: refusing to replace it with a report of the {records} in {source}.")
    if before is not None and records < before:
        raise FewerRecords(f"{report} was built from {before} run records, but {source} holds {records}: refusing "
                           f"to replace it with a report of fewer records.")
