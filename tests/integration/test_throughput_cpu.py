"""`harness throughput` on the CPU: the plain loop timed beside the trainer step, where a step's time goes, and
Triton BN refused before timing."""

from __future__ import annotations

import pytest


def test_throughput_times_the_plain_loop_beside_the_trainer_step_on_cpu():
    from harness.measure.throughput import measure_throughput
    from harness.records import ThroughputRecord

    record = measure_throughput(("k400_i3d_r50",), (1,), ("plain", "eager", "cuda_graphs", "compile_graphs"),
                                device="cpu", warmup=0, repeats=1)
    ThroughputRecord(**record)  # the fields its record type names, no more, no fewer
    assert record["skipped"] == ["cuda_graphs", "compile_graphs"] and record["matmul_tflops"] > 0
    assert [r["mode"] for r in record["rows"]] == ["plain", "eager"]
    for row in record["rows"]:
        assert (row["t"], row["s"], row["batch"]) == (16, 224, 1)  # the recipe's baseline shape
        assert row["ms_per_step"] > 0 and row["clips_per_s"] == pytest.approx(1e3 / row["ms_per_step"])
        # I3D R50: 37.3 forward GFLOPs a clip at 8×256² (model zoo), so 2 × 37.3 × (224/256)² at 16×224²; a
        # training step counts as 3 forward passes.
        forward = 2 * 37.3 * (224 / 256) ** 2
        assert row["train_tflops"] == pytest.approx(3 * forward / row["ms_per_step"], rel=0.05)
        # `mfu` counts FLOPs: 2 a multiply-add; on a CPU no bf16 peak or matmul to share out.
        mfu = row["mfu"]
        assert mfu["train_gflop_per_clip"] == pytest.approx(6 * forward, rel=0.05)
        assert mfu["achieved_tflop_s"] == pytest.approx(2 * row["train_tflops"])
        assert mfu["share_of_peak"] is None and mfu["share_of_matmul"] is None
    assert "2 (FLOPs per multiply-add) × 3 (forward + backward)" in record["notes"]


def test_throughput_says_where_a_steps_time_goes():
    from harness.measure.kernels import kernel_group
    from harness.measure.throughput import measure_throughput

    record = measure_throughput(("k400_i3d_r50",), (1,), ("eager",), device="cpu", warmup=0, repeats=1, kernels=4)
    where = record["rows"][0]["kernels"]
    assert len(where["top"]) == 4 and where["device_ms_per_step"] > 0
    assert where["top"] == sorted(where["top"], key=lambda k: -k["ms_per_step"])
    # I3D's step is its 3D convolutions, forward and backward.
    assert max(where["groups_ms"], key=where["groups_ms"].get) == "convolution"
    assert sum(where["groups_ms"].values()) == pytest.approx(where["device_ms_per_step"])
    # GPU kernel names as cuDNN, cuBLAS and PyTorch call them.
    names = {"sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc": "convolution",
             "sm90_xmma_wgrad_implicit_gemm_indexed_wo_smem_bf16bf16": "convolution",
             "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn": "matmul",
             "void at::native::batch_norm_collect_statistics_channels_last_kernel<float>": "normalisation",
             "void cudnn::engines_precompiled::nchwToNhwcKernel<float>": "copy",
             "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>": "elementwise",
             "ncclDevKernel_AllReduce_Sum_f32_RING_LL": "communication", "void fancy_new_kernel<8>": "other"}
    assert {name: kernel_group(name) for name in names} == names


def test_throughput_refuses_triton_bn_on_the_cpu_before_timing(capsys):
    from harness.cli import main

    assert main(["throughput", "--recipes", "k400_i3d_r50", "--batches", "1", "--modes", "plain", "--device", "cpu",
                 "--plain-bn-impl", "cudnn", "triton"]) != 0
    err = capsys.readouterr().err
    assert "--plain-bn-impl cudnn triton" in err and "Leave out --plain-bn-impl" in err and "Traceback" not in err
    assert "timing steps" not in err  # refused before the progress bar
