"""Small helpers shared by the unit tests."""

from __future__ import annotations

import subprocess
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


def run(*args):
    """Run a command, its output captured as text; two minutes at most."""
    return subprocess.run(list(args), capture_output=True, text=True, timeout=120)
