"""Several seeds per run (mean ± std in the tables), the verdict (accuracy kept, convergence rule, Figure 3's
ordering), and one run recorded under two suites."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from harness.config import compose
from harness.report import verdict
from harness.report.inputs import load_records, select_records
from harness.report.overview import overview_cells, overview_rows
from harness.report.tables import OK, Table, paper_table, runs_table
from harness.report.verdict import (
    convergence_sentence,
    ordering_sentences,
    paper_order_sentence,
    verdict_table,
)
from harness.results import record_path, recorded, reuse_record, same_run_elsewhere
from tests.unit.test_report_tables import PAPER, SUITE, make_record


def seeded(variant: str, seed: int, top1: float, train_s: float, **kw) -> dict:
    record = make_record(variant, top1=top1, train_s=train_s, **kw)
    record["spec"]["seed"] = seed
    record["final"]["videos"] = 2000
    return record


def test_seeds_of_a_run_become_mean_and_std_and_a_rerun_counts_as_another_run():
    records = [seeded("baseline", s, top1, t, kind="baseline") for s, top1, t in
               ((0, 90.0, 100.0), (1, 92.0, 110.0), (2, 94.0, 90.0))]
    records += [seeded("multigrid", 0, 80.0, 40.0), seeded("multigrid", 1, 84.0, 60.0)]
    records.append(seeded("multigrid", 1, 82.0, 50.0, date="2025-01-01T00:00:00+00:00"))  # seed 1 run again
    _, chosen, notes = select_records(SUITE, records)
    base, mg = chosen["baseline"], chosen["multigrid"]
    assert base["final"]["top1"] == pytest.approx(92.0) and base["seeds"]["top1_std"] == pytest.approx(2.0)
    assert base["seeds"]["n"] == 3 and base["seeds"]["seeds"] == [0, 1, 2]
    assert mg["seeds"]["n"] == 3 and mg["seeds"]["seeds"] == [0, 1, 1] and mg["final"]["top1"] == pytest.approx(82.0)
    assert any("a rerun of 'multigrid' seed 1, counted as another run" in n for n in notes)
    row = next(r for r in paper_table("1a", SUITE, chosen, PAPER).rows if r.get("variant") == "multigrid")
    assert row["speedup"] == pytest.approx(100.0 / 50.0)
    assert row["seeds"] == 3 and row["top1_std"] == pytest.approx(2.0)
    # The same file twice is one run.
    _, again, notes = select_records(SUITE, [*records, dict(records[-1])])
    assert again["multigrid"]["seeds"]["n"] == 3 and any("counted once" in n for n in notes)


def _welch(a, b):
    """Welch's interval written out from its definition, independently of the harness."""
    from statistics import mean, variance

    from scipy.stats import t
    va, vb = variance(a) / len(a), variance(b) / len(b)
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    return mean(a) - mean(b), t.ppf(0.975, df) * math.sqrt(va + vb), df


def test_every_difference_gets_welchs_interval_and_the_overview_its_verdict():
    records = [seeded("baseline", s, top1, 100.0, kind="baseline") for s, top1 in ((0, 90.0), (1, 92.0), (2, 94.0))]
    records += [seeded("multigrid", 0, 80.0, 40.0), seeded("multigrid", 1, 84.0, 60.0)]
    _, chosen, _ = select_records(SUITE, records)
    table = paper_table("1a", SUITE, chosen, PAPER)
    rows = {r["variant"]: r for r in table.rows if r.get("variant")}
    delta, half, df = _welch([80.0, 84.0], [90.0, 92.0, 94.0])
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


def test_only_the_seeds_of_a_runs_newest_settings_are_averaged():
    # Seed 0 trained from new pre-trained weights, seed 1 from older ones: averaging them would mix two settings.
    old = seeded("multigrid", 1, 20.0, 40.0, date="2025-01-01T00:00:00+00:00")
    old["spec"]["model"]["pretrained"] = "/root/hdata/synthetic/proxy-resnet50-lr0.1.pt"
    new = seeded("multigrid", 0, 70.0, 40.0)
    new["spec"]["model"]["pretrained"] = "/root/hdata/synthetic/proxy-resnet50-lr0.025.pt"
    again = seeded("multigrid", 2, 72.0, 40.0)  # the same generated file on another machine counts as the same
    again["spec"]["model"]["pretrained"] = "/home/u/.cache/multigrid-harness/synthetic/proxy-resnet50-lr0.025.pt"
    records = [new, again, old, seeded("baseline", 0, 90.0, 100.0, kind="baseline")]
    _, chosen, notes = select_records(SUITE, records)
    assert chosen["multigrid"]["seeds"]["seeds"] == [0, 2] and chosen["multigrid"]["final"]["top1"] == 71.0
    assert any("'multigrid' with other settings" in n for n in notes)


