"""A run against its baseline (harness.report.comparison): Welch intervals, one card, seed-pair speedup ranges."""

from __future__ import annotations

import math

import pytest

from harness.report.inputs import select_records
from harness.report.overview import overview_cells, overview_rows
from harness.report.tables import paper_table, runs_table
from harness.report.verdict import verdict_table
from tests.unit.report_records import PAPER, SUITE, seeded
from tests.unit.report_rows import runs
from tests.unit.welch_oracle import welch


def test_every_difference_gets_welchs_interval_and_the_overview_its_verdict():
    records = [seeded("baseline", s, top1, 100.0, kind="baseline") for s, top1 in ((0, 90.0), (1, 92.0), (2, 94.0))]
    records += [seeded("multigrid", 0, 80.0, 40.0), seeded("multigrid", 1, 84.0, 60.0)]
    _, chosen, _ = select_records(SUITE, records)
    table = paper_table("1a", SUITE, chosen, PAPER)
    rows = {r["variant"]: r for r in table.rows if r.get("variant")}
    delta, half, df = welch([80.0, 84.0], [90.0, 92.0, 94.0])
    assert rows["multigrid"]["top1_delta"] == pytest.approx(delta)
    assert rows["multigrid"]["top1_delta_interval"] == pytest.approx(half)
    assert rows["multigrid"]["top1_delta_df"] == pytest.approx(df) and 1 < df < 3
    assert half > 1.96 * math.hypot(2.0 / math.sqrt(3), 2.0)  # wider than the normal approximation
    assert rows["multigrid"]["top1_verdict"] == "worse"  # −10 points, the upper bound far below −1
    assert rows["baseline"].get("top1_delta_interval") is None  # its difference to itself is 0 by definition
    cells, note = overview_cells(overview_rows("s", "smoke", [table], []))
    by_run = {c[2]: c for c in cells}
    assert by_run["multigrid"][7] == f"-10.0 ± {half:.1f} (2 v 3)" and by_run["multigrid"][8] == "worse"
    assert by_run["baseline"][7] == "" and "Welch" in note and "δ = 1 point(s)" in note


def test_one_seed_a_side_has_no_interval_and_shows_the_validation_videos_error_apart():
    records = [seeded("baseline", 0, 50.0, 10.0, kind="baseline"), seeded("multigrid", 0, 60.0, 5.0)]
    _, chosen, _ = select_records(SUITE, records)
    row = next(r for r in runs_table(SUITE, chosen, PAPER).rows if r["variant"] == "multigrid")
    assert row["seeds"] == 1 and row["top1_std"] is None
    assert row["top1_delta_interval"] is None and row["top1_verdict"] == "inconclusive"
    # 1.96 √(p(1−p)/n) over both sides' 2,000 validation videos
    binomial = 100 * 1.959964 * math.sqrt(0.25 / 2000 + 0.24 / 2000)
    assert row["top1_sampling_interval"] == pytest.approx(binomial, rel=1e-5)


def test_accuracy_is_compared_on_one_card_where_the_arms_cards_differ():
    rows = runs(("baseline", 40, 1.0, [80.0, 80.5, 79.5], 100), ("mg", 60, 1.5, [79.8, 70.0, 70.0], 40))
    rows[1]["gpu_list"] = ["H200", "H100", "H100"]  # seeds 1 and 2 on a card the baseline never ran on
    (row,) = verdict_table(rows, rows[0]).rows
    assert row["compared"] == "1 v 3 on H200" and row["verdict"] == "inconclusive" and row["interval"] is None
    assert "compared on H200 alone" in row["cards"] and "all seeds: -6.73" in row["cards"]
    rows[0]["gpu_list"] = ["H200", "H100", "H100"]  # the same mix in both arms: every seed counts
    (row,) = verdict_table(rows, rows[0]).rows
    assert row["compared"] == "3 v 3" and row["cards"] == "both arms on H100 ×2, H200 ×1"


def test_speedup_has_an_interval_over_same_card_seed_pairs():
    rows = runs(("baseline", 40, 1.0, [80.0, 80.5, 79.5], 100), ("mg", 60, 1.5, [79.8, 80.2, 80.0], 40))
    rows[0]["train_s_values"], rows[1]["train_s_values"] = [100.0, 110.0, 90.0], [40.0, 50.0, 45.0]
    rows[1]["gpu_list"] = ["H200", "H200", "H100"]  # seed 2's card has no baseline seed 2: no pair
    (row,) = verdict_table(rows, rows[0]).rows
    ratios = [100 / 40, 110 / 50]
    logs = [math.log(r) for r in ratios]
    from scipy.stats import t
    half = t.ppf(0.975, 1) * abs(logs[0] - logs[1]) / math.sqrt(2) / math.sqrt(2)
    centre = sum(logs) / 2
    assert row["speedup_range"] == f"{math.exp(centre - half):.2f}–{math.exp(centre + half):.2f}× (2 pairs)"
