"""Small helpers shared by the unit tests."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from harness.spec import RunSpec, spec_from_dict


def spec(**dotted: Any) -> RunSpec:
    """A RunSpec from dotted keys, e.g. spec(**{"solver.max_epoch": 10}); no Hydra involved."""
    tree: dict[str, Any] = {}
    for key, value in dotted.items():
        node = tree
        *parents, leaf = key.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return spec_from_dict(tree)


BASELINE = {"multigrid.long_cycle": False, "multigrid.short_cycle": False}

# A run small enough to profile on a CPU: a 1/16-wide I3D at 8×32², 200 videos of 5 classes, a 4-epoch recipe.
TINY = {"model.name": "i3d_r50", "model.width": 1 / 16, "data.num_frames": 8, "data.crop_size": 32,
        "data.jitter": [36, 48], "num_gpus": 1, "solver.batch_size": 2, "data.train_videos": 200,
        "solver.steps": [0, 2, 3], "solver.max_epoch": 4, "solver.warmup_epochs": 0.0, "data.num_classes": 5}

# The GPU that the tests of the step and BN choice measure on.
CARD = "NVIDIA H200"


def run(*args):
    """Run a command, its output captured as text; two minutes at most."""
    return subprocess.run(list(args), capture_output=True, text=True, timeout=120)


# The records committed to this repository.
RESULTS = Path(__file__).resolve().parents[2] / "results"


def damaged(record: dict, where: str, value) -> dict:
    """`record` with the field at dotted path `where` (a list index as a number) set to `value`."""
    record = json.loads(json.dumps(record))
    *parents, last = [int(k) if k.isdigit() else k for k in where.split(".")]
    block = record
    for key in parents:
        block = block[key]
    block[last] = value
    return record
