"""Where a number came from: commit, date, versions, hardware (recorded with every result).

Writers put `provenance()` in a record's `provenance` block; readers take it back with `provenance_of(record)`,
which also reads the shapes older records kept it in.
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path

from harness.paths import CHECKOUT

PACKAGES = ("torch", "torchvision", "av", "fvcore", "hydra-core", "numpy", "multigrid-harness")


def git_commit(repo: Path | None = None) -> str:
    """$HARNESS_COMMIT when set (by whoever ran a copy of a checkout whose .git is absent or stale), else the
    checkout's commit, with '+dirty' if tracked files changed; 'unknown' outside git."""
    if os.environ.get("HARNESS_COMMIT"):
        return os.environ["HARNESS_COMMIT"]
    cwd = repo or CHECKOUT
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True,
                                timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return commit + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


SHARED_GPU_ENV = "HARNESS_RUNS_SHARING_GPU"  # set by whoever starts several runs on one GPU at a time


def runs_sharing_gpu() -> int:
    """How many runs the starter put on this GPU at once, this one included (1 unless $HARNESS_RUNS_SHARING_GPU
    says more). A shared run's accuracy counts like any other; its times measure the sharing, not the method."""
    value = os.environ.get(SHARED_GPU_ENV, "1").strip() or "1"
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"${SHARED_GPU_ENV}={value!r}: give a whole number of runs, 1 or more")
    return int(value)


def hardware() -> dict[str, object]:
    info: dict[str, object] = {"cpu": _cpu_model(), "cpu_count": os.cpu_count(), "platform": platform.platform()}
    if runs_sharing_gpu() > 1:
        info["runs_sharing_gpu"] = runs_sharing_gpu()
    try:
        import torch

        if torch.cuda.is_available():
            props = torch.cuda.get_device_properties(0)
            info.update(gpu=props.name, gpu_count=torch.cuda.device_count(),
                        gpu_memory_gib=round(props.total_memory / 2**30, 1), cuda=torch.version.cuda)
    except ImportError:
        pass
    return info


def provenance() -> dict[str, object]:
    return {"commit": git_commit(), "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "versions": versions(), "hardware": hardware()}


def provenance_of(record: Mapping[str, object]) -> dict[str, object]:
    """The provenance of a record of any kind and version: its block's keys, with `commit` (str or None), `date`
    (str or None), `versions` and `hardware` (dicts, empty when unknown) always present.

    Records have kept it three ways: in a `provenance` block (records written since the block was unified, and
    every profile, scaling and throughput record), at the top level (run records before version 3, loader
    benchmark records before version 2), and with the commit under `git_commit` (the first loader benchmarks)."""
    block = record.get("provenance")
    found: Mapping[str, object] = block if isinstance(block, Mapping) else record
    commit = found.get("commit") or found.get("git_commit")
    date = found.get("date")
    extra = {k: v for k, v in found.items() if k != "git_commit"} if found is block else {}
    return {**extra, "commit": str(commit) if commit else None, "date": str(date) if date else None,
            "versions": dict(found.get("versions") or {}), "hardware": dict(found.get("hardware") or {})}
