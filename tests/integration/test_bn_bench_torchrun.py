"""`harness bn-bench` alone and under torchrun: every BN mode timed, the synchronised one only across processes."""

from __future__ import annotations

import subprocess
import sys


def test_bn_bench_times_every_mode_and_the_synchronised_one_under_torchrun():
    args = ["-m", "harness", "bn-bench", "--batch", "4", "--channels", "8", "--frames", "2", "--size", "8",
            "--warmup", "1", "--repeats", "2"]
    alone = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300)
    assert alone.returncode == 0, alone.stderr[-2000:]
    assert {"plain", "sub-batch blocks k=2", "sub-batch interleaved k=2"} <= _modes(alone.stdout)
    assert not any(m.startswith("synchronised") for m in _modes(alone.stdout))
    two = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2",
                          "--master_port=29743", *args], capture_output=True, text=True, timeout=300)
    assert two.returncode == 0, two.stderr[-2000:]
    assert "synchronised over 2" in _modes(two.stdout)


def _modes(stdout: str) -> set[str]:
    """Mode names of `harness bn-bench` lines such as '  plain      0.076 ms'."""
    return {line.rsplit(None, 2)[0].strip() for line in stdout.splitlines() if line.endswith(" ms")}
