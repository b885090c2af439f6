"""Checkpoints: plain data that loads with weights_only=True, exact RNG restore, damaged files skipped."""

from __future__ import annotations

import logging
import random

import numpy as np
import pytest
import torch
from torch import nn

from harness.config import compose
from harness.data.clip_dataset import BadVideoLog
from harness.spec import SpecError
from harness.train import checkpoint as ckpt
from harness.train.meter import RunMeter
from harness.train.train_state import TrainState, checkpoint_payload


def _payload() -> dict:
    model = nn.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.ones(1, 3)).sum().backward()
    optimizer.step()
    meter = RunMeter()
    meter.add(0, 0.1, 0.2, 4, 1.5)
    meter.note_layout(0, 2, 1, 1)
    state = TrainState(7, meter, [{"epoch": 1, "iteration": 7, "top1": 12.5, "videos": 8}], 0, [1.25], [0.5, 1.0])
    bad = BadVideoLog()
    bad.update([("a.mp4", "empty: a.mp4 is empty")])
    return checkpoint_payload(model, optimizer, state, compose(["output_dir=/tmp/x"]), bad)


def test_payload_loads_with_weights_only_and_restores_every_rng(tmp_path):
    torch.manual_seed(1), np.random.seed(2), random.seed(3)
    np.random.standard_normal()  # numpy caches a gaussian: that part of its state must survive too
    path = ckpt.save_checkpoint(tmp_path, 7, _payload(), keep=2)
    expected = (torch.rand(3).tolist(), np.random.standard_normal(3).tolist(), [random.random() for _ in range(3)])
    payload = torch.load(path, map_location="cpu", weights_only=True)  # no pickled objects in a checkpoint
    assert payload["iteration"] == 7 and payload["meter"] == _payload()["meter"]
    ckpt.set_rng_state(payload["rng"])
    again = (torch.rand(3).tolist(), np.random.standard_normal(3).tolist(), [random.random() for _ in range(3)])
    assert again == expected


def test_damaged_newest_checkpoints_fall_back_to_an_older_one(tmp_path, caplog):
    for it in (4, 8, 12):
        ckpt.save_checkpoint(tmp_path, it, _payload(), keep=3)
    newest = ckpt.checkpoint_path(tmp_path, 12)
    newest.write_bytes(newest.read_bytes()[:100])  # truncated: PytorchStreamReader failed
    ckpt.checkpoint_path(tmp_path, 8).write_bytes(b"")  # empty: EOFError
    with caplog.at_level(logging.WARNING, logger="test"):
        path, payload = ckpt.load_newest(tmp_path, logging.getLogger("test"))
    assert path == ckpt.checkpoint_path(tmp_path, 4) and payload["iteration"] == 7
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "checkpoint_000000012.pt" in messages and "checkpoint_000000008.pt" in messages
    assert "falling back" in messages


def test_a_run_resumed_past_a_damaged_checkpoint_keeps_the_checkpoints_it_writes(tmp_path):
    """The damaged newest checkpoint a run fell back from is no newer checkpoint: counting it among the newest
    `keep` deleted every good one, the one just written too, so a second interruption lost the whole run."""
    for it in (4, 8, 12):
        ckpt.save_checkpoint(tmp_path, it, _payload(), keep=3)
    damaged = ckpt.checkpoint_path(tmp_path, 12)
    damaged.write_bytes(damaged.read_bytes()[:100])
    assert ckpt.load_newest(tmp_path)[0] == ckpt.checkpoint_path(tmp_path, 8)
    ckpt.save_checkpoint(tmp_path, 9, _payload(), keep=1)  # resumed at 8, checkpointing every iteration
    ckpt.save_checkpoint(tmp_path, 10, _payload(), keep=1)
    assert [p.name for p in ckpt.list_checkpoints(tmp_path)] == ["checkpoint_000000010.pt", damaged.name]
    assert ckpt.load_newest(tmp_path)[0] == ckpt.checkpoint_path(tmp_path, 10)  # interrupted again: resumes here
    ckpt.save_checkpoint(tmp_path, 12, _payload(), keep=1)  # reaching the damaged one's iteration replaces it
    assert [p.name for p in ckpt.list_checkpoints(tmp_path)] == [damaged.name]
    assert ckpt.load_newest(tmp_path)[1]["iteration"] == 7


