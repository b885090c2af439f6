"""Paper-row matching: runs to paper rows (rows of one name told apart by model), and where weights started."""

from __future__ import annotations

import copy

from harness.report.inputs import suite_from_mapping
from harness.report.tables import paper_table, runs_table

from .report_records import PAPER, SUITE, make_record
from .report_rows import row_where


def test_rows_of_the_same_name_are_told_apart_by_model():
    suite = suite_from_mapping("m", {"tables": ["3"], "runs": {
        "i3d_multigrid": {"recipe": "k400_i3d_r50", "paper": [["3", "multigrid"]]},
        "i3d_nl_multigrid": {"recipe": "k400_i3d_nl_r50", "paper": [["3", "multigrid"]]}}})
    table = paper_table("3", suite, {}, PAPER)
    assert row_where(table, paper_row="i3d_r50: multigrid")["variant"] == "i3d_multigrid"
    assert row_where(table, paper_row="i3d_nl_r50: multigrid")["variant"] == "i3d_nl_multigrid"
    runs = runs_table(suite, {}, PAPER)
    assert row_where(runs, variant="i3d_multigrid")["paper_top1"] == 74.8
    assert row_where(runs, variant="i3d_nl_multigrid")["paper_top1"] == 75.5


def test_each_table_says_where_its_runs_weights_started_beside_the_papers():
    suite = suite_from_mapping("c", {"tables": ["6"], "runs": {
        "baseline": {"recipe": "charades_slowfast_r50_16x8", "paper": [["6", "baseline"]]}}})
    scratch = make_record("baseline", kind="baseline", metric="map", top1=12.5)
    (note,) = [n for n in paper_table("6", suite, {"baseline": scratch}, PAPER).notes if "scratch" in n]
    assert note.startswith("Trained from scratch where the paper starts from Kinetics-400 weights: baseline")
    tuned = copy.deepcopy(scratch)
    tuned["spec"]["model"]["pretrained"] = "/ckpt/k400/checkpoint_000012000.pt"
    notes = paper_table("6", suite, {"baseline": tuned}, PAPER).notes
    assert "Started from checkpoint_000012000.pt (model.pretrained): baseline." in notes
    assert not any("scratch" in n for n in notes)
    # Rows the paper trains from scratch too say nothing.
    assert not any("scratch" in n or "Started" in n for n in paper_table("1a", SUITE, {
        "baseline": make_record("baseline", kind="baseline")}, PAPER).notes)
