"""The `harness` command line (also `python -m harness`).

Subcommands take Hydra-style `key=value` overrides after their flags, e.g.
`harness plan --json solver.max_epoch=120 multigrid.epoch_factor=2`.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
from collections.abc import Sequence

from harness.cli_args import gathered_overrides, require_each_key_once
from harness.spec import SpecError, known_keys


def _fmt_epochs(p: dict) -> str:
    return f"{p['start_epoch']:>4}–{p['end_epoch']:<4}"


def format_plan_table(summary: dict) -> str:
    """A readable table of the phases and the totals of a plan summary."""
    head = (f"{'phase':>5} {'stage':>5} {'epochs':>10} {'base shape':>16} {'per-GPU batch × t × s (short cycle)':<44}"
            f" {'LR×':>8} {'BN':>9} {'iters':>10}")
    lines = [
        f"Plan of {summary['recipe'] or 'the default recipe'} with model {summary['model']} ({summary['kind']}): "
        f"global batch "
        f"{summary['global_batch']} on {summary['num_gpus']} GPU(s), {summary['train_videos']:,} training clips, "
        f"LR policy {summary['lr_policy']} from base LR {summary['base_lr']:g}, warm-up "
        f"{summary['warmup_epochs']:.2f} epochs.",
        head,
        "-" * len(head),
    ]
    for p in summary["phases"]:
        base = f"{p['batch_mult']}B×{p['t']}×{p['s']}²"
        if p["short_cycle"]:
            cycle = ", ".join(f"{c['per_gpu_batch']}×{c['t']}×{c['s']}" for c in p["short_cycle"])
        else:
            cycle = f"{p['per_gpu_batch']}×{p['t']}×{p['s']}"
        bn = f"split {p['bn_splits']}" if p["bn_splits"] > 1 else (
            f"sync {p['bn_sync']}" if p["bn_sync"] > 1 else "plain")
        note = " (fine-tune)" if p["fine_tune"] else ""
        note += " (empty)" if p["epochs"] == 0 else ""
        lines.append(f"{p['index']:>5} {p['stage']:>5} {_fmt_epochs(p):>10} {base:>16} {cycle:<44}"
                     f" {p['lr_multiplier']:>8.4g} {bn:>9} {p['iterations']:>10,}{note}")
    lines += [
        "-" * len(head),
        f"max epoch {summary['max_epoch']}; LR steps {summary['lr_steps']}",
        f"iterations {summary['iterations']:,} vs baseline {summary['baseline_iterations']:,}: "
        f"{summary['iteration_ratio']:.2f}× fewer",
        f"forward cost {summary['forward_cost']:,.0f} vs baseline {summary['baseline_forward_cost']:,.0f} "
        f"[{summary['cost_unit']}]: {summary['forward_cost_ratio']:.2f}× less",
    ]
    return "\n".join(lines)


def cmd_plan(args: argparse.Namespace) -> int:
    if args.keys:
        from harness.spec import RunSpec

        flat = _flatten(RunSpec().to_dict())
        for key in known_keys():
            print(f"{key} = {json.dumps(flat[key])}")
        return 0
    from harness.cli_train import scaled_overrides
    from harness.config import compose
    from harness.models.check import require_planned_frames
    from harness.schedule import build_plan
    from harness.schedule.summary import plan_summary

    # scale=NAME plans what `harness train` would train: placeholders stand for the scale's synthetic data.
    plan = build_plan(compose(scaled_overrides(args.overrides)))
    require_planned_frames(plan)  # a plan train refuses is no plan to print
    if args.fvcore:
        summary = plan_summary(plan, _fvcore_clip_cost(plan), "GFLOPs (fvcore, forward)")
    else:
        summary = plan_summary(plan)
    rules = None
    if plan.spec.multigrid.batch_rule == "flops":  # its counted costs also say what the paper's rule would give
        from harness.schedule.batch_rules import rule_comparison

        rules = summary["batch_rules"] = rule_comparison(plan.spec)
    if args.json:
        print(json.dumps(summary, indent=None if args.compact else 2))
    else:
        print(format_plan_table(summary) + ("\n\n" + format_rule_comparison(rules) if rules else ""))
    return 0


def format_rule_comparison(rules: dict) -> str:
    """What the paper's batch rule and the counted-FLOPs rule give each shape, and the plans' totals."""
    lines = [f"Batch rules (this plan: {rules['rule']}): per-GPU batch and forward cost per iteration, relative to a "
             f"baseline iteration, at each shape; clip cost counted, relative to the baseline clip.",
             f"{'shape':>10} {'clip cost':>10} {'tokens (Eq. 1)':>18} {'flops (counted)':>18}"]

    def cell(batch, cost) -> str:
        return f"{batch:>6} × {cost:>5.2f}×" if batch is not None else f"{'—':>15}"

    for r in rules["shapes"]:
        tokens, flops = (cell(r[f"{rule}_batch"], r[f"{rule}_iteration_cost"]) for rule in ("tokens", "flops"))
        lines.append(f"{str(r['t']) + '×' + str(r['s']) + '²':>10} {r['clip_cost']:>10.4f} {tokens:>18} {flops:>18}")
    base_it, base_cost = rules["baseline_iterations"], rules["baseline_forward_cost"]
    for rule in ("tokens", "flops"):
        iterations, forward = rules[f"{rule}_iterations"], rules[f"{rule}_forward_cost"]
        lines.append(f"{rule}: {iterations:,} iterations ({base_it / iterations:.2f}× fewer than the baseline's "
                     f"{base_it:,}), forward cost {forward:,.0f} baseline clips ({base_cost / forward:.2f}× less)")
    return "\n".join(lines)


def _fvcore_clip_cost(plan):
    """Forward GFLOPs of one clip at every (t, s) the plan or its baseline uses, counted once each by fvcore."""
    from harness.models import build_model
    from harness.models.flops import count_flops
    from harness.schedule import baseline_spec, build_plan
    from harness.schedule.trained import planned_clip_sizes

    model = build_model(plan.spec.model, plan.spec.data.num_classes)
    shapes = set(planned_clip_sizes(plan)) | set(planned_clip_sizes(build_plan(baseline_spec(plan.spec))))
    gflops = {(t, s): count_flops(model, t, s).gflops for t, s in sorted(shapes)}
    return lambda t, s: gflops[(t, s)]


def _flatten(tree: dict, prefix: str = "") -> dict:
    flat = {}
    for k, v in tree.items():
        if isinstance(v, dict):
            flat.update(_flatten(v, f"{prefix}{k}."))
        else:
            flat[prefix + k] = v
    return flat


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="harness", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    plan = sub.add_parser("plan", help="print the schedule (phases, shapes, batches, LR, BN) of a recipe",
                          description="Plan a baseline or multigrid run. With no overrides: the default recipe "
                                      "(Kinetics-400, SlowFast R50 8×8, multigrid). Turn multigrid off with "
                                      "multigrid.long_cycle=false multigrid.short_cycle=false.")
    plan.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    plan.add_argument("--compact", action="store_true", help="with --json: on one line")
    plan.add_argument("--keys", action="store_true", help="list every config key with its default and exit")
    plan.add_argument("--fvcore", action="store_true",
                      help="count the forward cost with fvcore on the recipe's model (default: the t·s² estimate)")
    plan.add_argument("overrides", nargs="*", help="key=value overrides, e.g. solver.max_epoch=120 recipe=k400_i3d_r50")
    plan.set_defaults(func=cmd_plan)
    from harness import cli_measure, cli_models

    cli_models.register(sub)
    cli_measure.register(sub)
    from harness import cli_data, cli_report, cli_suite, cli_train

    cli_train.register(sub)
    cli_data.register(sub)
    cli_suite.register(sub)
    cli_report.register(sub)
    return parser


_AFTER_INTERRUPT = {
    "train": "Run the same command with resume=true to continue from the last checkpoint in output_dir.",
    "reproduce": "Run the same command again: recorded runs are not redone and stopped runs resume.",
}


# Errors of writing that the user fixes (space, permissions, a read-only file system), not bugs to trace.
_WRITE_FAILURES = {errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS}


def passive_openmp_waits(environ=os.environ) -> None:
    """OpenMP threads that wait for work by spinning (libgomp's default) take the CPU from each other and from the
    other processes of a shared machine, most of a small run's CPU time where cores are busy. Passive waits
    are read by OpenMP when torch loads, so set before; the user's own OMP_WAIT_POLICY wins."""
    environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def main(argv: Sequence[str] | None = None) -> int:
    passive_openmp_waits()
    args = build_parser().parse_args(argv)
    try:
        if hasattr(args, "overrides"):
            args.overrides = gathered_overrides(args)
            require_each_key_once(args.overrides)
        return args.func(args)
    except SpecError as err:
        print(f"harness {args.command}: error: {err}", file=sys.stderr)
        return 2
    except RuntimeError as err:
        # A DataError (a broken dataset: video after video unreadable) is the user's to fix, as a SpecError is. Its
        # module is loaded whenever one was raised; not imported here: torch is slow to import for `harness plan`.
        data = sys.modules.get("harness.data.clip_dataset")
        if data is None or not isinstance(err, data.DataError):
            raise
        print(f"harness {args.command}: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        if err.errno not in _WRITE_FAILURES:
            raise
        # A full disk or a folder that became read-only mid-run: what was written before is whole (atomic writes).
        where = f"{err.filename}: " if err.filename else ""
        print(f"harness {args.command}: error: could not write {where}{err.strerror or err}. Free space or restore "
              f"write access there; {_AFTER_INTERRUPT.get(args.command, 'then run the same command again.')}",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: what was written is whole (atomic writes); say how to go on, not where it was
        print(f"harness {args.command}: interrupted. {_AFTER_INTERRUPT.get(args.command, '')}".rstrip(),
              file=sys.stderr)
        return 130  # the shell's code for a command ended by SIGINT
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return 0
