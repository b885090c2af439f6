"""`auto`'s evidence (harness.train.choice_evidence) read from profiles, throughput records and the numerics table."""

from __future__ import annotations

import json

from harness.train.choice_evidence import card_evidence, numerics_passes, record_numerics_pass

from .helpers import CARD


def test_evidence_is_read_from_suite_profiles_throughput_records_and_the_numerics_table(tmp_path):
    def profile(folder, date, bn, ms):
        shapes = [{"model": "m", "t": 8, "s": 112, "batch": 32, "bn_splits": 4, "median_ms": ms}]
        record = {"suite": "s", "step": "cuda_graphs", "sub_batch_bn": bn, "shapes": shapes,
                  "provenance": {"date": date, "hardware": {"gpu": CARD}}}
        (tmp_path / "profile" / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / "profile" / folder / "s.json").write_text(json.dumps(record))

    profile("old", "2026-01-01", "triton", 40.0)
    profile("new", "2026-02-01", "triton", 30.0)  # the newest timing of a shape wins
    profile("all_blocks_experiment", "2026-03-01", None, 1.0)  # settings the trainer does not run: left out
    profile("before_the_choice", "2026-01-01", None, 60.0)  # no sub_batch_bn: made before it existed, auto
    rows = [{"model": "m", "mode": "compile_graphs", "setup_s": 90.0}, {"model": "m", "mode": "compile_graphs",
                                                                        "setup_s": 6.0}]
    (tmp_path / "throughput").mkdir()
    (tmp_path / "throughput" / "t.json").write_text(json.dumps({"device": CARD, "rows": rows}))
    evidence = card_evidence(CARD, tmp_path)
    assert evidence.step_ms == {("cuda_graphs", "triton", "m"): {(8, 112, 32, 4): 30.0},
                                ("cuda_graphs", "auto", "m"): {(8, 112, 32, 4): 60.0}}
    assert evidence.compile_s_per_shape == {"m": 90.0} and evidence.passed == frozenset()
    record_numerics_pass("sub_batch_bn=triton", CARD, {"iterations": 20}, tmp_path)
    record_numerics_pass("sub_batch_bn=triton", CARD, {"iterations": 30}, tmp_path)  # a later pass replaces it
    assert numerics_passes(CARD, tmp_path) == {"sub_batch_bn=triton"} and numerics_passes("other", tmp_path) == set()
    assert [p["iterations"] for p in json.loads((tmp_path / "numerics/fast_paths.json").read_text())["passes"]] == [30]
