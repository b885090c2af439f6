"""The selectors of harness.report.record_selectors: the one row of a named record, or an error naming the file."""

from __future__ import annotations

import json
import re

import pytest

from harness.report.record_selectors import EvidenceError, Records, claim

THROUGHPUT = "results/throughput/t.json"
PROFILE = "results/profile/p/kinetics_ablation.json"
LOG = "results/profile/b/bn_bench.log"


def _write(root, path, record) -> None:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(json.dumps(record) if isinstance(record, dict) else record, encoding="utf-8")


def _row(ms: float, **fields) -> dict:
    return {"recipe": "r", "model": "i3d_r50", "mode": "cuda_graphs", "t": 16, "s": 224, "batch": 8,
            "ms_per_step": ms, "setup_s": 0.2, "clips_per_s": None, "train_tflops": None, "share_of_matmul": None,
            **fields}


def _throughput(root, rows, gpu="NVIDIA H200") -> Records:
    _write(root, THROUGHPUT, {"matmul_tflops": 1.0, "rows": rows, "provenance": {"hardware": {"gpu": gpu}}})
    return Records(root)


def test_a_selector_reads_its_one_row_and_cites_the_file(tmp_path):
    rec = _throughput(tmp_path, [_row(50.0), _row(45.0, pad_stem_channels=8), _row(40.0, plain_bn_impl="triton")])
    assert rec.ms(THROUGHPUT, "H200", model="i3d_r50", mode="cuda_graphs", batch=8) == 50.0  # unnamed: the defaults
    assert rec.ms(THROUGHPUT, "H200", model="i3d_r50", mode="cuda_graphs", batch=8, pad_stem_channels=8) == 45.0
    assert rec.cited() == f"`{THROUGHPUT}`" and rec.cited() == "—"


def test_a_selector_that_matches_no_row_or_several_fails_naming_the_file_and_the_selector(tmp_path):
    rec = _throughput(tmp_path, [_row(50.0), _row(51.0, mode="eager"), _row(52.0, mode="eager")])
    with pytest.raises(EvidenceError, match=re.escape(f"{THROUGHPUT}: no rows match pad_stem_channels=0, "
                                                      "plain_bn_impl=cudnn, model=i3d_r50, mode=plain, batch=8")):
        rec.ms(THROUGHPUT, "H200", model="i3d_r50", mode="plain", batch=8)
    with pytest.raises(EvidenceError, match=re.escape(THROUGHPUT) + ": 2 rows match"):
        rec.ms(THROUGHPUT, "H200", model="i3d_r50", mode="eager", batch=8)


def test_a_record_of_another_card_or_setting_is_refused(tmp_path):
    rec = _throughput(tmp_path, [_row(50.0)], gpu="NVIDIA H100 80GB HBM3")
    with pytest.raises(EvidenceError, match="made on NVIDIA H100 80GB HBM3, not an H200"):
        rec.ms(THROUGHPUT, "H200", model="i3d_r50", mode="cuda_graphs", batch=8)
    run = {"variant": "multigrid", "iteration_ratio": 1.0, "predicted_gpu_hours": 4.5,
           "baseline_predicted_gpu_hours": 9.0, "predicted_speedup": 2.0}
    _write(tmp_path, PROFILE, {"step": "cuda_graphs", "runs": [run], "shapes": [],
                               "provenance": {"hardware": {"gpu": "NVIDIA H200"}}})
    assert rec.hours(PROFILE, "H200", "multigrid", step="cuda_graphs", sub_batch_bn="auto") == 4.5  # absent: auto
    with pytest.raises(EvidenceError, match=re.escape(PROFILE) + ": step is 'cuda_graphs', not 'eager'"):
        rec.hours(PROFILE, "H200", "multigrid", step="eager")
    with pytest.raises(EvidenceError, match="results/none.json: no such record"):
        rec.cite("results/none.json")


def test_a_bn_benchmark_log_is_parsed_and_a_line_of_another_form_fails(tmp_path):
    header = "one BN layer, forward + backward, 16×32×16×56×56 per process, NVIDIA H100 80GB HBM3 × 1\n"
    _write(tmp_path, LOG, header + "  plain    0.403 ms\n  sub-batch blocks k=2     0.785 ms\n"
                                   "  sub-batch triton k=2     0.877 ms\n")
    rec = Records(tmp_path)
    assert rec.bn_layer_ms(LOG, "H100") == {("blocks", 2): 0.785, ("triton", 2): 0.877}
    with pytest.raises(EvidenceError, match="no sub-batch timings on one H200"):
        rec.bn_layer_ms(LOG, "H200")
    _write(tmp_path, LOG, header + "  sub-batch blocks k=2     0.785 ms\n  sub-batch triton k=2     n/a\n")
    with pytest.raises(EvidenceError, match=re.escape(LOG) + ": line 3 is no BN timing"):
        rec.bn_layer_ms(LOG, "H100")


def test_a_finding_the_record_no_longer_shows_fails_naming_the_file():
    claim(True, THROUGHPUT, "Triton wins")
    with pytest.raises(EvidenceError, match=re.escape(THROUGHPUT) + ": no longer shows that Triton wins"):
        claim(False, THROUGHPUT, "Triton wins")
