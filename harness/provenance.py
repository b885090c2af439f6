"""Where a number came from: commit, date, versions, hardware (recorded with every result)."""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path

PACKAGES = ("torch", "torchvision", "av", "fvcore", "hydra-core", "numpy", "multigrid-harness")


def git_commit(repo: Path | None = None) -> str:
    """$HARNESS_COMMIT when set (by whoever ran a copy of a checkout whose .git is absent or stale), else the
    checkout's commit, with '+dirty' if tracked files changed; 'unknown' outside git."""
    if os.environ.get("HARNESS_COMMIT"):
        return os.environ["HARNESS_COMMIT"]
    cwd = repo or Path(__file__).resolve().parents[1]
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


def hardware() -> dict[str, object]:
    info: dict[str, object] = {"cpu": _cpu_model(), "cpu_count": os.cpu_count(), "platform": platform.platform()}
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
