"""Fixtures for CPU end-to-end tests: one tiny synthetic video dataset per test session, and a smaller one per test
module that asks for it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest


def tiny_synthetic(tmp_path_factory, name: str, videos: int, val_videos: int) -> Path:
    """Real H.264 synthetic videos (smoke preset, trimmed): 4 classes, 16 frames at 48×64."""
    from harness.data.synth.make import make_synthetic_dataset

    root = tmp_path_factory.mktemp(name)
    make_synthetic_dataset(root, "smoke", classes=4, videos=videos, val_videos=val_videos, frames=16,
                           size=(48, 64), progress=False)
    return root


@pytest.fixture(scope="session")
def synth_root(tmp_path_factory) -> Path:
    """32 train / 8 val synthetic videos."""
    return tiny_synthetic(tmp_path_factory, "synth", videos=32, val_videos=8)


# The `synth` fixture's dataset: 8 train / 4 val videos of 8 frames at 32×48, 4 classes.
TINY_4_CLASSES = {"classes": 4, "videos": 8, "val_videos": 4, "frames": 8, "size": (32, 48), "fps": 15}


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    """The TINY_4_CLASSES synthetic dataset, made once per test module: a test that changes it works on a copy."""
    from harness.data.synth.make import make_synthetic_dataset

    out = tmp_path_factory.mktemp("synth")
    make_synthetic_dataset(out, "smoke", progress=False, **TINY_4_CLASSES)
    return out


def smoke_overrides(root: Path, out: Path, *extra: str) -> list[str]:
    """A multigrid run that takes seconds on a CPU: tiny I3D, 8 frames, 32 px, 3 LR stages."""
    return [
        "data.name=synthetic", f"data.root={root}", "data.train_videos=32", "data.num_classes=4",
        "num_gpus=1", "solver.batch_size=2", "data.num_frames=8", "data.crop_size=32", "data.jitter=[36,48]",
        "solver.steps=[0,2,3]", "solver.max_epoch=4", "solver.warmup_epochs=1", "solver.base_lr=0.05",
        "model.name=i3d_r50", "model.width=0.0625", "model.dropout=0.3", f"output_dir={out}",
        "train.num_workers=0", "train.eval_clips=2", "train.eval_crops=1", "scale=smoke", *extra,
    ]


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's chromium, installed by install_chromium.sh when missing and installable (root or sudo, apt)."""
    from harness.report.browser import find_chromium

    found = find_chromium()
    if found is None and shutil.which("apt-get") and (os.geteuid() == 0 or shutil.which("sudo")):
        subprocess.run(["sh", str(Path(__file__).with_name("install_chromium.sh"))], capture_output=True, text=True,
                       timeout=1800)
        found = find_chromium()
    if found is None:
        pytest.skip("no Chromium, and installing it failed or needs root: run tests/integration/install_chromium.sh")
    return found
