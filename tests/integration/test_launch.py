"""`python -m harness.launch`: suite runs as Hydra jobs through Hydra's submitit launcher (local executor)."""

from __future__ import annotations

import json
import subprocess
import sys


def _logs(folder) -> str:
    return "\n".join(p.read_text()[-3000:] for p in sorted(folder.rglob("*.err")) + sorted(folder.rglob("*.out")))


def test_submitit_launcher_trains_a_suite_run_as_two_ranks(tmp_path):
    """Two submitit tasks become two DDP ranks (gloo on CPU): the run trains with synchronised BN and agrees on
    the shape at every iteration, exactly as under torchrun."""
    cmd = [sys.executable, "-m", "harness.launch", "-m", "suite=smoke", "scale=smoke", "variant=multigrid",
           'overrides=["num_gpus=2"]', f"output_root={tmp_path / 'out'}", f"results={tmp_path / 'results'}",
           "master_port=29731", "hydra/launcher=submitit_local", "hydra.launcher.tasks_per_node=2",
           "hydra.launcher.timeout_min=15"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:] + _logs(tmp_path / "out")
    records = list((tmp_path / "results" / "smoke" / "smoke").glob("multigrid__*.json"))
    assert len(records) == 1, _logs(tmp_path / "out")
    record = json.loads(records[0].read_text())
    assert record["status"] == "complete" and record["world_size"] == 2
    assert record["shape_checks"] == record["measured"]["iterations"] == record["plan"]["iterations"]


def test_launch_dry_run_prints_each_job_and_rejects_unknown_variants(tmp_path):
    base = [sys.executable, "-m", "harness.launch", "suite=smoke", "scale=smoke", "dry_run=true",
            f"output_root={tmp_path}"]
    done = subprocess.run([*base, "variant=baseline"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "smoke/baseline: 1 process(es)" in done.stdout and "harness train recipe=" in done.stdout
    wrong = subprocess.run([*base, "variant=basline"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert wrong.returncode != 0 and "Did you mean 'baseline'" in wrong.stderr
