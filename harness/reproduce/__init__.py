"""`harness reproduce`: run every run of a suite that has no record yet, then write its report.

Each run is a `harness train` subprocess (a crash or an out-of-memory error ends that run, not the
suite; a stopped suite resumes each run from its checkpoint with resume=true). Runs spread over the
local GPUs, one per GPU at a time. Records land in results/<suite>/; nothing recorded is redone.

Modules: `options` (what the command is asked), `selection` (the suite's runs and those still to train), `inputs`
(the data and weights they need), `commands` (their torchrun and Slurm command lines), `pool` (the runs on GPU
slots, and the signals that stop them), `reports` (the report written after them), `driver` (the steps in order).
"""

from harness.reproduce.driver import reproduce
from harness.reproduce.options import ReproduceOptions

__all__ = ["ReproduceOptions", "reproduce"]
