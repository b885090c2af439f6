"""The shared trainer end to end on real synthetic video (CPU): baseline, multigrid, resume, NaN, DDP."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.config import compose
from harness.records import RunRecord
from harness.schedule import build_plan
from harness.train.loop import TrainingDiverged, train

from .conftest import smoke_overrides

BASELINE = ["multigrid.long_cycle=false", "multigrid.short_cycle=false"]


def _check_record(record: dict, spec) -> None:
    plan = build_plan(spec)
    measured = record["measured"]
    assert measured["iterations"] == plan.iterations
    assert sum(p["iterations"] for p in measured["phases"]) == plan.iterations
    assert measured["data_wait_s"] > 0 and measured["compute_s"] > 0
    assert 0 < measured["data_wait_share"] < 1
    assert measured["forward_gflops"] > 0
    assert {"top1", "top5"} <= set(record["final"]) and record["final"]["videos_scored"] == 8
    assert record["bad_videos"]["bad_videos"] == 0
    assert record["record_version"] == RunRecord.VERSION and "commit" not in record
    assert record["provenance"]["commit"] and record["provenance"]["hardware"]["cpu_count"]
    assert len(record["epoch_losses"]) == plan.max_epoch
    outside = record["outside_steps"]
    assert outside["setup_s"] > 0 and outside["checkpoint_s"] > 0  # a checkpoint at the end of every epoch
    assert outside["total_s"] > measured["train_s"] + measured["eval_s"] + outside["setup_s"]


@pytest.mark.parametrize("variant", ["multigrid", "baseline"])
def test_smoke_runs_write_records(synth_root, tmp_path, variant):
    # The baseline also scores 5 training videos at the end (train vs validation top-1).
    # The multigrid run leaves the step to auto: eager on a CPU, and its record says so.
    extra = [*BASELINE, "train.train_eval_videos=5"] if variant == "baseline" else ["train.step=auto"]
    spec = compose(smoke_overrides(synth_root, tmp_path / variant, *extra))
    record = train(spec)
    _check_record(record, spec)
    if variant == "baseline":
        final = record["final"]
        assert final["train_videos"] == final["train_videos_scored"] == 5 and 0 <= final["train_top1"] <= 100
        assert final["videos"] == final["videos_scored"] > 5  # the validation set, all of it
    else:
        assert "train_top1" not in record["final"]
        choice = record["step"]["choice"]
        assert (record["step"]["mode"], choice["step"], choice["sub_batch_bn"]) == ("eager", "eager", "auto")
        assert choice["card"] is None and "no GPU" in choice["reason"]
    on_disk = json.loads((tmp_path / variant / "record.json").read_text())
    assert on_disk["run_id"] == record["run_id"]
    assert on_disk["plan"]["kind"] == variant
    if variant == "multigrid":  # the long cycle's coarse shapes were trained, with sub-batch BN
        shapes = {(g["t"], g["s"]) for g in record["clip_gflops"]}
        assert (2, 16) in shapes and (8, 32) in shapes


def _cli(*overrides: str, **popen) -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "harness", "train", *overrides], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **popen)


def test_sigkill_then_resume_equals_uninterrupted(synth_root, tmp_path):
    extra = ["train.checkpoint_every=4", "train.keep_checkpoints=2"]
    # The uninterrupted reference runs as a subprocess too: the same process setup (threads) on both sides,
    # so the comparison can be exact.
    whole = subprocess.run([sys.executable, "-m", "harness", "train",
                            *smoke_overrides(synth_root, tmp_path / "whole", *extra)],
                           capture_output=True, text=True, timeout=600)
    assert whole.returncode == 0, whole.stdout[-2000:] + whole.stderr[-2000:]
    reference = json.loads((tmp_path / "whole" / "record.json").read_text())

    out = tmp_path / "killed"
    proc = _cli(*smoke_overrides(synth_root, out, *extra))
    deadline = time.time() + 240
    while time.time() < deadline and not list((out / "checkpoints").glob("checkpoint_*.pt")):
        time.sleep(0.05)
    # Mid-training, a step or two after the first checkpoint: the run's remaining 16 smoke iterations can take
    # well under a second, and a kill after the last checkpoint would resume nothing.
    time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (out / "record.json").exists(), "killed too late: the run had finished"
    resumed = subprocess.run([sys.executable, "-m", "harness", "train", *smoke_overrides(synth_root, out, *extra),
                              "resume=true"], capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    record = json.loads((out / "record.json").read_text())
    assert record["run_id"] == reference["run_id"]
    assert record["measured"]["iterations"] == reference["measured"]["iterations"]
    assert record["epoch_losses"] == reference["epoch_losses"]
    assert record["final"] == reference["final"]
    assert reference["resumed_from_iteration"] == 0
    assert 0 < record["resumed_from_iteration"] < record["measured"]["iterations"]
    assert record["resumed_from_iteration"] % 4 == 0  # a checkpoint's iteration


def test_resume_refuses_other_settings(synth_root, tmp_path):
    spec = compose(smoke_overrides(synth_root, tmp_path, "solver.max_epoch=3", "solver.steps=[0,1,2]"))
    train(spec)
    other = compose(smoke_overrides(synth_root, tmp_path, "resume=true", "solver.max_epoch=3",
                                    "solver.steps=[0,1,2]", "solver.base_lr=0.07"))
    with pytest.raises(Exception, match="belongs to another run"):
        train(other)


def test_nan_loss_stops_with_message_and_keeps_checkpoint(synth_root, tmp_path):
    spec = compose(smoke_overrides(synth_root, tmp_path, "solver.base_lr=1e30", "solver.warmup_epochs=0"))
    with pytest.raises(TrainingDiverged, match="Loss became"):
        train(spec)
    assert not (tmp_path / "record.json").exists()


def _ddp_run(overrides: list[str], ranks: int, out: Path) -> dict:
    """Train under torchrun with `ranks` gloo processes; check what every DDP run must show; return the record."""
    cmd = [sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={ranks}", f"--master_port={29531 + ranks}",
           "-m", "harness", "train", *overrides]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.count("done: ") == 1  # one rank reports
    record = json.loads((out / "record.json").read_text())
    assert record["world_size"] == ranks
    assert record["shape_checks"] == record["plan"]["iterations"] > 0
    assert record["final"]["videos_scored"] == 8
    return record


def _layouts_run(record: dict, overrides: list[str]) -> set[tuple[int, int]]:
    """Check that every phase ran the Plan's per-GPU batches and BN layout; return the (splits, sync) that ran."""
    plan = build_plan(compose(overrides))
    layouts = set()
    for measured in record["measured"]["phases"]:
        phase = plan.phases[measured["phase"]]
        assert (measured["bn_splits"], measured["bn_sync"]) == (phase.bn_splits, phase.bn_sync)
        assert set(measured["per_gpu_batches"]) <= set(phase.per_gpu_batches)
        layouts.add((phase.bn_splits, phase.bn_sync))
    return layouts


