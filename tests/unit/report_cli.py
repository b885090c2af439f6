"""`harness report` run in-process for the report tests: its exit code and all it printed."""

from __future__ import annotations

from harness.cli import main


def run_report(capsys, *argv: str) -> tuple[int, str]:
    """`harness report ARGV`'s exit code and its stdout and stderr together."""
    code = main(["report", *argv])
    captured = capsys.readouterr()
    return code, captured.out + captured.err
