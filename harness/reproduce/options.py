"""What `harness reproduce` is asked to do, as one value the CLI builds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


def default_scale() -> str:
    """`proxy` with a GPU, `smoke` without (printed at start)."""
    try:
        import torch

        return "proxy" if torch.cuda.is_available() else "smoke"
    except ImportError:
        return "smoke"


@dataclass(frozen=True)
class ReproduceOptions:
    """The suite and scale, the runs to pick (`only`, once per seed of `seeds`, default the recipe's), where their
    records and report go, and what to do with them: train and report, only prepare their inputs
    (`prepare_only`), or print how they would launch (`dry_run`, with `launcher` over `nodes` nodes). Lists given
    are kept as tuples."""

    suite: str
    scale: str | None = None  # None: default_scale()
    overrides: tuple[str, ...] = ()  # key=value for every run
    results: Path | None = None  # None: results_root()
    gpus: int | None = None  # local GPUs to spread the runs over; None: every one this process sees
    report: bool = True
    dry_run: bool = False
    only: tuple[str, ...] | None = None  # variants, in the order to run them; None: every run
    launcher: str = "local"  # local | torchrun | slurm: the launch lines a dry run prints
    nodes: int = 1
    seeds: tuple[int, ...] | None = None
    prepare_only: bool = False
    reports: Path | None = None  # the folder of reports; None: reports/ beside the results folder

    def __post_init__(self) -> None:
        set_field = object.__setattr__  # frozen: set once, here
        set_field(self, "overrides", tuple(self.overrides or ()))
        for name in ("only", "seeds"):
            if getattr(self, name) is not None:
                set_field(self, name, tuple(getattr(self, name)))
        for name in ("results", "reports"):
            if getattr(self, name):
                set_field(self, name, Path(getattr(self, name)))
            else:
                set_field(self, name, None)
