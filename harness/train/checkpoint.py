"""Checkpoints written atomically (temp file + rename), the last N kept, the newest loadable one found for
`resume=true`, an earlier run's moved aside when a run starts afresh in its folder. A checkpoint holds only tensors
and plain data (no pickled objects), so it loads with `torch.load(weights_only=True)`: a checkpoint from an
untrusted folder cannot run code."""

from __future__ import annotations

import logging
import os
import random
from pathlib import Path
from typing import Any

import numpy as np
import torch

from harness.io import aside_path, unreadable_reason, write_atomic
from harness.paths import CHECKPOINT_NAME, checkpoint_path, list_checkpoints
from harness.spec import SpecError


def save_checkpoint(folder: Path, iteration: int, payload: dict[str, Any], keep: int) -> Path:
    """Write `payload` as the checkpoint of `iteration` and delete all but the newest `keep` up to it.

    Checkpoints of later iterations are left alone: one there is a damaged file that a resumed run fell back
    from (load_newest), and counting it among the newest would delete the good checkpoints, this one too."""
    # A write the process was killed in left its temporary file (one run writes a folder at a time: all are stale).
    for stale in folder.glob(".checkpoint_*.pt.*.tmp") if folder.is_dir() else ():
        stale.unlink(missing_ok=True)
    path = write_atomic(checkpoint_path(folder, iteration), lambda tmp: torch.save(payload, tmp))
    older = [p for p in list_checkpoints(folder) if int(CHECKPOINT_NAME.match(p.name)[1]) < iteration]
    for old in older[:max(0, len(older) - (keep - 1))]:
        old.unlink(missing_ok=True)
    return path


def supersede_earlier_run(out: Path) -> Path | None:
    """Move the checkpoints and record.json an earlier run left in output folder `out` into a new
    `out/superseded/run-<UTC time>/` and return that folder; None where there are no checkpoints.

    For a run that starts afresh (resume=false): left in place, the earlier run's checkpoints would sit among this
    run's, and a later resume=true would take the newest of all, which may be the earlier run's (its later epochs),
    and never prune them. Moved, not deleted: nothing of the earlier run is lost."""
    if not list_checkpoints(out / "checkpoints"):
        return None
    aside = aside_path(out / "superseded" / "run")
    aside.mkdir(parents=True)
    for name in ("checkpoints", "record.json"):  # renames on one file system: each whole or not at all
        if (out / name).exists():
            os.replace(out / name, aside / name)
    return aside


def latest_checkpoint(folder: Path) -> Path | None:
    found = list_checkpoints(folder)
    return found[-1] if found else None


# What a checkpoint holds (the trainer's payload) and a resume restores, every key of it.
PAYLOAD_KEYS = frozenset({"model", "optimizer", "iteration", "meter", "evals", "shape_checks", "losses", "epoch_loss",
                          "bad_videos", "rng", "run_id"})


def load_checkpoint(path: Path) -> dict[str, Any]:
    """The payload of `path`, loaded without running pickled code; ValueError saying why it cannot be used."""
    if path.stat().st_size == 0:
        raise ValueError("empty file (0 bytes)")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except PermissionError:
        raise  # not damaged: the file system refuses it (load_newest says so)
    except Exception as err:  # whatever a damaged file raises: PytorchStreamReader, EOF, unpickling errors
        first = str(err).strip().splitlines()[0] if str(err).strip() else ""
        raise ValueError(f"{type(err).__name__}: {first[:200]}") from err
    if not isinstance(payload, dict) or not {"model", "optimizer", "iteration", "run_id"} <= payload.keys():
        raise ValueError("not a checkpoint of this trainer")
    if missing := sorted(PAYLOAD_KEYS - payload.keys()):
        raise ValueError(f"incomplete: it lacks {', '.join(missing)}, which resuming restores")
    return payload


def load_newest(folder: Path, log: logging.Logger | None = None) -> tuple[Path, dict[str, Any]] | None:
    """The newest checkpoint in `folder` that loads, with its payload; damaged ones (truncated, empty) are skipped
    with a warning naming them. None if `folder` holds none; SpecError if it holds some and none loads."""
    found = list_checkpoints(folder)
    skipped = []
    for path in reversed(found):
        try:
            payload = load_checkpoint(path)
        except PermissionError as err:  # a whole checkpoint, likely: an older one would throw its iterations away
            raise SpecError(f"Checkpoint {path} {unreadable_reason(path, err)}; then resume again.") from None
        except (ValueError, OSError) as err:
            skipped.append(f"{path.name} ({err})")
            if log is not None:
                log.warning("checkpoint %s cannot be loaded (%s): trying an older one", path, err)
            continue
        if skipped and log is not None:
            log.warning("falling back to the older checkpoint %s (%d newer one(s) damaged)", path, len(skipped))
        return path, payload
    if skipped:
        raise SpecError(f"No checkpoint in {folder} can be loaded: {'; '.join(skipped)}. Start again with "
                        f"resume=false, which moves them into superseded/ (or use a new output_dir).")
    return None


def rng_state() -> dict[str, Any]:
    """Every RNG's state as tensors and plain data (numpy's and Python's tuples as dicts and lists)."""
    kind, keys, pos, has_gauss, gauss = np.random.get_state()
    version, internal, gauss_next = random.getstate()
    state = {"torch": torch.get_rng_state(),
             "numpy": {"kind": kind, "keys": torch.from_numpy(keys.astype(np.int64)), "pos": int(pos),
                       "has_gauss": int(has_gauss), "cached_gaussian": float(gauss)},
             "python": {"version": version, "internal": list(internal), "gauss_next": gauss_next}}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    n = state["numpy"]
    np.random.set_state((n["kind"], n["keys"].numpy().astype(np.uint32), n["pos"], n["has_gauss"],
                         n["cached_gaussian"]))
    p = state["python"]
    random.setstate((p["version"], tuple(p["internal"]), p["gauss_next"]))
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
