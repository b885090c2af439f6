"""The setups table: each run under every setup, timed against the same seed on the same card."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from harness.report.setups_table import setups_table

from .report_records import SUITE, make_record
from .report_rows import row_where


def test_setups_table_compares_each_run_across_setups():
    def two(record):
        return {**record, "world_size": 2, "shape_checks": record["plan"]["iterations"]}

    one = {"baseline": make_record("baseline", kind="baseline", train_s=100.0, top1=40.0),
           "multigrid": make_record("multigrid", train_s=40.0, top1=38.0)}
    double = {"baseline": two(make_record("baseline", kind="baseline", train_s=80.0, top1=39.0)),
              "multigrid": two(make_record("multigrid", train_s=20.0, top1=37.0))}
    table = setups_table(SUITE, {"2 GPUs, eager steps": double, "1 GPU, eager steps": one}, "1 GPU, eager steps")
    assert [(r["variant"], r["setup"]) for r in table.rows] == [
        ("baseline", "1 GPU, eager steps"), ("baseline", "2 GPUs, eager steps"),
        ("multigrid", "1 GPU, eager steps"), ("multigrid", "2 GPUs, eager steps")]
    mg2 = row_where(table, variant="multigrid", setup="2 GPUs, eager steps")
    assert mg2["speedup"] == pytest.approx(4.0) and mg2["vs_main"] == pytest.approx(2.0)
    assert mg2["top1"] == 37.0 and mg2["shape_checks"] == 20
    assert row_where(table, variant="multigrid", setup="1 GPU, eager steps")["shape_checks"] is None
    assert setups_table(SUITE, {"1 GPU, eager steps": one}, "1 GPU, eager steps") is None


def test_another_setups_run_is_timed_against_the_same_seed_on_the_same_card():
    def run(seed: int, gpu: str, train_s: float, impl: str = "auto") -> dict[str, Any]:
        record = copy.deepcopy(make_record("multigrid", train_s=train_s))
        record["spec"]["seed"], record["spec"]["train"]["sub_batch_bn"] = seed, impl
        record["hardware"] = {"gpu": gpu, "gpu_memory_gib": 80, "cpu_count": 16}
        record["step"] = {"mode": "cuda_graphs", "setup_s": 1.0, "specialisations": 3}
        return record

    main_newest, main_same_seed = run(3, "H100", 120.0), run(1, "H200", 110.0)
    triton = run(1, "H200", 100.0, "triton")
    main_setup, other = "1 GPU, cuda_graphs steps", "1 GPU, cuda_graphs steps, sub-batch BN triton"
    by_setup = {main_setup: {"multigrid": main_newest}, other: {"multigrid": triton}}
    table = setups_table(SUITE, by_setup, main_setup, [main_newest, main_same_seed])
    assert row_where(table, setup=other)["vs_main"] == pytest.approx(1.1)  # seed 1 on the H200, not seed 3 on the H100
    assert row_where(table, setup=main_setup)["vs_main"] == pytest.approx(1.0)
    elsewhere = run(1, "A100", 100.0, "triton")  # no run of the main setup on that card: no ratio
    table = setups_table(SUITE, {main_setup: {"multigrid": main_newest}, other: {"multigrid": elsewhere}},
                         main_setup, [main_newest, main_same_seed])
    assert row_where(table, setup=other)["vs_main"] is None
    two_gpus = {**run(1, "H200", 55.0), "world_size": 2}  # the same card, more of them: timed against seed 1
    table = setups_table(SUITE, {main_setup: {"multigrid": main_newest}, "2 GPUs, cuda_graphs steps":
                                 {"multigrid": two_gpus}}, main_setup, [main_newest, main_same_seed])
    assert row_where(table, setup="2 GPUs, cuda_graphs steps")["vs_main"] == pytest.approx(2.0)
