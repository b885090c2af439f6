"""`harness profile`, `harness throughput`, `harness scaling` and `harness bn-bench`: the measurement commands, one
module each; `register` adds them all to the `harness` command."""

from __future__ import annotations

import argparse

from harness.cli_measure.bn_bench import cmd_bn_bench, register_bn_bench
from harness.cli_measure.output import FLOPS_FOOTNOTE
from harness.cli_measure.profile import SMOKE_WARNING, cmd_profile, format_duration, register_profile
from harness.cli_measure.scaling import cmd_scaling, register_scaling
from harness.cli_measure.throughput import cmd_throughput, register_throughput

__all__ = [
    "FLOPS_FOOTNOTE", "SMOKE_WARNING", "cmd_bn_bench", "cmd_profile", "cmd_scaling", "cmd_throughput",
    "format_duration", "register", "register_bn_bench", "register_profile", "register_scaling", "register_throughput",
]


def register(sub: argparse._SubParsersAction) -> None:
    register_profile(sub)
    register_throughput(sub)
    register_scaling(sub)
    register_bn_bench(sub)