def test_one_seed_a_side_has_no_interval_and_shows_the_validation_videos_error_apart():
    records = [seeded("baseline", 0, 50.0, 10.0, kind="baseline"), seeded("multigrid", 0, 60.0, 5.0)]
    _, chosen, _ = select_records(SUITE, records)
    row = next(r for r in runs_table(SUITE, chosen, PAPER).rows if r["variant"] == "multigrid")
    assert row["seeds"] == 1 and row["top1_std"] is None
    assert row["top1_delta_interval"] is None and row["top1_verdict"] == "inconclusive"
    # 1.96 √(p(1−p)/n) over both sides' 2,000 validation videos
    binomial = 100 * 1.959964 * math.sqrt(0.25 / 2000 + 0.24 / 2000)
    assert row["top1_sampling_interval"] == pytest.approx(binomial, rel=1e-5)


def _runs(*points):
    """Runs-table rows: (method, epochs, epochs_x, top1, train_s), top1 a score or a list of the seeds' scores."""
    rows = []
    for m, e, x, a, t in points:
        scores = list(a) if isinstance(a, (list, tuple)) else [a]
        rows.append({"status": "ok", "kind": "baseline" if m == "baseline" else "multigrid", "method": m,
                     "epochs": e, "epochs_x": x, "variant": f"{m}_{x}", "top1": sum(scores) / len(scores),
                     "top1_values": scores, "train_s": t, "train_s_values": [t] * len(scores),
                     "seed_list": list(range(len(scores))), "gpu_list": ["H200"] * len(scores), "videos": 2000,
                     "seeds": len(scores)})
    return rows


def test_convergence_rule_is_shown_only_where_the_gains_upper_bound_meets_it():
    rows = _runs(("baseline", 10, 0.25, 40.0, 10), ("baseline", 20, 0.5, 70.0, 20), ("baseline", 40, 1.0, 80.0, 40),
                 ("baseline", 80, 2.0, 82.5, 80))
    sentence = convergence_sentence(rows)
    assert "gains ≤ 3 points is 40 epochs, by the point estimate only" in sentence and "no interval" in sentence
    rows[2:] = _runs(("baseline", 40, 1.0, [79.8, 80.0, 80.2], 40), ("baseline", 80, 2.0, [81.0, 81.2, 81.4], 80))
    sentence = convergence_sentence(rows)
    assert "shown to gain ≤ 3 points (one-sided 95% upper bound) is 40 epochs" in sentence
    assert "40→80 epochs +1.2 ± 0.5" in sentence
    table = verdict.convergence_table(rows)
    assert [r["rule"] for r in table.rows][-1] == "≤ 3: shown" and table.rows[-1]["gain_upper"] < 3
    rows[-1].update(top1=90.0, top1_values=[89.8, 90.0, 90.2])
    assert "80 epochs or more (80→160 not run)" in convergence_sentence(rows)


def test_verdict_words_follow_the_margin_rule():
    # Spreads small against the 1-point margin: each run's interval sits clearly on one side of −δ or 0.
    rows = _runs(("baseline", 40, 1.0, [80.0, 80.5, 79.5], 100), ("mg", 60, 1.5, [79.8, 80.2, 80.0], 40),
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
            _runs(("baseline", 40, 1.0, 30.0, 100), ("mg", 60, 1.5, 23.0, 40))]
    table = verdict_table(rows, rows[0])
    (row,) = table.rows
    assert row["score"] == 23.0 and row["delta"] == pytest.approx(-7.0)
    assert row["verdict"] == "inconclusive" and row["interval"] is None and row["sampling_interval"] is None
    assert [c.label for c in table.columns][3:5] == ["mAP", "Δ mAP vs baseline"]
    rows[0].update(map_values=[29.5, 30.0, 30.5], seed_list=[0, 1, 2], gpu_list=["H200"] * 3)
    assert verdict_table(rows, rows[0]).rows[0]["verdict"] == "inconclusive"  # the run's spread still unknown
    rows[1].update(map_values=[22.0, 23.0, 24.0], seed_list=[0, 1, 2], gpu_list=["H200"] * 3)
    (row,) = verdict_table(rows, rows[0]).rows
    _delta, half, df = _welch([22.0, 23.0, 24.0], [29.5, 30.0, 30.5])
    assert row["verdict"] == "worse" and row["interval"] == pytest.approx(half) and row["df"] == pytest.approx(df)


