"""Print the lines of a job file (suite seed variant, as converged_proxy.sh reads them) whose runs are recorded.

Usage: python3 tools/device/recorded_jobs.py JOBS RESULTS [SCALE]

One process resolves every suite of JOBS at the seeds JOBS names, as `harness reproduce` does, and asks RESULTS for
each run's record: the harness's own test of "recorded already", without a harness start per job line (several
seconds each on a GPU host, which added up to minutes of a call). Lines with overrides are left out.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

from harness.reproduce import resolved_runs
from harness.results import recorded
from harness.suite import load_scale, load_suite, suite_scale


def job_lines(jobs: Path) -> list[tuple[str, int, str]]:
    """(suite, seed, variant) of every job line without overrides."""
    lines = []
    for line in jobs.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if len(fields) == 3 and not fields[0].startswith("#"):
            lines.append((fields[0], int(fields[1]), fields[2]))
    return lines


def recorded_lines(jobs: Path, results: Path, scale: str = "proxy") -> list[tuple[str, int, str]]:
    """The lines of `jobs` (without overrides) whose run at `scale` has a record in `results`."""
    wanted = job_lines(jobs)
    seeds = defaultdict(set)
    for suite, seed, _ in wanted:
        seeds[suite].add(seed)
    found = set()
    for name, suite_seeds in seeds.items():
        suite = load_suite(name)
        runs, _ = resolved_runs(suite, suite_scale(suite, load_scale(scale)), [], sorted(suite_seeds), dry_run=True)
        found |= {(name, r.spec.seed, r.run.variant) for r in runs if r.spec is not None and recorded(r.spec, results)}
    return [job for job in wanted if job in found]


if __name__ == "__main__":
    for suite, seed, variant in recorded_lines(Path(sys.argv[1]), Path(sys.argv[2]), *sys.argv[3:4]):
        print(suite, seed, variant)
