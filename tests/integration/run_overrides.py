"""Config overrides of the CPU end-to-end tests' tiny runs on the synthetic videos."""

from __future__ import annotations

from pathlib import Path

from .conftest import smoke_overrides


def tiny_overrides(root: Path, out: Path, *extra: str) -> list[str]:
    """A baseline run of 2 epochs × 4 iterations of 2 clips at 8×32² (tiny I3D) with one eval view per video."""
    # each key once: the keys set below and in `extra` replace smoke_overrides' own
    replaced = ("data.train_videos", "solver.", "train.eval_clips", *(o.split("=", 1)[0] + "=" for o in extra))
    return [*(o for o in smoke_overrides(root, out) if not o.startswith(replaced)), "data.train_videos=8",
            "solver.batch_size=2", "solver.max_epoch=2", "solver.steps=[0,1]", "solver.warmup_epochs=0",
            "solver.base_lr=0.05", "multigrid.long_cycle=false", "multigrid.short_cycle=false", "train.eval_clips=1",
            *extra]


def data_overrides(root) -> list[str]:
    """The synthetic dataset at `root` (4 classes), a 1/16-wide model, clips read in the main process."""
    return ["data.name=synthetic", f"data.root={root}", "data.num_classes=4", "model.width=0.0625",
            "train.num_workers=0"]
