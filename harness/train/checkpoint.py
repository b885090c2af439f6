"""Checkpoints written atomically (temp file + rename), the last N kept, the latest found for `resume=true`."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import numpy as np
import torch

from harness.io import write_atomic

NAME = re.compile(r"^checkpoint_(\d{9})\.pt$")


def checkpoint_path(folder: Path, iteration: int) -> Path:
    return folder / f"checkpoint_{iteration:09d}.pt"


def list_checkpoints(folder: Path) -> list[Path]:
    """Complete checkpoints in `folder`, oldest first (temp files of an interrupted write are ignored)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if NAME.match(p.name))


def save_checkpoint(folder: Path, iteration: int, payload: dict[str, Any], keep: int) -> Path:
    """Write `payload` as the checkpoint of `iteration` and delete all but the newest `keep`."""
    path = write_atomic(checkpoint_path(folder, iteration), lambda tmp: torch.save(payload, tmp))
    for old in list_checkpoints(folder)[:-keep]:
        old.unlink(missing_ok=True)
    return path


def latest_checkpoint(folder: Path) -> Path | None:
    found = list_checkpoints(folder)
    return found[-1] if found else None


def rng_state() -> dict[str, Any]:
    state = {"torch": torch.get_rng_state(), "numpy": np.random.get_state(), "python": random.getstate()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    np.random.set_state(state["numpy"])
    random.setstate(state["python"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
