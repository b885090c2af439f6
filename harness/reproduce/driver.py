"""`reproduce()`: the steps of `harness reproduce` in order, from the suite's runs to its report."""

from __future__ import annotations

from pathlib import Path

from harness.io import require_writable_dir
from harness.paths import reports_beside, results_root, suite_outputs
from harness.reproduce.commands import launch_lines
from harness.reproduce.inputs import prepare_inputs
from harness.reproduce.options import ReproduceOptions, default_scale
from harness.reproduce.pool import run_on_gpus
from harness.reproduce.reports import require_report_folder, write_suite_report
from harness.reproduce.selection import only_these, resolved_runs, runs_to_train
from harness.spec import SpecError
from harness.suite import ResolvedRun, Scale, SuiteDef, load_scale, load_suite, suite_scale


def reproduce(options: ReproduceOptions) -> int:
    """Run the suite's missing runs (once per seed of `options.seeds`, default the recipe's) and write the report
    into `options.reports` (default: reports/ beside the results folder, :func:`harness.paths.reports_beside`);
    returns the number of failed runs. With `prepare_only`, make what the missing runs need (the scale's synthetic
    data and frame cache, the pre-trained stand-in) and stop before training: a batch of runs that must fit a
    time limit then starts each run with its inputs ready."""
    suite, scale = _suite_and_scale(options)
    _refuse_conflicting(options)
    print(f"suite {suite.name}: {suite.description}\nscale {scale.name}: {scale.description}", flush=True)
    runs, pretrained = resolved_runs(suite, scale, options.overrides, options.seeds, options.dry_run)
    runs = only_these(runs, options.only)
    results = options.results or results_root()
    reports = options.reports or reports_beside(results)
    todo = runs_to_train(runs, results, options.dry_run)
    out_root = suite_outputs(suite.name)
    if options.dry_run:
        _print_launches(suite, scale, todo, out_root, pretrained, options)
        return 0
    failed = 0
    if todo:
        _require_writable_folders(suite.name, results, out_root, reports, options)
        prepare_inputs(scale, options.overrides, todo, pretrained)
        if options.prepare_only:
            print(f"prepared the inputs of {len(todo)} run(s); none trained (--prepare-only)", flush=True)
            return 0
        failed = run_on_gpus(todo, out_root, results, options.gpus)
    if options.prepare_only:
        return 0
    if options.report:  # the tables show the setup these runs used (their GPU count)
        write_suite_report(suite.name, results, next((r.spec.num_gpus for r in runs if r.spec is not None), None),
                           reports)
    return failed


def _suite_and_scale(options: ReproduceOptions) -> tuple[SuiteDef, Scale]:
    """The suite, its `--only` variants checked, and the scale (default :func:`default_scale`) with the synthetic
    data of the suite's dataset."""
    suite = load_suite(options.suite)
    suite.require_variants(options.only or [], "--only")
    return suite, suite_scale(suite, load_scale(options.scale or default_scale()))


def _refuse_conflicting(options: ReproduceOptions) -> None:
    """SpecError where two options ask for what cannot be done at once."""
    if options.dry_run and options.prepare_only:
        raise SpecError("--dry-run prints the runs and makes nothing; --prepare-only makes their inputs: give one.")
    if options.seeds and any(o.startswith("seed=") for o in options.overrides):
        raise SpecError("Give the seeds either as --seeds or as seed=N, not both.")


def _print_launches(suite: SuiteDef, scale: Scale, todo: list[ResolvedRun], out_root: Path, pretrained: str | None,
                    options: ReproduceOptions) -> None:
    """A dry run's output: the launch line of every run to train, and the pre-trained stand-in it would make."""
    for line in launch_lines(suite.name, scale.name, todo, out_root, list(options.overrides), options.launcher,
                             options.nodes):
        print(line)
    if pretrained and not Path(pretrained).is_file() and any(r.spec.model.pretrained == pretrained for r in todo):
        print(f"model.pretrained={pretrained} is made before the first run that needs it (a 2D ResNet-50 "
              f"pre-trained on the synthetic frames: the ImageNet rows' stand-in)")


def _require_writable_folders(suite: str, results: Path, out_root: Path, reports: Path,
                              options: ReproduceOptions) -> None:
    """SpecError before any data or run where a folder the runs write cannot be: their records' (which would
    otherwise fail after every run), their logs' and checkpoints' (under the folder reproduce runs in), the
    report's."""
    require_writable_dir(results / suite, "--results")
    if not options.prepare_only:
        require_writable_dir(out_root.absolute(), "outputs", f"Run harness reproduce from a folder where you "
                             f"can create and write {out_root}/, or make that folder writable.")
    if options.report and not options.prepare_only:
        require_report_folder(suite, reports)
