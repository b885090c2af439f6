"""`harness reproduce` as a user runs it: suites end to end at smoke scale, refused before any run without data,
and the launches its dry runs print."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from harness.suite import load_suite


@pytest.mark.parametrize("suite", ["smoke", "kinetics_ablation", "beyond_backbones"])
def test_reproduce_at_smoke_scale_end_to_end(suite, tmp_path):
    results = tmp_path / "results"
    cmd = [sys.executable, "-m", "harness", "reproduce", "--suite", suite, "--scale", "smoke",
           "--results", str(results)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    records = sorted((results / suite / "smoke").glob("*.json"))
    assert len(records) == len(load_suite(suite).runs)
    for path in records:
        record = json.loads(path.read_text())
        assert record["status"] == "complete" and record["spec"]["scale"] == "smoke"
        assert record["measured"]["iterations"] == record["plan"]["iterations"]
    assert (tmp_path / "reports" / suite / "index.html").is_file()
    assert "speedup" in done.stdout and all(f"\n{r.variant} " in done.stdout for r in load_suite(suite).runs)
    # Started again, nothing is redone.
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert again.returncode == 0
    assert again.stdout.count("recorded already") == len(records)


def test_reproduce_at_paper_scale_without_data_root_is_refused_before_any_run(tmp_path):
    # Every run started (8 processes each) and stopped on it in its own log; the suite then said it had no record.
    cmd = [sys.executable, "-m", "harness", "reproduce", "--suite", "smoke", "--scale", "paper", "--results",
           str(tmp_path / "results"), "train.device=cpu"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "'data.root' is not set, and the runs train on kinetics400" in done.stderr
    assert "--scale smoke or proxy" in done.stderr and "running" not in done.stdout
    assert not list(tmp_path.rglob("train.log"))  # no run started


def test_reproduce_dry_run_prints_torchrun_for_multi_gpu_runs(tmp_path):
    cmd = [sys.executable, "-m", "harness", "reproduce", "--suite", "smoke", "--scale", "smoke", "--dry-run",
           "--results", str(tmp_path), "num_gpus=2", "solver.batch_size=4"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in done.stdout.splitlines() if "harness train" in line]
    assert len(lines) == 2
    assert all("torch.distributed.run --nproc_per_node=2" in line and "num_gpus=2" in line for line in lines)
    assert not (tmp_path / "smoke").exists(), "a dry run trains nothing"


def test_reproduce_only_runs_the_named_variants(tmp_path):
    base = [sys.executable, "-m", "harness", "reproduce", "--suite", "smoke", "--scale", "smoke", "--dry-run",
            "--results", str(tmp_path)]
    done = subprocess.run([*base, "--only", "multigrid"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in done.stdout.splitlines() if "harness train" in line]
    assert len(lines) == 1 and "variant=multigrid" in lines[0]
    wrong = subprocess.run([*base, "--only", "multigrd"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert wrong.returncode == 2
    assert "no variant 'multigrd'" in wrong.stderr and "Did you mean 'multigrid'" in wrong.stderr


def test_reproduce_dry_run_prints_multi_node_and_slurm_launches(tmp_path):
    base = [sys.executable, "-m", "harness", "reproduce", "--suite", "smoke", "--scale", "paper", "--dry-run",
            "--results", str(tmp_path), "--nodes", "2", "data.root=/data/k400"]
    torchrun = subprocess.run([*base, "--launcher", "torchrun"], capture_output=True, text=True, timeout=300)
    assert torchrun.returncode == 0, torchrun.stderr[-2000:]
    lines = [line for line in torchrun.stdout.splitlines() if line.startswith("torchrun")]
    assert len(lines) == 2 and all("--nnodes=2 --nproc_per_node=4 --rdzv-backend=c10d" in line for line in lines)
    slurm = subprocess.run([*base, "--launcher", "slurm"], capture_output=True, text=True, timeout=300)
    assert slurm.returncode == 0, slurm.stderr[-2000:]
    (line,) = [line for line in slurm.stdout.splitlines() if line.startswith("python -m harness.launch")]
    assert "variant=baseline,multigrid" in line and "hydra/launcher=submitit_slurm" in line
    assert "hydra.launcher.nodes=2 hydra.launcher.tasks_per_node=4" in line
    odd = subprocess.run([*base[:-3], "--nodes", "3", "--launcher", "slurm", "data.root=/d"], capture_output=True,
                         text=True, timeout=300)
    assert odd.returncode == 2 and "does not split over --nodes=3" in odd.stderr
