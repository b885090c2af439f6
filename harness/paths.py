"""Every location the harness resolves: the checkout's folders, the data home, and the files it names in them.

Each folder has one resolver here, with the environment variable that overrides it; nothing else in the harness
builds these paths. Plain Python (no torch), so any layer may use it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from harness.spec import SpecError

CHECKOUT = Path(__file__).resolve().parents[1]  # the checkout this package runs from (pip install -e .)
COMMITTED_RESULTS = CHECKOUT / "results"  # the checkout's own records, wherever a run writes its record
CHECKPOINT_NAME = re.compile(r"^checkpoint_(\d{9})\.pt$")


def suites_dir() -> Path:
    """Where the Hydra configs live: $HARNESS_SUITES_DIR, else ``suites/`` of this checkout."""
    env = os.environ.get("HARNESS_SUITES_DIR")
    path = Path(env) if env else CHECKOUT / "suites"
    if not (path / "config.yaml").is_file():
        raise SpecError(f"No suites/config.yaml under {path}. Run from a checkout of multigrid-harness "
                        f"(pip install -e .) or set HARNESS_SUITES_DIR to its suites/ folder.")
    return path


def results_root() -> Path:
    """$HARNESS_RESULTS_DIR, else results/ of this checkout."""
    env = os.environ.get("HARNESS_RESULTS_DIR")
    return Path(env) if env else COMMITTED_RESULTS


def reports_dir() -> Path:
    """The reports' folder: reports/ beside the results root."""
    return results_root().parent / "reports"


def data_home() -> Path:
    """Generated data (synthetic video, frame caches, 2D weights) and caches: $HARNESS_DATA_DIR, else
    ~/.cache/multigrid-harness."""
    return Path(os.environ.get("HARNESS_DATA_DIR", Path.home() / ".cache" / "multigrid-harness"))


def synthetic_dataset_dir(name: str) -> Path:
    """The generated synthetic dataset `name` (its preset and settings) of the data home, made or not."""
    return data_home() / "synthetic" / name


def frame_cache_beside(root: Path) -> Path:
    """The decoded-frame cache the harness builds of the dataset at `root`: `<name>-frames` beside it."""
    return root.with_name(root.name + "-frames")


def build_lock_beside(root: Path) -> Path:
    """The lock file held while the dataset at `root` (and its frame cache) is built: `.<name>.lock` beside it."""
    return root.with_name(f".{root.name}.lock")


def pretrained_2d_beside(root: Path, tag: str) -> Path:
    """The 2D ResNet-50 pre-trained on frames of the dataset at `root` with settings `tag`, beside it."""
    return root.with_name(f"{root.name}-resnet50-{tag}.pt")


def pretrain_lock() -> Path:
    """The lock file held while a 2D ResNet-50 is pre-trained into the data home."""
    return data_home() / ".pretrain.lock"


def suite_outputs(suite: str) -> Path:
    """Each run's log and checkpoints of `harness reproduce`: outputs/<suite>/ of the folder it runs in."""
    return Path("outputs") / suite


def reports_beside(results: Path) -> Path:
    """Where reproduce writes its reports by default: reports/ beside the results folder, as the checkout keeps
    results/ and reports/; a user's own --results DIR gets its own reports, apart from the committed ones."""
    return Path(results).absolute().parent / "reports"


def compile_cache_dir() -> str:
    """Where torch.compile keeps what it compiled: $TORCHINDUCTOR_CACHE_DIR if set, else `torch-compile/` in the
    data home (set for this process, before the first compilation reads it), which every run on this machine
    shares."""
    return os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(data_home() / "torch-compile"))


def checkpoint_path(folder: Path, iteration: int) -> Path:
    return folder / f"checkpoint_{iteration:09d}.pt"


def list_checkpoints(folder: Path) -> list[Path]:
    """Complete checkpoints in `folder`, oldest first (temp files of an interrupted write are ignored)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if CHECKPOINT_NAME.match(p.name))
