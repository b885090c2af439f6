"""`harness data …` in this process, through the parser cli_data registers: its output is the test's to capture."""

from __future__ import annotations

import argparse

from harness import cli_data


def harness(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="harness")
    cli_data.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(list(argv))
    return args.func(args)