def test_accuracy_is_compared_on_one_card_where_the_arms_cards_differ():
    rows = _runs(("baseline", 40, 1.0, [80.0, 80.5, 79.5], 100), ("mg", 60, 1.5, [79.8, 70.0, 70.0], 40))
    rows[1]["gpu_list"] = ["H200", "H100", "H100"]  # seeds 1 and 2 on a card the baseline never ran on
    (row,) = verdict_table(rows, rows[0]).rows
    assert row["compared"] == "1 v 3 on H200" and row["verdict"] == "inconclusive" and row["interval"] is None
    assert "compared on H200 alone" in row["cards"] and "all seeds: -6.73" in row["cards"]
    rows[0]["gpu_list"] = ["H200", "H100", "H100"]  # the same mix in both arms: every seed counts
    (row,) = verdict_table(rows, rows[0]).rows
    assert row["compared"] == "3 v 3" and row["cards"] == "both arms on H100 ×2, H200 ×1"


def test_speedup_has_an_interval_over_same_card_seed_pairs():
    rows = _runs(("baseline", 40, 1.0, [80.0, 80.5, 79.5], 100), ("mg", 60, 1.5, [79.8, 80.2, 80.0], 40))
    rows[0]["train_s_values"], rows[1]["train_s_values"] = [100.0, 110.0, 90.0], [40.0, 50.0, 45.0]
    rows[1]["gpu_list"] = ["H200", "H200", "H100"]  # seed 2's card has no baseline seed 2: no pair
    (row,) = verdict_table(rows, rows[0]).rows
    ratios = [100 / 40, 110 / 50]
    logs = [math.log(r) for r in ratios]
    from scipy.stats import t
    half = t.ppf(0.975, 1) * abs(logs[0] - logs[1]) / math.sqrt(2) / math.sqrt(2)
    centre = sum(logs) / 2
    assert row["speedup_range"] == f"{math.exp(centre - half):.2f}–{math.exp(centre + half):.2f}× (2 pairs)"


def test_speedup_at_equal_accuracy_reads_the_baselines_time_accuracy_curve():
    rows = _runs(("baseline", 20, 0.5, [60.0, 61.0], 50), ("baseline", 40, 1.0, [80.0, 81.0], 100),
                 ("mg", 60, 1.5, [70.5, 70.5], 25), ("mg", 80, 2.0, [90.0, 90.0], 30),
                 ("mg", 10, 0.25, [50.0, 50.0], 10))
    shorter, middle, above, below = verdict_table(rows, rows[1]).rows
    assert shorter["equal_accuracy_text"] == ""  # the curve itself
    # 70.5 sits halfway between the baseline's 60.5 at 50 s and 80.5 at 100 s: 75 s over the run's 25 s
    assert middle["equal_accuracy"] == pytest.approx(3.0) and middle["equal_accuracy_text"].startswith("3.00× [")
    assert above["equal_accuracy_text"] == "∞: no baseline run reaches it"
    assert below["equal_accuracy_text"].startswith("≤ 5.00×")  # even the shortest baseline run is ahead


def test_figure3_ordering_compares_each_point_with_the_baseline_curve_at_equal_time():
    rows = _runs(("baseline", 20, 0.5, 60.0, 50), ("baseline", 40, 1.0, 80.0, 100),
                 ("long", 40, 1.0, 75.0, 60), ("long", 80, 2.0, 70.0, 90), ("long", 10, 0.25, 30.0, 10))
    lines = ordering_sentences(rows)
    assert lines[0].startswith("Figure 3's ordering holds for 1 of 2")
    assert "1× +11.0 points (one seed: no interval)" in lines[1] and "2× -6.0 points" in lines[1]
    assert "outside" in lines[1] and "0 of them shown above" in lines[0]
    # With seeds, the difference to the interpolated curve has an interval over the point's and both runs' seeds.
    rows = _runs(("baseline", 20, 0.5, [59.0, 61.0], 50), ("baseline", 40, 1.0, [79.0, 81.0], 100),
                 ("long", 40, 1.0, [74.0, 76.0], 75))
    # 75 − (0.5·60 + 0.5·80), variance 2·(1 + 0.25·2 + 0.25·2)/2, df by Welch–Satterthwaite
    parts = [2 / 2, 0.25 * 2 / 2, 0.25 * 2 / 2]
    df = sum(parts) ** 2 / sum(v * v for v in parts)
    half = __import__("scipy").stats.t.ppf(0.975, df) * math.sqrt(sum(parts))
    lines = ordering_sentences(rows)
    assert f"1× +5.0 ± {half:.1f} points" in lines[1] and "1 of them shown above" in lines[0]


