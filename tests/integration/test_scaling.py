"""`harness scaling` under torchrun: every planned shape at the same global batch, split over the processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from harness.records import ScalingRecord


def test_scaling_splits_the_global_batch_and_syncs_bn_over_processes(tmp_path):
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    common = ["--suite", "smoke", "--scale", "smoke", "--warmup", "1", "--repeats", "2"]
    done = subprocess.run([sys.executable, "-m", "harness", "scaling", *common, "--out", str(one)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", "--master_port=29741",
                           "-m", "harness", "scaling", *common, "--out", str(two)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    single, double = json.loads(one.read_text()), json.loads(two.read_text())
    assert (single["world_size"], double["world_size"]) == (1, 2)
    assert single["record_version"] == double["record_version"] == ScalingRecord.VERSION
    by_shape = {(r["t"], r["s"], r["global_batch"]): r for r in single["shapes"]}
    for row in double["shapes"]:
        other = by_shape[(row["t"], row["s"], row["global_batch"])]  # the same shapes at the same global batch
        assert row["per_gpu_batch"] * 2 == other["per_gpu_batch"]
        assert row["median_ms"] > 0
    # The smoke plan's 1-clip-per-GPU shapes synchronise BN across both processes.
    assert any(r["bn_sync"] == 2 for r in double["shapes"])
    assert set(single["predicted_s"]) == set(double["predicted_s"]) == {"multigrid", "baseline_of_multigrid"}


def test_scaling_with_cuda_graphs_needs_a_gpu(tmp_path):
    done = subprocess.run([sys.executable, "-m", "harness", "scaling", "--suite", "smoke", "--scale", "smoke",
                           "--step", "cuda_graphs", "--out", str(tmp_path / "x.json")],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})
    assert done.returncode != 0 and "no CUDA GPU is visible" in done.stderr + done.stdout
    assert not (tmp_path / "x.json").exists()
