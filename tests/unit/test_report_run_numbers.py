"""What a run record says about how the tables show it: a resumed run, a model other than the paper's."""

from __future__ import annotations

from typing import Any

import pytest

from harness.report.tables import paper_table, runs_table

from .report_records import PAPER, SUITE, make_record
from .report_rows import row_where


def test_resumed_runs_are_noted_whether_the_record_says_so_or_its_times_do():
    fresh = make_record("baseline", kind="baseline", train_s=100.0)
    fresh |= {"resumed_from_iteration": 0, "outside_steps": {"total_s": 110.0}}

    def notes(multigrid: dict[str, Any]) -> dict[str, str]:
        return {r["variant"]: r["note"] for r in runs_table(SUITE, {"baseline": fresh, "multigrid": multigrid},
                                                             PAPER).rows}

    resumed = make_record("multigrid", train_s=30.0) | {"resumed_from_iteration": 8, "outside_steps": {"total_s": 12.0}}
    assert notes(resumed)["baseline"] == ""
    assert notes(resumed)["multigrid"].startswith("resumed at iteration 8:")
    # Records from before the trainer stored it: resumed when the last attempt is shorter than the train time.
    older = make_record("multigrid", train_s=30.0) | {"outside_steps": {"total_s": 12.0}}
    assert notes(older)["multigrid"].startswith("resumed:")
    assert notes(make_record("multigrid", train_s=30.0) | {"outside_steps": {"total_s": 40.0}})["multigrid"] == ""


def test_a_users_model_is_not_set_beside_the_papers_numbers():
    from harness.report.page import build_report

    chosen = {"baseline": make_record("baseline", kind="baseline", train_s=120.0),
              "multigrid": make_record("multigrid", train_s=40.0)}
    for record in chosen.values():
        record["plan"].update(model="mypkg.models:tiny", paper_model=False)
    table = paper_table("1a", SUITE, chosen, PAPER)
    row = row_where(table, variant="multigrid")
    assert row["paper_speedup"] is None and row["paper_top1"] is None and row["paper_row"] == "4-shape (default)"
    assert "not the paper's model" in row["note"] and row["speedup"] == pytest.approx(3.0)
    runs = row_where(runs_table(SUITE, chosen, PAPER), variant="multigrid")
    assert runs["paper_speedup"] is None and "not the paper's model" in runs["note"]
    html, _ = build_report(SUITE, list(chosen.values()), PAPER)
    assert "multigrid vs baseline on mypkg.models:tiny" in html