def test_a_temporary_file_left_by_a_killed_write_is_removed_by_the_next_save(tmp_path):
    # A process killed while writing a checkpoint left a full-size temporary file that nothing removed.
    ckpt.save_checkpoint(tmp_path, 4, _payload(), keep=2)
    stale = tmp_path / ".checkpoint_000000008.pt.k1ll3d.tmp"
    stale.write_bytes(b"\0" * 1000)
    ckpt.save_checkpoint(tmp_path, 8, _payload(), keep=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint_000000004.pt", "checkpoint_000000008.pt"]


def test_the_payload_is_what_a_checkpoint_must_hold():
    assert set(_payload()) == ckpt.PAYLOAD_KEYS


@pytest.mark.parametrize("key", ["epoch_loss", "rng", "meter", "bad_videos"])
def test_a_checkpoint_missing_what_a_resume_restores_is_passed_over_for_an_older_one(tmp_path, key):
    # It loaded, and the resume ended in a KeyError traceback.
    ckpt.save_checkpoint(tmp_path, 4, _payload(), keep=2)
    incomplete = _payload()
    del incomplete[key]
    ckpt.save_checkpoint(tmp_path, 8, incomplete, keep=2)
    assert ckpt.load_newest(tmp_path)[0] == ckpt.checkpoint_path(tmp_path, 4)
    ckpt.checkpoint_path(tmp_path, 4).unlink()
    with pytest.raises(SpecError, match=f"checkpoint_000000008.pt \\(incomplete: it lacks {key}"):
        ckpt.load_newest(tmp_path)


def test_no_loadable_checkpoint_is_a_clear_error_and_none_is_none(tmp_path):
    assert ckpt.load_newest(tmp_path / "missing") is None
    ckpt.checkpoint_path(tmp_path, 3).write_bytes(b"")
    ckpt.checkpoint_path(tmp_path, 6).write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(SpecError, match="No checkpoint .* can be loaded") as err:
        ckpt.load_newest(tmp_path)
    assert "checkpoint_000000003.pt (empty file" in str(err.value) and "resume=false" in str(err.value)


def test_a_pickled_object_is_not_loaded(tmp_path):
    """A checkpoint that needs code to unpickle (here a numpy array) is refused, not executed."""
    torch.save({"model": {}, "optimizer": {}, "iteration": 1, "run_id": "x", "evil": np.zeros(2)},
               ckpt.checkpoint_path(tmp_path, 1))
    with pytest.raises(SpecError, match="checkpoint_000000001.pt"):
        ckpt.load_newest(tmp_path)


def test_an_earlier_runs_checkpoints_are_moved_aside_whole_and_each_time_to_a_new_folder(tmp_path):
    """What a fresh run (resume=false) does to an output folder another run trained in: nothing where there are no
    checkpoints; else the checkpoints and record.json go, as they are, to a new superseded/run-<time>/ each time."""
    assert ckpt.supersede_earlier_run(tmp_path) is None and not (tmp_path / "superseded").exists()
    asides = []
    for run in range(2):
        ckpt.save_checkpoint(tmp_path / "checkpoints", 4, _payload(), keep=2)
        (tmp_path / "record.json").write_text(f'{{"run": {run}}}')
        asides.append(ckpt.supersede_earlier_run(tmp_path))
        assert not (tmp_path / "checkpoints").exists() and not (tmp_path / "record.json").exists()
    assert asides[0] != asides[1] and all(a.parent == tmp_path / "superseded" for a in asides)
    for run, aside in enumerate(asides):
        assert (aside / "record.json").read_text() == f'{{"run": {run}}}'
        assert ckpt.load_newest(aside / "checkpoints")[1]["iteration"] == 7


def test_a_checkpoint_on_a_full_disk_names_its_file(tmp_path):
    """torch.save reports a full disk as an internal assertion; the write says which file and that space ran out."""
    import errno
    import subprocess

    from harness.train.checkpoint import save_checkpoint

    small = tmp_path / "small"
    small.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(small)], capture_output=True).returncode:
        pytest.skip("mounting a small tmpfs needs root")
    try:
        with pytest.raises(OSError) as caught:
            save_checkpoint(small, 7, {"model": {"w": torch.zeros(100_000)}}, keep=3)
        assert caught.value.errno == errno.ENOSPC and str(small) in caught.value.filename
    finally:
        subprocess.run(["umount", "--lazy", str(small)], check=False)  # torch may still hold the failed file open
