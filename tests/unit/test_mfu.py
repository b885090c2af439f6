"""FLOPs utilisation arithmetic (harness.measure.mfu): FLOPs from fvcore's multiply-adds, shares of peak and matmul."""

from __future__ import annotations

import math

import pytest
import torch

from harness.measure.mfu import gpu_matmul_tflops, mfu_fields, peak_tflops


def test_a_clip_trains_at_six_flops_per_forward_multiply_add():
    # SlowFast R50 8×8 at 32×224²: ~50.6 G multiply-adds forward (fvcore), so ~304 GFLOP to train on one clip; at
    # 118 clips/s that is ~35.8 TFLOP/s, 3.6% of an H200's 989 and 4.5% of a measured 800 TFLOP/s matmul.
    m = mfu_fields(50.6, 118.0, peak=989.0, matmul=800.0)
    assert m["train_gflop_per_clip"] == pytest.approx(303.6)
    assert m["achieved_tflop_s"] == pytest.approx(303.6 * 118 / 1e3)
    assert m["share_of_peak"] == pytest.approx(m["achieved_tflop_s"] / 989) == pytest.approx(0.0362, abs=1e-4)
    assert m["share_of_matmul"] == pytest.approx(m["achieved_tflop_s"] / 800)
    assert (m["forward_gmacs_per_clip"], m["peak_tflop_s"], m["matmul_tflop_s"]) == (50.6, 989.0, 800.0)


def test_shares_are_left_out_where_the_ceiling_is_unknown_or_the_step_ran_out_of_memory():
    cpu = mfu_fields(10.0, 2.0, peak=None, matmul=None)
    assert cpu["achieved_tflop_s"] == pytest.approx(0.12) and cpu["share_of_peak"] is cpu["share_of_matmul"] is None
    oom = mfu_fields(10.0, math.nan, peak=989.0, matmul=800.0)
    assert math.isnan(oom["achieved_tflop_s"]) and oom["share_of_peak"] is None


@pytest.mark.parametrize(("card", "peak"), [("NVIDIA H100 80GB HBM3", 989.0), ("NVIDIA H100 PCIe", 756.0),
                                            ("NVIDIA H100 NVL", 835.0), ("NVIDIA H200", 989.0),
                                            ("NVIDIA A100-SXM4-80GB", 312.0), ("NVIDIA A100 80GB PCIe", 312.0),
                                            ("NVIDIA GeForce RTX 4090", None), (None, None)])
def test_the_peak_is_the_datasheets_dense_bf16_figure_for_the_card(card, peak):
    assert peak_tflops(card) == peak


def test_no_matmul_rate_is_measured_on_a_cpu():
    assert gpu_matmul_tflops(torch.device("cpu")) is None
