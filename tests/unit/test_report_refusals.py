"""`harness report` never turns a report into an emptier one by mistake: a missing results folder, one without the
suite's records and (unless --force) fewer records than the report was built from are errors that say so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .report_cli import run_report
from .report_records import results_folder

REPO = Path(__file__).resolve().parents[2]


def test_a_missing_results_folder_leaves_the_committed_report_alone(tmp_path, capsys):
    out = tmp_path / "reports"
    shutil.copytree(REPO / "reports" / "kinetics_ablation", out / "kinetics_ablation")
    before = (out / "kinetics_ablation" / "index.html").read_bytes()
    code, text = run_report(capsys, "--suite", "kinetics_ablation", "--results", "/nonexistent", "--out", str(out))
    assert code == 2 and "Traceback" not in text
    assert "results folder /nonexistent does not exist" in text and "--results DIR" in text
    assert (out / "kinetics_ablation" / "index.html").read_bytes() == before


def test_a_results_folder_without_the_suites_records_is_an_error(tmp_path, capsys):
    results, out = tmp_path / "results", tmp_path / "reports"
    (results / "smoke").mkdir(parents=True)
    (results / "smoke" / "notes.json").write_text("{}")
    code, text = run_report(capsys, "--suite", "smoke", "--results", str(results), "--out", str(out))
    assert code == 2
    assert f"{results / 'smoke'} holds no run record of suite 'smoke' (1 file(s) there" in text
    assert not (out / "smoke").exists()
    # `--suite all` over a folder of no suite's records is an error too.
    code, text = run_report(capsys, "--suite", "all", "--results", str(results), "--out", str(out))
    assert code == 2 and f"{results} holds no run record of any suite" in text and not out.exists()
    # `--suite all` reports the suites that have records and names the others.
    results_folder(tmp_path / "full")
    code, text = run_report(capsys, "--suite", "all", "--results", str(tmp_path / "full"), "--out", str(out))
    assert code == 0 and "no report for kinetics_ablation: no run records of it yet" in text
    assert (out / "smoke" / "index.html").is_file() and not (out / "kinetics_ablation").exists()


def test_fewer_records_than_the_report_was_built_from_need_force(tmp_path, capsys):
    out = tmp_path / "reports"
    full, partial = results_folder(tmp_path / "full"), results_folder(tmp_path / "partial", ("baseline",))
    assert run_report(capsys, "--suite", "smoke", "--results", str(full), "--out", str(out))[0] == 0
    assert json.loads((out / "smoke" / "summary.json").read_text())["records"] == 2
    before = (out / "smoke" / "index.html").read_bytes()
    code, text = run_report(capsys, "--suite", "smoke", "--results", str(partial), "--out", str(out))
    assert code == 2 and "built from 2 run records" in text and "holds 1: refusing" in text and "--force" in text
    assert (out / "smoke" / "index.html").read_bytes() == before
    code, _ = run_report(capsys, "--suite", "smoke", "--results", str(partial), "--out", str(out), "--force")
    assert code == 0 and json.loads((out / "smoke" / "summary.json").read_text())["records"] == 1


def test_a_report_written_before_the_record_count_counts_its_runs(tmp_path, capsys):
    out = tmp_path / "reports"
    (out / "smoke").mkdir(parents=True)
    (out / "smoke" / "summary.json").write_text(json.dumps({"suite": "smoke", "done": 2, "total": 2}))
    code, text = run_report(capsys, "--suite", "smoke", "--results", str(results_folder(tmp_path / "r", ("baseline",))),
                         "--out", str(out))
    assert code == 2 and "built from 2 run records" in text


@pytest.mark.parametrize("summary", [None, '{"suite": "smoke", "records": ', '["smoke"]', '{"suite": "smoke"}'],
                         ids=["missing", "truncated", "a-list", "without-a-count"])
def test_a_report_whose_record_count_is_unknown_needs_force(tmp_path, capsys, summary):
    """Unknown is not fewer: a report whose summary.json is missing or does not say how many records it was built
    from is not replaced without --force. A folder without a report's files (empty, a screenshot) is written."""
    out, results = tmp_path / "reports", results_folder(tmp_path / "r", ("baseline",))
    folder = out / "smoke"
    folder.mkdir(parents=True)
    (folder / "screenshot.png").write_bytes(b"png")
    assert run_report(capsys, "--suite", "smoke", "--results", str(results), "--out", str(out))[0] == 0
    (folder / "summary.json").unlink()
    if summary is not None:
        (folder / "summary.json").write_text(summary)
    before = (folder / "index.html").read_bytes()
    code, text = run_report(capsys, "--suite", "smoke", "--results", str(results), "--out", str(out))
    assert code == 2 and f"The report in {folder}" in text and "is unknown: refusing to replace it" in text
    assert "--force" in text and (folder / "index.html").read_bytes() == before
    code, _ = run_report(capsys, "--suite", "smoke", "--results", str(results), "--out", str(out), "--force")
    assert code == 0 and json.loads((folder / "summary.json").read_text())["records"] == 1
