"""The command lines of a suite's runs: `harness train` on this host (under torchrun with num_gpus processes), and
what a dry run prints for a multi-node torchrun rendezvous or a Hydra submitit sweep on Slurm (`harness.launch`)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from harness.results import run_id
from harness.spec import SpecError
from harness.suite import ResolvedRun


def _train_args(run: ResolvedRun, out: Path) -> list[str]:
    """`-m harness train` with the run's overrides, its output folder, resuming from its last checkpoint."""
    return ["-m", "harness", "train", *run.overrides, f"output_dir={out}", "resume=true"]


def train_command(run: ResolvedRun, out: Path, port: int = 29500) -> list[str]:
    """The command that trains `run`: `harness train`, under torchrun with num_gpus processes when > 1."""
    args = _train_args(run, out)
    if run.spec.num_gpus > 1:
        return [sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={run.spec.num_gpus}",
                f"--master_port={port}", *args]
    return [sys.executable, *args]


def launch_lines(suite: str, scale: str, todo: list[ResolvedRun], out_root: Path, overrides: list[str],
                 launcher: str, nodes: int) -> list[str]:
    """What `reproduce` would launch, one line per run (local: torchrun on this host; torchrun: the command for
    every node of a multi-node rendezvous; slurm: one Hydra submitit sweep per GPU count)."""
    quote = shlex.quote
    if launcher == "local":
        return [" ".join(quote(c) for c in train_command(r, r.output_dir(out_root))) for r in todo]
    for r in todo:
        if r.spec.num_gpus % nodes:
            raise SpecError(f"{r.run.variant}: num_gpus={r.spec.num_gpus} does not split over --nodes={nodes}.")
    if launcher == "torchrun":
        return [_torchrun_line(r, out_root, nodes) for r in todo]
    by_gpus: dict[int, list[str]] = {}
    for r in todo:
        by_gpus.setdefault(r.spec.num_gpus, []).append(r.run.variant)
    return [_slurm_line(suite, scale, variants, overrides, gpus, nodes) for gpus, variants in sorted(by_gpus.items())]


def _torchrun_line(run: ResolvedRun, out_root: Path, nodes: int) -> str:
    """The torchrun command that each of `nodes` nodes runs for `run`, joined by a c10d rendezvous."""
    return " ".join([
        "torchrun", f"--nnodes={nodes}", f"--nproc_per_node={run.spec.num_gpus // nodes}",
        "--rdzv-backend=c10d", "--rdzv-endpoint=$MASTER_ADDR:29500", f"--rdzv-id={run_id(run.spec)}",
        *(shlex.quote(a) for a in _train_args(run, run.output_dir(out_root)))]) + f"   # on each of the {nodes} node(s)"


def _slurm_line(suite: str, scale: str, variants: list[str], overrides: list[str], gpus: int, nodes: int) -> str:
    """One Hydra submitit sweep over `variants`, the runs of `gpus` GPUs each, split over `nodes` nodes."""
    return " ".join([
        "python -m harness.launch -m", f"suite={suite}", f"scale={scale}", f"variant={','.join(variants)}",
        *([shlex.quote("overrides=[" + ",".join(f'"{o}"' for o in overrides) + "]")] if overrides else []),
        "hydra/launcher=submitit_slurm", f"hydra.launcher.nodes={nodes}",
        f"hydra.launcher.tasks_per_node={gpus // nodes}", f"hydra.launcher.gpus_per_node={gpus // nodes}",
        "hydra.launcher.cpus_per_task=10", "hydra.launcher.timeout_min=4320",
        "hydra.launcher.max_num_timeout=3  # resubmitted jobs resume from their last checkpoint"])