@pytest.mark.parametrize(("ranks", "extra"), [
    (2, ["solver.batch_size=2"]),
    # BN base 2 at 1 clip per GPU: sub-batch and synchronised BN in one run, the sync groups (2 ranks) smaller
    # than the world.
    (4, ["solver.batch_size=4", "multigrid.bn_base_size=2", "multigrid.short_cycle=false"]),
])
def test_ddp_ranks_agree_on_every_shape_and_run_the_planned_layouts(synth_root, tmp_path, ranks, extra):
    out = tmp_path / "ddp"
    overrides = [o for o in smoke_overrides(synth_root, out) if not o.startswith(("num_gpus", "solver.batch_size"))]
    overrides += [*extra, f"num_gpus={ranks}"]
    layouts = _layouts_run(_ddp_run(overrides, ranks, out), overrides)
    if ranks == 4:
        assert any(splits > 1 for splits, _ in layouts) and (1, 2) in layouts  # sub-batch and synchronised BN


def test_eight_processes_follow_an_eight_gpu_plan(tmp_path):
    """The 8-GPU recipe's structure at 1 clip per GPU (BN base 8): plain BN, then BN synchronised over 2, 4 and 8
    ranks as the long cycle shrinks the per-GPU batch; 8 CPU processes over gloo."""
    from harness.data.synth.make import make_synthetic_dataset

    root = tmp_path / "data"
    make_synthetic_dataset(root, "smoke", classes=4, videos=64, val_videos=8, frames=16, size=(48, 64),
                           progress=False)
    out = tmp_path / "ddp8"
    overrides = [o for o in smoke_overrides(root, out)
                 if not o.startswith(("num_gpus", "solver.batch_size", "data.train_videos", "solver."))]
    overrides += ["data.train_videos=64", "num_gpus=8", "solver.batch_size=8", "solver.steps=[0,6,8]",
                  "solver.max_epoch=10", "solver.warmup_epochs=1", "solver.base_lr=0.05", "multigrid.short_cycle=false"]
    layouts = _layouts_run(_ddp_run(overrides, 8, out), overrides)
    assert layouts == {(1, 1), (1, 2), (1, 4), (1, 8)}


def test_broken_videos_are_skipped_counted_and_recorded(synth_root, tmp_path):
    import shutil

    root = tmp_path / "data"
    shutil.copytree(synth_root, root)
    train_videos = [line.split()[0] for line in (root / "train.csv").read_text().splitlines()]
    (root / train_videos[0]).write_bytes(b"")  # zero bytes
    data = (root / train_videos[1]).read_bytes()
    (root / train_videos[1]).write_bytes(data[: len(data) // 3])  # truncated
    (root / train_videos[2]).write_text("not a video")
    val_video = (root / "val.csv").read_text().split()[0]
    (root / val_video).unlink()  # missing
    record = train(compose(smoke_overrides(root, tmp_path / "run")))
    bad = record["bad_videos"]
    names = {Path(f["path"]).name for f in bad["files"]}
    assert {Path(v).name for v in [*train_videos[:3], val_video]} <= names
    assert bad["bad_videos"] >= 4 and bad["failed_reads"] >= bad["bad_videos"]
    assert record["final"]["videos_scored"] == 7  # the missing validation video is not scored under a label
