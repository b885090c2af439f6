"""What a run's checkpoint holds besides its files' handling (harness.train.checkpoint): the training state, the
payload written, and its restore into a model, optimizer and the RNGs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from harness.data.clip_dataset import BadVideoLog
from harness.results import run_id
from harness.spec import RunSpec, SpecError
from harness.train import checkpoint as ckpt
from harness.train.meter import RunMeter


@dataclass
class TrainState:
    """What a checkpoint must restore besides the model and optimizer."""

    iteration: int = 0  # the next global iteration to run
    meter: RunMeter = field(default_factory=RunMeter)
    evals: list[dict[str, Any]] = field(default_factory=list)
    shape_checks: int = 0  # iterations at which all ranks confirmed the same shape
    losses: list[float] = field(default_factory=list)  # mean loss of each finished epoch
    epoch_loss: list[float] = field(default_factory=lambda: [0.0, 0.0])  # (sum, count) of the epoch in progress


def checkpoint_payload(model: nn.Module, optimizer: torch.optim.Optimizer, state: TrainState, spec: RunSpec,
                       bad: BadVideoLog) -> dict[str, Any]:
    """Every key of ckpt.PAYLOAD_KEYS, as tensors and plain data (a checkpoint loads with weights_only=True)."""
    return {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "iteration": state.iteration,
            "meter": state.meter.to_dict(), "evals": state.evals, "shape_checks": state.shape_checks,
            "losses": state.losses, "epoch_loss": state.epoch_loss,
            "bad_videos": {"files": bad.files, "failed_reads": bad.failed_reads},
            "rng": ckpt.rng_state(), "run_id": run_id(spec)}


def restore(path: Path, payload: dict[str, Any], model: nn.Module, optimizer: torch.optim.Optimizer,
            spec: RunSpec, bad: BadVideoLog) -> TrainState:
    """Load `payload` (checkpoint `path`, loaded by ckpt.load_newest) into the model, optimizer and RNGs."""
    if payload["run_id"] != run_id(spec):
        raise SpecError(f"{path} belongs to another run (id {payload['run_id']}, this one {run_id(spec)}): the "
                        f"settings changed. Use a new output_dir, or resume=false to start afresh (the earlier "
                        f"run's checkpoints are then moved into superseded/).")
    model.load_state_dict(payload["model"])
    optimizer.load_state_dict(payload["optimizer"])
    ckpt.set_rng_state(payload["rng"])
    bad.files, bad.failed_reads = dict(payload["bad_videos"]["files"]), payload["bad_videos"]["failed_reads"]
    return TrainState(payload["iteration"], RunMeter.from_dict(payload["meter"]), payload["evals"],
                      payload["shape_checks"], payload["losses"], payload["epoch_loss"])
