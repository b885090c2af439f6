"""The paper tables from hand-made records (speedups, group baselines, not run rows, mAP)."""

from __future__ import annotations

import pytest

from harness.report.inputs import suite_from_mapping
from harness.report.table_model import fmt
from harness.report.tables import NOT_IN_SUITE, NOT_RUN, OK, paper_table, runs_table

from .report_records import PAPER, SUITE, make_record
from .report_rows import row_where


def test_speedup_is_baseline_wall_clock_over_run_wall_clock():
    chosen = {"baseline": make_record("baseline", kind="baseline", train_s=120.0, iterations=64, gflops=8.0),
              "multigrid": make_record("multigrid", train_s=30.0, iterations=20, gflops=2.0)}
    table = paper_table("1a", SUITE, chosen, PAPER)
    mg = row_where(table, paper_row="4-shape (default)")
    assert mg["status"] == OK and mg["variant"] == "multigrid"
    assert mg["speedup"] == pytest.approx(4.0)
    assert mg["iteration_ratio"] == pytest.approx(3.2)
    assert mg["flops_ratio"] == pytest.approx(4.0)
    assert mg["paper_speedup"] == 4.5 and mg["paper_top1"] == 76.4
    assert mg["train_s"] == 30.0 and mg["gflops"] == 2.0 and mg["top1"] == 50.0
    assert row_where(table, paper_row="baseline")["speedup"] == pytest.approx(1.0)
    assert fmt(mg["speedup"], "ratio") == "4.00×"


def test_rows_without_records_are_not_run_and_paper_rows_outside_the_suite_are_marked():
    chosen = {"multigrid": make_record("multigrid")}
    table = paper_table("1a", SUITE, chosen, PAPER)
    base = row_where(table, paper_row="baseline")
    assert base["status"] == NOT_RUN and "no record yet" in base["note"]
    mg = row_where(table, paper_row="4-shape (default)")
    assert mg["speedup"] is None and "baseline has no record" in mg["note"]
    other = row_where(table, paper_row="2-shape")
    assert other["status"] == NOT_IN_SUITE and "same iterations as default multigrid" in other["note"]
    runs = runs_table(SUITE, chosen, PAPER)
    imagenet = row_where(runs, variant="imagenet_multigrid")
    assert imagenet["status"] == NOT_RUN and "needs model.pretrained" in imagenet["note"]


def test_each_row_is_compared_with_the_baseline_of_its_own_group():
    suite = suite_from_mapping("g", {"tables": ["2b"], "runs": {
        "t16_baseline": {"recipe": "k400_slowfast_r50_16f", "paper": [["2b", "T=16 baseline"]]},
        "t16_multigrid": {"recipe": "k400_slowfast_r50_16f", "paper": [["2b", "T=16 multigrid"]]},
        "baseline": {"recipe": "k400_slowfast_r50_8x8", "paper": [["2b", "T=32 baseline"]]},
        "multigrid": {"recipe": "k400_slowfast_r50_8x8", "paper": [["2b", "T=32 multigrid"]]}}})
    chosen = {"t16_baseline": make_record("t16_baseline", kind="baseline", train_s=50.0),
              "t16_multigrid": make_record("t16_multigrid", train_s=25.0),
              "baseline": make_record("baseline", kind="baseline", train_s=300.0),
              "multigrid": make_record("multigrid", train_s=60.0)}
    table = paper_table("2b", suite, chosen, PAPER)
    assert row_where(table, paper_row="T=16 multigrid")["speedup"] == pytest.approx(2.0)
    assert row_where(table, paper_row="T=32 multigrid")["speedup"] == pytest.approx(5.0)


def test_map_tables_show_map():
    suite = suite_from_mapping("c", {"tables": ["6"], "runs": {
        "baseline": {"recipe": "charades_slowfast_r50_16x8", "paper": [["6", "baseline"]]}}})
    chosen = {"baseline": make_record("baseline", kind="baseline", metric="map", top1=12.5)}
    table = paper_table("6", suite, chosen, PAPER)
    keys = [c.key for c in table.columns]
    assert "map" in keys and "paper_map" in keys and "top1" not in keys
    assert table.rows[0]["map"] == 12.5 and table.rows[0]["paper_map"] == 38.0
