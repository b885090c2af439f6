"""The verdict (harness.report.verdict): the margin rule, convergence, equal-accuracy speedups, the orders of rows."""

from __future__ import annotations

import math

import pytest

from harness.report import verdict
from harness.report.tables import OK, Table
from harness.report.verdict import (
    convergence_sentence,
    ordering_sentences,
    paper_order_sentence,
    verdict_table,
)
from tests.unit.report_rows import runs
from tests.unit.welch_oracle import welch


def test_convergence_rule_is_shown_only_where_the_gains_upper_bound_meets_it():
    rows = runs(("baseline", 10, 0.25, 40.0, 10), ("baseline", 20, 0.5, 70.0, 20), ("baseline", 40, 1.0, 80.0, 40),
                ("baseline", 80, 2.0, 82.5, 80))
    sentence = convergence_sentence(rows)
    assert "gains ≤ 3 points is 40 epochs, by the point estimate only" in sentence and "no interval" in sentence
    rows[2:] = runs(("baseline", 40, 1.0, [79.8, 80.0, 80.2], 40), ("baseline", 80, 2.0, [81.0, 81.2, 81.4], 80))
    sentence = convergence_sentence(rows)
    assert "shown to gain ≤ 3 points (one-sided 95% upper bound) is 40 epochs" in sentence
    assert "40→80 epochs +1.2 ± 0.5" in sentence
    table = verdict.convergence_table(rows)
    assert [r["rule"] for r in table.rows][-1] == "≤ 3: shown" and table.rows[-1]["gain_upper"] < 3
    rows[-1].update(top1=90.0, top1_values=[89.8, 90.0, 90.2])
    assert "80 epochs or more (80→160 not run)" in convergence_sentence(rows)


def test_verdict_words_follow_the_margin_rule():
    # Spreads small against the 1-point margin: each run's interval sits clearly on one side of −δ or 0.
    rows = runs(("baseline", 40, 1.0, [80.0, 80.5, 79.5], 100), ("mg", 60, 1.5, [79.8, 80.2, 80.0], 40),
                ("mg", 40, 1.0, [70.0, 70.5, 69.5], 25), ("mg", 80, 2.0, [82.0, 82.3, 81.7], 50),
                ("mg", 30, 0.75, [79.0, 81.0, 75.0], 20))
    rows[1]["speedup"], rows[2]["speedup"] = 2.5, 4.0
    profile = {"scale": "proxy", "runs": [{"variant": "mg_1.5", "predicted_speedup": 2.5}]}
    table = verdict_table(rows, rows[0], [profile], "proxy")
    kept, lost, better, noisy = table.rows
    assert kept["verdict"] == "within δ" and kept["lower"] > -1 and kept["of_bound"] == pytest.approx(1.0)
    assert lost["verdict"] == "worse" and lost["bound"] is None
    assert better["verdict"] == "better" and better["lower"] > 0
    assert noisy["verdict"] == "inconclusive" and noisy["seeds_needed"] > 3
    assert "δ = 1 point(s)" in table.notes[0] and "Welch" in table.notes[0]
    assert verdict.verdict_sentences(table) == [
        "Against their baselines at the margin δ = 1 point(s): 1 better (mg_2.0); 1 within δ (mg_1.5); 1 worse "
        "(mg_1.0); 1 inconclusive (mg_0.75)."]
    # A wider margin turns the noisy run's open question into one the margin decides.
    assert verdict_table(rows, rows[0], margin=10.0).rows[3]["verdict"] == "within δ"

    def on(gpu, speedup):
        return {"scale": "proxy", "provenance": {"hardware": {"gpu": gpu}},
                "runs": [{"variant": "mg_1.5", "predicted_speedup": speedup}]}

    # The runs' card's profile is the bound where there is one; another card's is named as such.
    table = verdict_table(rows, rows[0], [on("H100", 2.0), on("H200", 2.5)], "proxy", gpu="H200")
    assert table.rows[0]["bound"] == 2.5 and "compares two cards" not in table.notes[0]
    table = verdict_table(rows, rows[0], [on("H100", 2.0)], "proxy", gpu="H200")
    assert table.rows[0]["bound"] == 2.0 and "(H100)" in table.notes[0] and "ran on H200" in table.notes[0]


