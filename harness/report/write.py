"""The report's files: read a suite's records from a results folder, write reports/<suite>/ and the index of every
report (reports/index.html, overview.md and the README's results block)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.io import read_json_object, require_writable_dir, write_text_atomic
from harness.paths import reports_dir, results_root
from harness.records import RecordError, read_scaling_record, read_suite_profile, read_throughput_record
from harness.report import history, readme
from harness.report.inputs import load_records, load_suite_def, suite_names
from harness.report.markdown import without_html
from harness.report.overview import overview_markdown, overview_rows
from harness.report.page import build_index, build_report, report_answer, report_summary
from harness.report.publish import clean_stale, publish, require_not_fewer
from harness.report.table_model import Table
from harness.report.table_text import tables_csv, tables_markdown
from harness.report.tables import build_tables
from harness.spec import SpecError
from harness.suite import SuiteDef
from harness.suite import paper_rows as load_paper_rows


def _write(path: Path, text: str) -> Path:
    write_text_atomic(path, text)
    # The atomic write's temporary file is private (0600); a report is for reading (served, shared, opened).
    os.chmod(path, 0o644)
    return path


class NoRecords(SpecError):
    """The results folder holds no run record of the suite: there is nothing to report."""


def write_report(suite: str, results_dir: Path | None = None, out_dir: Path | None = None,
                 scale: str | None = None, gpus: int | None = None, force: bool = False) -> Path:
    """Read results/<suite>/*.json, write reports/<suite>/{index.html,tables.csv,tables.md,summary.json} and
    refresh reports/index.html; return the report's path. A missing results folder, one without records of the
    suite (NoRecords) and, unless `force`, a report that would replace one built from more records (or from a
    number its summary.json does not tell: publish.require_not_fewer) are errors:
    a wrong --results must not silently turn a published report into an empty one."""
    results_dir = Path(results_dir) if results_dir else results_root()
    out_dir = Path(out_dir) if out_dir else reports_dir()
    suite_def = load_suite_def(suite)
    if not results_dir.is_dir():
        raise SpecError(f"The results folder {results_dir} does not exist. Pass --results DIR, the folder that "
                        f"holds {suite}/ with the run records (default: results/ of this checkout); nothing was "
                        f"written.")
    records, problems = load_records(results_dir / suite)
    folder = out_dir / suite
    if not records:
        unusable = f" ({len(problems)} file(s) there are not run records)" if problems else ""
        raise NoRecords(f"{results_dir / suite} holds no run record of suite '{suite}'{unusable}. Run the suite "
                        f"first (harness reproduce --suite {suite}) or pass the --results folder that holds its "
                        f"records; {folder / 'index.html'} was left as it is.")
    clean_stale(folder)  # a write killed mid-swap: its old report back in place, its temporary files gone
    if not force:
        require_not_fewer(folder, len(records), results_dir / suite)
    for where in (out_dir, folder):  # before the report is built and the index rewritten; the swap renames folder
        require_writable_dir(where, "--out")
    html, tables, summary = _render(suite_def, results_dir, records, problems, scale, gpus)
    files = {"tables.csv": tables_csv(tables),
             "tables.md": f"# {suite}: {suite_def.description}\n\n" + tables_markdown(without_html(tables)),
             "summary.json": json.dumps(summary, indent=2) + "\n", "index.html": html}
    publish(folder, files)  # every file at once: a killed write leaves the old report whole
    write_index(out_dir, results_dir)
    return folder / "index.html"


def _render(suite_def: SuiteDef, results_dir: Path, records: Sequence[Mapping[str, Any]], problems: Sequence[str],
            scale: str | None, gpus: int | None, quiet: bool = False) -> tuple[str, list[Table], dict]:
    """A suite's report from its records and the other records of `results_dir` it reads: (HTML, tables,
    summary.json's content); the files left out are printed unless `quiet`."""
    suite = suite_def.name
    others: list[str] = []  # the other records' problems, named relative to results_dir
    profiles = _suite_profiles(results_dir, suite, others)
    # results/scaling/<suite>/<scale>/*.json: `harness scaling` records at 1 and N processes.
    scaling = read_measurements(sorted((results_dir / "scaling" / suite).glob("*/*.json")), results_dir,
                                read_scaling_record, others)
    throughput = read_measurements(sorted((results_dir / "throughput").glob("*.json")), results_dir,
                                   read_throughput_record, others)
    for problem in [] if quiet else [*(f"{suite}/{p}" for p in problems), *others]:  # as the report's notes say
        print(f"harness report: {results_dir}/{problem}", file=sys.stderr)
    kept = {d.name: history.load_kept(d) for d in sorted((results_dir / suite).iterdir()) if d.is_dir()}
    html, tables = build_report(suite_def, records, load_paper_rows(), scale, [*problems, *others], profiles, scaling,
                                throughput, gpus, kept)
    # "records": how many run records this report was built from, which the next write_report compares against.
    summary = {**report_summary(suite_def, records, scale, gpus), "records": len(records)}
    summary["overview"] = overview_rows(suite, summary["scale"], tables, profiles, suite_def.margin)
    summary["answer"] = report_answer(tables)
    return html, tables, summary


