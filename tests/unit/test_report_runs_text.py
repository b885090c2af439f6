"""The terminal's list of a suite's runs (report.page.runs_text)."""

from __future__ import annotations

from .report_records import SUITE, make_record


def test_runs_text_lists_every_run_for_the_terminal():
    from harness.report.page import runs_text

    chosen = [make_record("baseline", kind="baseline", train_s=100.0, top1=40.0),
              make_record("multigrid", train_s=25.0, top1=39.5)]
    lines = runs_text(SUITE, chosen).splitlines()
    assert lines[0] == "s at smoke scale:" and "speedup" in lines[1]
    assert lines[2].split()[:2] == ["baseline", "20"] and "1.00×" in lines[2]
    assert lines[3].split()[0] == "multigrid" and "4.00×" in lines[3] and lines[3].endswith("39.5")
    assert runs_text(SUITE, []) == "s: no complete runs recorded yet."
