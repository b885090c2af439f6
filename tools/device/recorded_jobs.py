"""Print the lines of a job file (suite seed variant, as converged_proxy.sh reads them) whose runs are recorded.

Usage: python3 tools/device/recorded_jobs.py JOBS RESULTS [SCALE]

One process asks `harness reproduce --dry-run` of every suite in JOBS, at the seeds JOBS names, what RESULTS holds:
the harness's own test of "recorded already", without a harness start per job line (several seconds each on a GPU
host, which added up to minutes of a call). Lines with overrides are left out: the dry run does not see them.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections import defaultdict
from pathlib import Path

from harness.reproduce import reproduce


def job_lines(jobs: Path) -> list[tuple[str, int, str]]:
    """(suite, seed, variant) of every job line without overrides."""
    lines = []
    for line in jobs.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if len(fields) == 3 and not fields[0].startswith("#"):
            lines.append((fields[0], int(fields[1]), fields[2]))
    return lines


def recorded_lines(jobs: Path, results: Path, scale: str = "proxy") -> list[tuple[str, int, str]]:
    wanted = job_lines(jobs)
    seeds = defaultdict(set)
    for suite, seed, _ in wanted:
        seeds[suite].add(seed)
    found = set()
    for suite, suite_seeds in seeds.items():
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            reproduce(suite, scale, [], results=results, dry_run=True, seeds=sorted(suite_seeds))
        for line in out.getvalue().splitlines():  # "  <variant>   seed <N> recorded already (<file>)"
            fields = line.split()
            if len(fields) >= 5 and fields[1] == "seed" and fields[3:5] == ["recorded", "already"]:
                found.add((suite, int(fields[2]), fields[0]))
    return [job for job in wanted if job in found]


if __name__ == "__main__":
    for suite, seed, variant in recorded_lines(Path(sys.argv[1]), Path(sys.argv[2]), *sys.argv[3:4]):
        print(suite, seed, variant)