def test_verdict_table_scores_map_suites_and_leaves_a_single_seed_undecided():
    # Charades: the runs table has mAP and no top-1. A side of one seed has no spread: the question stays open.
    rows = [{**r, "map": r.pop("top1"), "map_values": r.pop("top1_values")} | {"top1": None} for r in
            runs(("baseline", 40, 1.0, 30.0, 100), ("mg", 60, 1.5, 23.0, 40))]
    table = verdict_table(rows, rows[0])
    (row,) = table.rows
    assert row["score"] == 23.0 and row["delta"] == pytest.approx(-7.0)
    assert row["verdict"] == "inconclusive" and row["interval"] is None and row["sampling_interval"] is None
    assert [c.label for c in table.columns][3:5] == ["mAP", "Δ mAP vs baseline"]
    rows[0].update(map_values=[29.5, 30.0, 30.5], seed_list=[0, 1, 2], gpu_list=["H200"] * 3)
    assert verdict_table(rows, rows[0]).rows[0]["verdict"] == "inconclusive"  # the run's spread still unknown
    rows[1].update(map_values=[22.0, 23.0, 24.0], seed_list=[0, 1, 2], gpu_list=["H200"] * 3)
    (row,) = verdict_table(rows, rows[0]).rows
    _delta, half, df = welch([22.0, 23.0, 24.0], [29.5, 30.0, 30.5])
    assert row["verdict"] == "worse" and row["interval"] == pytest.approx(half) and row["df"] == pytest.approx(df)


def test_speedup_at_equal_accuracy_reads_the_baselines_time_accuracy_curve():
    rows = runs(("baseline", 20, 0.5, [60.0, 61.0], 50), ("baseline", 40, 1.0, [80.0, 81.0], 100),
                ("mg", 60, 1.5, [70.5, 70.5], 25), ("mg", 80, 2.0, [90.0, 90.0], 30),
                ("mg", 10, 0.25, [50.0, 50.0], 10))
    shorter, middle, above, below = verdict_table(rows, rows[1]).rows
    assert shorter["equal_accuracy_text"] == ""  # the curve itself
    # 70.5 sits halfway between the baseline's 60.5 at 50 s and 80.5 at 100 s: 75 s over the run's 25 s
    assert middle["equal_accuracy"] == pytest.approx(3.0) and middle["equal_accuracy_text"].startswith("3.00× [")
    assert above["equal_accuracy_text"] == "∞: no baseline run reaches it"
    assert below["equal_accuracy_text"].startswith("≤ 5.00×")  # even the shortest baseline run is ahead


def test_figure3_ordering_compares_each_point_with_the_baseline_curve_at_equal_time():
    rows = runs(("baseline", 20, 0.5, 60.0, 50), ("baseline", 40, 1.0, 80.0, 100),
                ("long", 40, 1.0, 75.0, 60), ("long", 80, 2.0, 70.0, 90), ("long", 10, 0.25, 30.0, 10))
    lines = ordering_sentences(rows)
    assert lines[0].startswith("Figure 3's ordering holds for 1 of 2")
    assert "1× +11.0 points (one seed: no interval)" in lines[1] and "2× -6.0 points" in lines[1]
    assert "outside" in lines[1] and "0 of them shown above" in lines[0]
    # With seeds, the difference to the interpolated curve has an interval over the point's and both runs' seeds.
    rows = runs(("baseline", 20, 0.5, [59.0, 61.0], 50), ("baseline", 40, 1.0, [79.0, 81.0], 100),
                ("long", 40, 1.0, [74.0, 76.0], 75))
    # 75 − (0.5·60 + 0.5·80), variance 2·(1 + 0.25·2 + 0.25·2)/2, df by Welch–Satterthwaite
    parts = [2 / 2, 0.25 * 2 / 2, 0.25 * 2 / 2]
    df = sum(parts) ** 2 / sum(v * v for v in parts)
    half = __import__("scipy").stats.t.ppf(0.975, df) * math.sqrt(sum(parts))
    lines = ordering_sentences(rows)
    assert f"1× +5.0 ± {half:.1f} points" in lines[1] and "1 of them shown above" in lines[0]