def summary_from_results(suite: str, results_dir: Path) -> dict | None:
    """What `write_report` would write into the suite's summary.json from `results_dir` (None: no records)."""
    records, problems = load_records(Path(results_dir) / suite)
    if not records:
        return None
    return _render(load_suite_def(suite), Path(results_dir), records, problems, None, None, quiet=True)[2]


def _suite_profiles(results_dir: Path, suite: str, notes: list[str] | None = None) -> list[dict]:
    """results/profile/<folder>/<suite>.json: `harness profile --suite` records (one per step mode or card); those
    that fail harness.records.read_suite_profile left out, with a note in `notes` where given."""
    return read_measurements(sorted((results_dir / "profile").glob(f"*/{suite}.json")), results_dir,
                             read_suite_profile, [] if notes is None else notes)


def read_measurements(paths: Iterable[Path], root: Path, read: Callable[[Path], dict],
                      notes: list[str]) -> list[dict]:
    """The records in `paths` that `read` (a reader of harness.records) takes; each other file left out with a note
    naming it (relative to `root`) and why. One edited by hand or written by another tool would otherwise end the
    report, and reports/index.html, which reads every suite's profiles, in a traceback."""
    records = []
    for path in paths:
        try:
            records.append(read(path))
        except RecordError as err:
            notes.append(f"{path.relative_to(root)}: not a record the report can read ({err.problem}), left out")
    return records


def _summary(path: Path) -> dict | None:
    """A report's summary.json, or None where there is none, or none write_report wrote (unreadable, edited): the
    index then lists that suite as one without a report, from its definition and profiles."""
    try:
        summary = read_json_object(path)
    except (OSError, ValueError):
        return None
    overview = summary.get("overview")
    if overview is not None and not (isinstance(overview, list) and all(isinstance(r, dict) for r in overview)):
        return None
    return summary


def write_index(out_dir: Path, results_dir: Path | None = None) -> Path:
    """Write reports/index.html and reports/overview.md from every suite definition and the reports that exist
    (a suite without a report contributes its paper rows with the predicted speedups of results/profile/)."""
    results_dir = Path(results_dir) if results_dir else results_root()
    summaries, overview = _index_rows(results_dir, {name: _summary(Path(out_dir) / name / "summary.json")
                                                    for name in suite_names()})
    _write(Path(out_dir) / "overview.md", overview_markdown(overview))
    if Path(out_dir).resolve() == reports_dir().resolve():  # the checkout's reports: its README too
        readme.write_block(reports_dir().parent / "README.md", readme_results(summaries, overview))
    names = set(suite_names())
    collections = sorted(d.name for d in Path(out_dir).iterdir()
                         if d.is_dir() and d.name not in names and (d / "index.html").is_file())
    return _write(Path(out_dir) / "index.html", build_index(summaries, overview, collections))


def _index_rows(results_dir: Path, summaries: Mapping[str, dict | None]) -> tuple[list[dict], list[dict]]:
    """The index's suite list and overview rows from each suite's summary (None: the suite has no report)."""
    listed, overview = [], []
    for name, summary in summaries.items():
        if summary is not None:
            listed.append({**summary, "href": f"{name}/index.html"})
        else:
            listed.append({"suite": name, "description": load_suite_def(name).description})
        # A report of predictions only keeps no overview rows: its paper rows then come with their predicted
        # speedups from results/profile/, as for a suite without a report.
        overview += (summary or {}).get("overview") or overview_rows(
            name, None, build_tables(load_suite_def(name), {}, load_paper_rows()), _suite_profiles(results_dir, name))
    return listed, overview


def readme_results_from_records(results_dir: Path | None = None) -> str:
    """The README's results block as the records of `results_dir` make it, every suite's report built afresh in
    memory (what `harness report` of every suite would write)."""
    results_dir = Path(results_dir) if results_dir else results_root()
    summaries = {name: json.loads(json.dumps(summary_from_results(name, results_dir))) for name in suite_names()}
    return readme_results(*_index_rows(results_dir, summaries))


def readme_results(summaries: Sequence[Mapping[str, Any]], overview: Sequence[Mapping[str, Any]]) -> str:
    """The README's results block from the reports' summaries."""
    answers = {str(s["suite"]): [str(line) for line in s.get("answer") or []] for s in summaries
               if isinstance(s.get("answer"), list)}
    return readme.results_block(overview, answers)
