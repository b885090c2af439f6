"""Job lists for converged_proxy.sh: check them, and name the lines whose runs are recorded already.

A job list is a plain text file, one run a line in priority order: `SUITE SEED VARIANT [key=value ...]`; `#` starts
a comment line. `{standin}` in an override stands for the Kinetics-like stand-in's weights that
kinetics_finetune.sh trains first.

    python benchmarks/jobs.py --check benchmarks/jobs/*.txt     # every line names a run that exists, settings compose
    python benchmarks/jobs.py --recorded FILE --results DIR     # the lines (without overrides) DIR holds a record of
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from functools import cache
from pathlib import Path

from harness.reproduce.selection import resolved_runs
from harness.results import recorded
from harness.spec import SpecError
from harness.suite import load_scale, load_suite, resolve_suite, suite_scale

STANDIN = "{standin}"  # replaced by kinetics_finetune.sh with the stand-in's path
STANDIN_FOR_CHECK = "/nonexistent/kinetics-standin.pt"  # resolving a spec does not open the weights


def job_lines(jobs: Path) -> list[list[str]]:
    """The fields of every job line (comments and blank lines left out)."""
    lines = [line.split() for line in jobs.read_text(encoding="utf-8").splitlines()]
    return [fields for fields in lines if fields and not fields[0].startswith("#")]


@cache
def resolved_variants(suite: str, overrides: tuple[str, ...], scale: str) -> dict[str, bool]:
    """Whether each variant of `suite` resolves to a spec with `overrides` (lines sharing overrides resolve once)."""
    runs = resolve_suite(load_suite(suite), load_scale(scale), list(overrides), data_root="/nonexistent")
    return {r.run.variant: r.spec is not None for r in runs}


def line_errors(fields: list[str], scale: str = "proxy") -> list[str]:
    """What is wrong with one job line: an unknown suite or variant, a bad seed, overrides that do not compose."""
    if len(fields) < 3:
        return ["a job line is SUITE SEED VARIANT [key=value ...]"]
    name, seed, variant, *overrides = fields
    try:
        suite = load_suite(name)
    except SpecError as error:
        return [str(error)]
    errors = []
    if not seed.isdigit():
        errors.append(f"seed '{seed}' is not a whole number >= 0")
    if variant not in {run.variant for run in suite.runs}:
        return [*errors, f"suite {name} has no variant '{variant}'"]
    if overrides:  # resolved as reproduce resolves them: SpecError names a bad key or value
        overrides = [o.replace(STANDIN, STANDIN_FOR_CHECK) for o in overrides]
        try:
            resolves = resolved_variants(name, tuple(overrides), scale)[variant]
        except SpecError as error:
            return [*errors, str(error)]
        if not resolves:
            errors.append(f"{variant} does not resolve with {' '.join(overrides)}")
    return errors


def check(jobs: Path, scale: str = "proxy") -> list[str]:
    """Every problem of a job list, each naming its line; empty if the list is sound."""
    lines = job_lines(jobs)
    problems = [] if lines else [f"{jobs}: no job lines"]
    seen: set[tuple[str, ...]] = set()
    for number, fields in enumerate(lines, 1):
        problems += [f"{jobs}: job {number} ({' '.join(fields)}): {e}" for e in line_errors(fields, scale)]
        if tuple(fields) in seen:
            problems.append(f"{jobs}: job {number} ({' '.join(fields)}) is listed twice")
        seen.add(tuple(fields))
    return problems


def recorded_lines(jobs: Path, results: Path, scale: str = "proxy") -> list[tuple[str, int, str]]:
    """The lines of `jobs` without overrides whose run at `scale` has a record in `results`, resolved in one
    process as `harness reproduce` resolves them (a harness start per line would take seconds each)."""
    wanted = [(f[0], int(f[1]), f[2]) for f in job_lines(jobs) if len(f) == 3]
    seeds = defaultdict(set)
    for suite, seed, _ in wanted:
        seeds[suite].add(seed)
    found = set()
    for name, suite_seeds in seeds.items():
        suite = load_suite(name)
        runs, _ = resolved_runs(suite, suite_scale(suite, load_scale(scale)), [], sorted(suite_seeds), dry_run=True)
        found |= {(name, r.spec.seed, r.run.variant) for r in runs if r.spec is not None and recorded(r.spec, results)}
    return [job for job in wanted if job in found]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--check", nargs="+", type=Path, metavar="FILE", help="check these job lists")
    what.add_argument("--recorded", type=Path, metavar="FILE", help="print the lines of FILE recorded in --results")
    parser.add_argument("--results", type=Path, default=Path("results"), help="results folder (default results/)")
    parser.add_argument("--scale", default="proxy", help="the scale the jobs run at (default proxy)")
    args = parser.parse_args(argv)
    if args.recorded:
        for suite, seed, variant in recorded_lines(args.recorded, args.results, args.scale):
            print(suite, seed, variant)
        return 0
    problems = [p for jobs in args.check for p in check(jobs, args.scale)]
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"{len(args.check)} job list(s): every line names a run that exists, with settings that compose")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
