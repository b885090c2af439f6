"""The data-wait table: per phase, the per-GPU batch and BN layout that ran and the time per iteration."""

from __future__ import annotations

import pytest

from harness.report.data_wait_table import data_wait_table, layout_text

from .report_records import SUITE, make_record


def test_phases_show_the_per_gpu_batches_and_bn_layout_that_ran():
    assert layout_text([8], 2, 1) == "8/GPU, BN split 2"
    assert layout_text([8, 2, 4], 1, 4) == "2–8/GPU, BN sync 4"
    assert layout_text([16], 1, 1) == "16/GPU, plain BN"
    assert layout_text([], 1, 1) == ""  # records from before layouts were noted
    record = make_record("multigrid")
    record["measured"]["phases"][0] |= {"per_gpu_batches": [1, 2, 4], "bn_splits": 1, "bn_sync": 2}
    rows = data_wait_table(SUITE, {"multigrid": record}).rows
    assert rows[0]["layout"] == "1–4/GPU, BN sync 2" and rows[-1]["phase"] == "all"
    assert rows[0]["ms_per_iteration"] == pytest.approx(1000 * 10.0 / 20)  # wall 10 s over 20 iterations