def test_verdict_names_the_runs_whose_bound_comes_from_another_card():
    rows = runs(("baseline", 40, 1.0, 80.0, 100), ("mg", 60, 1.5, 79.0, 40), ("mg", 40, 1.0, 70.0, 25))
    rows[1]["speedup"], rows[2]["speedup"] = 2.5, 4.0
    profile = {"scale": "proxy", "provenance": {"hardware": {"gpu": "H100"}},
               "runs": [{"variant": "mg_1.5", "predicted_speedup": 2.5}, {"variant": "mg_1.0", "predicted_speedup": 5}]}
    gpus = {"baseline_1.0": ["H200", "H100"], "mg_1.5": ["H200", "H200"], "mg_1.0": ["H100"]}
    table = verdict_table(rows, rows[0], [profile], "proxy", gpu="H200", run_gpus=gpus)
    assert [r["gpus"] for r in table.rows] == ["H200", "H100"] and "gpus" in [c.key for c in table.columns]
    assert "compares two cards for mg_1.5 (trained on another card" in table.notes[0]
    one_card = {k: ["H100"] for k in gpus}
    table = verdict_table(rows, rows[0], [profile], "proxy", gpu="H100", run_gpus=one_card)
    assert "two cards" not in table.notes[0] and "gpus" not in [c.key for c in table.columns]


def test_verdict_compares_each_run_with_its_own_baseline():
    # Two clip lengths, each with its baseline: the T=16 multigrid run is judged against the T=16 baseline, not the
    # suite's first one; baselines are not judged; a run whose baseline has no record is left out.
    rows = runs(("baseline", 40, 1.0, 80.0, 100), ("t16_baseline", 40, 1.0, 70.0, 80), ("t16_mg", 60, 1.5, 69.0, 30),
                ("orphan_mg", 60, 1.5, 50.0, 30))
    for row, base in zip(rows, ("baseline_1.0", "t16_baseline_1.0", "t16_baseline_1.0", None), strict=True):
        row["baseline_variant"] = base
    table = verdict_table(rows, rows[0])
    (row,) = table.rows
    assert row["variant"] == "t16_mg_1.5" and row["against"] == "t16_baseline_1.0"
    assert row["delta"] == pytest.approx(-1.0) and row["verdict"] == "inconclusive"  # one seed a side
    assert "against" not in [c.key for c in table.columns]
    assert table.notes[0].startswith("Against t16_baseline_1.0 (70.0%")
    rows[3]["baseline_variant"] = "baseline_1.0"  # two baselines in the table: each row names its own
    table = verdict_table(rows, rows[0])
    assert [r["against"] for r in table.rows] == ["t16_baseline_1.0", "baseline_1.0"]
    assert "against" in [c.key for c in table.columns] and table.notes[0].startswith("Each run against")


def test_paper_order_sentence_counts_pairs_in_the_papers_order():
    def row(name, paper_top1, top1, paper_speedup, speedup, status=OK):
        return {"paper_row": name, "paper_top1": paper_top1, "top1": top1, "paper_speedup": paper_speedup,
                "speedup": speedup, "status": status}

    table = Table("1b", "Table 1b: number of short-cycle shapes", (), (
        row("baseline", 75.6, 73.8, 1.0, 1.0), row("1-shape", 74.5, 75.2, 4.2, 1.6),
        row("3-shape", 76.4, 73.9, 4.5, 2.4), row("not run", 70.0, None, 9.0, None, status="not run")))
    sentence = paper_order_sentence(table)
    # top-1: baseline > 1-shape reversed, 3-shape > baseline tied (0.1), 3-shape > 1-shape reversed.
    assert sentence.startswith("Table 1b: top-1 does not hold: 0 of 3 pairs of rows in the paper's order, 1 tied")
    assert "speedup holds: 3 of 3 pairs" in sentence and "1-shape 4.20× / 1.60×" in sentence
    assert "not run" not in sentence
    assert paper_order_sentence(Table("6", "Table 6", (), (row("baseline", 1, 1, 1, 1),))) is None


def test_paper_order_sentence_holds_a_tie_of_the_paper_to_the_same_noise():
    def row(name, top1, speedup):
        return {"paper_row": name, "paper_top1": 72.5, "top1": top1, "paper_speedup": {"baseline": 1.0}.get(name, 3.35),
                "speedup": speedup, "status": OK}

    # The paper ties the two rows' top-1 (Table 4): a loss of 1.3 points here contradicts it, 0.3 keeps it.
    def table(multigrid_top1):
        return Table("4", "Table 4: 1-GPU", (), (row("baseline", 73.6, 1.0), row("multigrid", multigrid_top1, 2.5)))

    lost = paper_order_sentence(table(72.3))
    assert lost.startswith("Table 4: top-1 does not hold: 0 of the 1 pair(s) the paper ties within 0.5 points here")
    assert "speedup holds: 1 of 1 pairs of rows in the paper's order" in lost
    kept = paper_order_sentence(table(73.3))
    assert kept.startswith("Table 4: top-1 holds: 1 of the 1 pair(s) the paper ties within 0.5 points here")
