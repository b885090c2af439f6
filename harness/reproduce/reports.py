"""The report `harness reproduce` writes once its runs are done, into a folder checked before any run."""

from __future__ import annotations

from pathlib import Path

from harness.io import require_writable_dir
from harness.paths import reports_beside
from harness.spec import SpecError


def require_report_folder(suite: str, reports: Path) -> None:
    """SpecError naming reports/<suite> (or reports/, whose index.html the report rewrites) where it cannot be
    written: found before any run, not after all of them."""
    fix = (f"Pass --out DIR, a folder of reports you can create and write, make {reports / suite} writable, or "
           f"pass --no-report and write the report later with 'harness report --suite {suite} --out DIR'.")
    for folder in (reports, reports / suite):
        require_writable_dir(folder.absolute(), "--out", fix)


def write_suite_report(suite: str, results: Path, gpus: int | None, reports: Path | None = None) -> None:
    """Write the report of `suite`'s records in `results` into `reports` (default: reports/ beside them), with the
    tables of the setup on `gpus` GPUs where one is recorded, and print its runs' table and its path."""
    reports = Path(reports) if reports else reports_beside(results)
    require_report_folder(suite, reports)  # named as reproduce names it, not as report's --out
    try:
        from harness.report.inputs import NoSuchSetup, load_records, load_suite_def
        from harness.report.page import runs_text
        from harness.report.publish import FewerRecords
        from harness.report.write import write_report
    except ImportError:
        print("reports are not available in this version; records are in", results / suite)
        return
    try:
        try:
            path = write_report(suite, results, reports, gpus=gpus)
        except NoSuchSetup:  # nothing of this suite recorded on that many GPUs yet: the default setup
            gpus = None
            path = write_report(suite, results, reports)
    except FewerRecords as err:  # reproduce has no --force: name the command that has it
        raise SpecError(f"{err.refusal} The runs' records are kept in {results / suite}; to replace the report "
                        f"anyway run 'harness report --suite {suite} --results {results} --out {reports} --force', "
                        f"or pass --out DIR to write it elsewhere.") from None
    print(runs_text(load_suite_def(suite), load_records(results / suite)[0], gpus=gpus))
    print(f"report: {path}")
