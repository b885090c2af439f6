"""Which runs of a suite `harness reproduce` trains: the suite's runs at a scale, once per seed, narrowed to those
named, less those recorded already or recorded under another suite (whose record is reused)."""

from __future__ import annotations

from pathlib import Path

from harness.reproduce.inputs import suite_data, suite_pretrained, synthetic_paths
from harness.results import damaged_record, recorded, reuse_record, same_run_elsewhere, set_aside_damaged
from harness.suite import ResolvedRun, Scale, SuiteDef, resolve_suite


def resolved_runs(suite: SuiteDef, scale: Scale, overrides: list[str], seeds: list[int] | None,
                  dry_run: bool) -> tuple[list[ResolvedRun], str | None]:
    """The suite's runs at `scale` (once per seed of `seeds`, default the recipe's) and the pre-trained stand-in's
    file they name (None where none): the data's paths only, nothing made, so a suite whose runs are all recorded
    (or reusable) needs no data on this machine. Seed-major order: every run's first seed before any run's second,
    so a stopped call leaves whole rows."""
    root, cache = suite_data(scale, overrides, dry_run, prepare=None if dry_run else synthetic_paths)
    pretrained = suite_pretrained(scale, overrides)  # for the ImageNet rows; built only if one runs
    runs = [r for seed in (seeds or [None]) for r in resolve_suite(
        suite, scale, [*overrides, *([f"seed={seed}"] if seed is not None else [])], root, cache, pretrained)]
    return runs, pretrained


def only_these(runs: list[ResolvedRun], only: list[str] | None) -> list[ResolvedRun]:
    """The runs of the variants in `only`, in the order given (the first named run first); all of them without."""
    if not only:
        return runs
    return sorted((r for r in runs if r.run.variant in only), key=lambda r: only.index(r.run.variant))


def runs_to_train(runs: list[ResolvedRun], results: Path, dry_run: bool) -> list[ResolvedRun]:
    """The runs of `runs` that have no record in `results`, saying of each other run why not: it cannot run, it is
    recorded already, or the same run is recorded under another suite (reused: its record copied, unless
    `dry_run`). A damaged record at a run's path is named and kept aside (left in place by a dry run)."""
    todo = []
    for r in runs:
        if r.spec is not None and (damaged := damaged_record(r.spec, results)) is not None:
            # A record the report would leave out (a copy cut short, an edited file) does not make the run done:
            # it runs again, and the file is kept aside rather than deleted or written over.
            path, problem = damaged
            kept = "left where it is (a dry run moves nothing)" if dry_run else \
                f"kept as {set_aside_damaged(path).name}"
            print(f"  {r.run.variant:<24} seed {r.spec.seed} warning: {path} is no run record the report can read "
                  f"({problem}): not counted as recorded, {kept}", flush=True)
        if r.spec is None:
            print(f"  {r.run.variant:<24} not run: {r.skip_reason}")
        elif (found := recorded(r.spec, results)) is not None:
            print(f"  {r.run.variant:<24} seed {r.spec.seed} recorded already ({found.name})")
        elif not dry_run and (same := same_run_elsewhere(r.spec, results)) is not None:
            reuse_record(same, r.spec, results)
            print(f"  {r.run.variant:<24} seed {r.spec.seed} the same run is recorded as {same.name}: reused")
        else:
            todo.append(r)
    return todo
