"""`harness reproduce` and `harness suites`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from harness.cli_args import ValuesBeforeOverrides, path

if TYPE_CHECKING:
    from harness.reproduce import ReproduceOptions

# Keys that reproduce sets for each run itself; an override of one would be overruled or would mislabel the run.
_SET_BY_REPRODUCE = {"scale": "give the scale as --scale NAME", "suite": "give the suite as --suite NAME",
                     "variant": "pick runs with --only VARIANT", "output_dir": "each run's is outputs/SUITE/",
                     "resume": "stopped runs always resume"}


def _require_sound_arguments(args: argparse.Namespace) -> None:
    from harness.spec import SpecError

    for override in args.overrides:
        key = override.split("=", 1)[0].lstrip("+~")
        if "=" in override and key in _SET_BY_REPRODUCE:
            raise SpecError(f"{override}: reproduce sets {key} for every run; {_SET_BY_REPRODUCE[key]}.")
    twice = sorted({seed for seed in args.seeds or [] if args.seeds.count(seed) > 1})
    if twice:  # the same run twice, both writing one output folder
        raise SpecError(f"--seeds lists {', '.join(map(str, twice))} more than once; give each seed once.")
    if args.nodes < 1:
        raise SpecError(f"--nodes must be >= 1, got {args.nodes}.")
    if args.gpus is not None and args.gpus < 0:
        raise SpecError(f"--gpus must be >= 0 (0: no GPU), got {args.gpus}.")


def reproduce_options(args: argparse.Namespace) -> ReproduceOptions:
    """What the flags of `harness reproduce` ask for."""
    from harness.reproduce import ReproduceOptions  # the harness's layers load with the command that uses them

    return ReproduceOptions(suite=args.suite, scale=args.scale, overrides=args.overrides, results=args.results,
                            gpus=args.gpus, report=not args.no_report, dry_run=args.dry_run, only=args.only,
                            launcher=args.launcher, nodes=args.nodes, seeds=args.seeds,
                            prepare_only=args.prepare_only, reports=args.out)


def cmd_reproduce(args: argparse.Namespace) -> int:
    from harness.reproduce import reproduce
    from harness.reproduce.pool import sigterm_as_interrupt

    _require_sound_arguments(args)
    with sigterm_as_interrupt():
        failed = reproduce(reproduce_options(args))
    return 1 if failed else 0


def cmd_suites(args: argparse.Namespace) -> int:
    from harness.suite import list_scales, list_suites, load_suite

    for name in list_suites():
        suite = load_suite(name)
        print(f"{name:<26} {len(suite.runs):>3} runs  {suite.description}")
    print(f"scales: {', '.join(list_scales())}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    rep = sub.add_parser("reproduce", help="run a suite's missing runs, then write its report",
                         description="Run every run of the suite that has no record in results/ yet (stop it "
                                     "and start again: nothing is redone), then write reports/SUITE/index.html "
                                     "beside it (--out DIR elsewhere). A run with num_gpus=N starts under torchrun "
                                     "with N processes; runs share the local GPUs, N each.")
    rep.add_argument("--suite", default="kinetics_ablation")
    rep.add_argument("--scale", default=None, help="smoke | proxy | paper (default: proxy with a GPU, else smoke)")
    rep.add_argument("--gpus", type=int, default=None, help="local GPUs to spread runs over (default: all)")
    rep.add_argument("--results", default=None, type=path, help="results folder (default: results/ of this checkout)")
    rep.add_argument("--out", default=None, type=path, metavar="DIR",
                     help="folder of reports to write SUITE/index.html in (default: reports/ beside the results "
                          "folder: this checkout's reports/, or DIR/../reports for --results DIR)")
    rep.add_argument("--only", action=ValuesBeforeOverrides, default=None, metavar="VARIANT",
                     help="run only these variants, in this order (the report still shows every record)")
    rep.add_argument("--seeds", action=ValuesBeforeOverrides, convert=int, default=None, metavar="N",
                     help="run every (selected) run once per seed (initialisation and data order; same videos); "
                          "the report shows mean ± std over seeds")
    rep.add_argument("--no-report", action="store_true")
    rep.add_argument("--dry-run", action="store_true", help="print the command of every run that would start")
    rep.add_argument("--prepare-only", action="store_true",
                     help="make what the missing runs need (synthetic data, frame cache, pre-trained stand-in) "
                          "and stop before training, e.g. before a batch of runs with a time limit")
    rep.add_argument("--launcher", choices=("local", "torchrun", "slurm"), default="local",
                     help="with --dry-run: print commands for this host (local), for a multi-node torchrun "
                          "rendezvous (torchrun), or a Hydra submitit sweep for Slurm (slurm)")
    rep.add_argument("--nodes", type=int, default=1, help="with --launcher torchrun/slurm: nodes per run")
    rep.add_argument("overrides", nargs="*", help="key=value overrides for every run, e.g. data.root=DIR")
    rep.set_defaults(func=cmd_reproduce)
    suites = sub.add_parser("suites", help="list the suites and scales")
    suites.set_defaults(func=cmd_suites)
