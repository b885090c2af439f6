"""The records a report reads (harness.report.inputs): seeds as mean ± std, newest settings only, subfolders aside."""

from __future__ import annotations

import json

import pytest

from harness.report.inputs import load_records, select_records
from harness.report.tables import paper_table
from tests.unit.report_records import PAPER, SUITE, make_record, seeded


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


def test_records_in_folders_below_a_scale_are_kept_aside(tmp_path):
    suite_dir = tmp_path / "s"
    (suite_dir / "smoke" / "old_settings").mkdir(parents=True)
    (suite_dir / "smoke" / "new.json").write_text(json.dumps(make_record("baseline", kind="baseline")))
    (suite_dir / "smoke" / "old_settings" / "old.json").write_text(json.dumps(make_record("multigrid")))
    records, _ = load_records(suite_dir)
    assert [r["_source"] for r in records] == ["smoke/new.json"]