def test_records_in_folders_below_a_scale_are_kept_aside(tmp_path):
    suite_dir = tmp_path / "s"
    (suite_dir / "smoke" / "old_settings").mkdir(parents=True)
    (suite_dir / "smoke" / "new.json").write_text(json.dumps(make_record("baseline", kind="baseline")))
    (suite_dir / "smoke" / "old_settings" / "old.json").write_text(json.dumps(make_record("multigrid")))
    records, _ = load_records(suite_dir)
    assert [r["_source"] for r in records] == ["smoke/new.json"]


def test_the_same_run_under_another_suite_is_reused_not_retrained(tmp_path):
    def spec_of(suite: str, variant: str, seed: int = 0):
        return compose(["recipe=k400_slowfast_r50_8x8", "num_gpus=1", "scale=smoke", f"seed={seed}",
                        "multigrid.long_cycle=false", "multigrid.short_cycle=false", f"suite={suite}",
                        f"variant={variant}", f"output_dir=/tmp/{variant}"])
    source_spec = spec_of("figure", "baseline_1.0x")
    record = {**make_record("baseline_1.0x", kind="baseline"), "spec": source_spec.to_dict(), "suite": "figure"}
    source = record_path(source_spec, tmp_path)
    source.parent.mkdir(parents=True)
    source.write_text(json.dumps(record))
    (source.parent / "baseline_1.0x__another_tool.json").write_bytes(b"\xff\xfe[]")  # not UTF-8: passed over
    (source.parent / "baseline_1.0x__list.json").write_text("[1]")
    table_spec = spec_of("table", "baseline")
    assert same_run_elsewhere(table_spec, tmp_path) == source
    assert recorded(spec_of("figure", "baseline_1.0x", seed=1), tmp_path) is None
    assert same_run_elsewhere(spec_of("table", "baseline", seed=1), tmp_path) is None  # another seed: another run
    written = reuse_record(source, table_spec, tmp_path)
    copy = json.loads(Path(written).read_text())
    assert written == record_path(table_spec, tmp_path)
    assert (copy["suite"], copy["variant"], copy["spec"]["variant"]) == ("table", "baseline", "baseline")
    assert copy["same_run_as"] == str(source.relative_to(tmp_path)) and copy["measured"] == record["measured"]



def test_a_record_made_where_the_data_folder_had_another_path_counts_as_recorded(tmp_path):
    """A GPU host generates the same synthetic dataset under its own data folder: its records in this checkout
    are this run's record. A user's dataset at another path is another dataset."""
    def spec_of(root: str, seed: int = 0):
        return compose(["recipe=k400_slowfast_r50_8x8", "num_gpus=1", "scale=smoke", f"seed={seed}",
                        "suite=s", "variant=v", "data.name=synthetic", f"data.root={root}"])
    there = spec_of("/root/hdata/synthetic/smoke-classes4")
    source = record_path(there, tmp_path)
    source.parent.mkdir(parents=True)
    source.write_text(json.dumps({**make_record("v"), "spec": there.to_dict()}))
    here = spec_of("/home/me/.cache/multigrid-harness/synthetic/smoke-classes4")
    assert record_path(here, tmp_path) != source and recorded(here, tmp_path) == source
    assert recorded(there, tmp_path) == source
    assert recorded(spec_of("/home/me/.cache/multigrid-harness/synthetic/smoke-classes8"), tmp_path) is None
    assert recorded(spec_of("/home/me/.cache/multigrid-harness/synthetic/smoke-classes4", seed=1), tmp_path) is None
    user_there, user_here = spec_of("/data/kinetics"), spec_of("/mnt/kinetics")
    path = record_path(user_there, tmp_path)
    path.write_text(json.dumps({**make_record("v"), "spec": user_there.to_dict()}))
    assert recorded(user_here, tmp_path) is None and recorded(user_there, tmp_path) == path


def test_verdict_names_the_runs_whose_bound_comes_from_another_card():
    rows = _runs(("baseline", 40, 1.0, 80.0, 100), ("mg", 60, 1.5, 79.0, 40), ("mg", 40, 1.0, 70.0, 25))
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
    rows = _runs(("baseline", 40, 1.0, 80.0, 100), ("t16_baseline", 40, 1.0, 70.0, 80), ("t16_mg", 60, 1.5, 69.0, 30),
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


def test_an_overview_without_profiles_says_so():
    """Results with no profile record beside them (a folder of runs of another setting) leave the predicted
    column empty and say why, rather than naming an unknown GPU."""
    row = {"table": "5", "paper_row": "baseline", "variant": "baseline", "scale": "proxy", "speedup": 1.0}
    _, note = overview_cells([row])
    assert "no `harness profile` record" in note and "?" not in note
    _, note = overview_cells([{**row, "predicted_gpu": "Card X", "predicted_speedup": 2.0}])
    assert "on one Card X" in note


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
