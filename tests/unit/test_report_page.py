"""A suite's report page from hand-made records: every string escaped, the same bytes for the same inputs, a
page without runs, the commits and dates it names."""

from __future__ import annotations

import re

from harness.report.inputs import suite_from_mapping
from harness.report.page import _commits_and_dates, build_report

from .report_records import PAPER, SUITE, make_record, tiny_spec

EVIL = "<script>alert('x')</script>"


def _evil_suite_and_records() -> tuple:
    suite = suite_from_mapping("s", {"description": f"desc {EVIL}", "tables": ["1a"], "runs": {
        EVIL: {"recipe": "k400_slowfast_r50_8x8", "paper": [["1a", "baseline"]]},
        "multigrid": {"recipe": "k400_slowfast_r50_8x8", "paper": [["1a", "4-shape (default)"]],
                      "figure": {"method": f"m {EVIL}", "epochs": 1.5}},
        "imagenet_multigrid": {"recipe": "k400_slowfast_r50_8x8", "requires": ["model.pretrained"]}}})
    base = make_record(EVIL, kind="baseline", train_s=100.0, spec=tiny_spec(False, data={"root": f"/d/{EVIL}"}))
    base["_source"] = f"smoke/{EVIL}.json"
    base["hardware"]["cpu"] = EVIL
    return suite, [base, make_record("multigrid", train_s=20.0)]


def test_report_escapes_every_string_and_is_a_pure_function_of_its_inputs():
    suite, records = _evil_suite_and_records()
    html, _ = build_report(suite, records, PAPER, notes=[f"note {EVIL}"])
    assert "<script" not in html.lower()
    assert "&lt;script&gt;alert(" in html
    assert html.count("<img ") == 3  # Figures 3, 2 and the data-wait chart, all embedded
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", html), "the page must be self-contained"
    assert "5.00×" in html and "not run" in html and "needs model.pretrained" in html
    assert "Smoke scale" in html
    again, _ = build_report(suite, list(reversed(records)), PAPER, notes=[f"note {EVIL}"])
    assert again == html  # same inputs (in any order), same bytes: no clock, no file reads


def test_report_without_records_says_so():
    html, tables = build_report(SUITE, [], PAPER)
    assert "No runs yet." in html and "0 of 3 runs" in html
    assert all(r["status"] != "ok" for r in tables[0].rows)


def test_a_commit_in_short_and_full_form_counts_once():
    full = "0123456789abcdef0123456789abcdef01234567"
    records = [{"seeds": {"commits": [full, "0123456"], "dates": ["2026-01-01"]}},
               {"provenance": {"commit": "fedcba9", "date": "2026-01-02"}}]
    assert _commits_and_dates(records)[0] == [full, "fedcba9"]
