"""Small helpers shared by the unit tests."""

from __future__ import annotations

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
