"""`harness profile`: every planned shape's step timed here, the run's and its baseline's wall-clock predicted, for
one recipe or every run of a suite; the tables it prints."""

from __future__ import annotations

import argparse
import math

from harness.cli_args import COUNT, NON_NEGATIVE, path
from harness.cli_measure.output import FLOPS_FOOTNOTE, peak_note, percent, require_out, save_or_print_json
from harness.spec import SUB_BATCH_BN, SpecError


def cmd_profile(args: argparse.Namespace) -> int:

    from tqdm import tqdm

    from harness.cli_train import scaled_overrides
    from harness.config import compose
    from harness.device import pick_device, require_device
    from harness.measure.predict import profile_plan, profile_summary
    from harness.records import PlanProfileRecord, SuiteProfileRecord
    from harness.schedule import baseline_spec, build_plan
    from harness.schedule.trained import iterations_by_shape
    from harness.train.step import require_step_device

    require_device(args.device)
    require_step_device(args.step, pick_device(args.device))  # before any timing or progress bar
    require_out(args)
    loader = None
    if args.data is not None:
        from harness.measure.loader_bound import load_rates
        loader = load_rates(args.data)
    if args.suite:
        from harness.measure.predict import profile_suite

        def bar(total: int, name: str):
            return tqdm(total=total, desc=f"timing {name}", unit="shape", disable=args.json)

        record = SuiteProfileRecord(**profile_suite(args.suite, args.scale or "paper", device=args.device,
                                                    warmup=args.warmup,
                                                    repeats=args.repeats, step=args.step, progress_factory=bar,
                                                    loader=loader, sub_batch_bn=args.sub_batch_bn,
                                                    plain_bn=args.plain_bn)).to_dict()
        if save_or_print_json(record, args):
            return 0
        with_loader = " with loader" if loader is not None else ""
        per = "per GPU" if record["device"].startswith("cuda") else "per CPU process"
        print(f"suite {record['suite']} at scale={record['scale']} on {record['device']} (predicted times {per})")
        if record["scale"] == "smoke":
            print(SMOKE_WARNING)
        print(f"{'run':<24} {'model':<20} {'iters':>10} {'ratio':>6} {'predicted':>10} {'baseline':>10} "
              f"{'speedup':>8}{with_loader}  paper")
        for row in record["runs"]:
            paper = ", ".join(f"{p['table']}: {p['speedup']}x" for p in row["paper"])
            bound = f" {row['loader_bound_speedup']:>10.2f}x" if loader is not None else ""
            print(f"{row['variant']:<24} {row['model']:<20} {row['iterations']:>10,} {row['iteration_ratio']:>6.2f} "
                  f"{format_duration(row['predicted_gpu_hours'] * 3600):>10} "
                  f"{format_duration(row['baseline_predicted_gpu_hours'] * 3600):>10} "
                  f"{row['predicted_speedup']:>7.2f}x{bound}  {paper}")
        _print_suite_mfu(record["shapes"])
        return 0
    # scale=NAME as `harness train` applies it; the default sub-batch BN leaves the run id as it is
    spec = compose(scaled_overrides([*_with_scale(args.overrides, args.scale),
                                     f"train.sub_batch_bn={args.sub_batch_bn}"]))
    keys = set(iterations_by_shape(build_plan(spec))) | set(iterations_by_shape(build_plan(baseline_spec(spec))))
    if loader is not None:
        from harness.measure.loader_bound import require_rates
        require_rates(loader, keys)  # before the progress bar: nothing is timed for a record that cannot serve
    n_shapes = len(keys)
    with tqdm(total=n_shapes, desc="timing planned shapes", unit="shape", disable=args.json) as bar:
        profile = profile_plan(spec, device=args.device, repeats=args.repeats, warmup=args.warmup, step=args.step,
                               progress=bar, loader=loader, plain_bn=args.plain_bn)
    record = PlanProfileRecord(**profile_summary(profile), spec=spec.to_dict()).to_dict()
    if save_or_print_json(record, args):
        return 0
    _print_plan_profile(record, spec, args.plain_bn, loader)
    return 0


def format_duration(seconds: float) -> str:
    """`seconds` in the unit that reads best: 12.3 s, 4.5 min, 2.10 h."""
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.2f} h"


# At the smoke scale's tiny shapes a step is mostly framework overhead: its time, hence the speedup, is mostly noise
# and says nothing of the speedup at the shapes a real run trains at.
SMOKE_WARNING = ("warning: smoke-scale step times are noise (tiny shapes: mostly framework overhead); the speedup "
                 "below says nothing of a real run's. Profile at the shapes you will train at (scale=proxy, "
                 "scale=paper, or your own data.num_frames and data.crop_size).")


def _print_suite_mfu(shapes: list[dict]) -> None:
    """Each model's range of FLOPs utilisation over its timed shapes."""
    for model in dict.fromkeys(r["model"] for r in shapes):
        mfu = [r["mfu"] for r in shapes if r["model"] == model and r.get("mfu")]
        tflops = [m["achieved_tflop_s"] for m in mfu if math.isfinite(m["achieved_tflop_s"])]  # NaN: out of memory
        if not tflops:
            continue
        shares = [m["share_of_peak"] for m in mfu if m["share_of_peak"] is not None]
        of_peak = f", MFU {min(shares):.1%}-{max(shares):.1%} of {mfu[0]['peak_tflop_s']:.0f}" if shares else ""
        print(f"{model}: {min(tflops):.1f}-{max(tflops):.1f} TFLOP/s over its {len(tflops)} shapes{of_peak}")
    print(FLOPS_FOOTNOTE)


def _print_plan_profile(record: dict, spec, plain_bn: bool, loader) -> None:
    """The table of a plan's profile: the model profiled, every shape's step, the predicted runs."""
    on_gpu = record["device"].startswith("cuda")
    per = "per GPU" if on_gpu else "per CPU process"
    print(f"profile of {record['model']} ({record['recipe'] or 'the default recipe'}, scale={spec.scale}) on "
          f"{record['device']}, {record['step']} steps")
    if spec.scale == "smoke":
        print(SMOKE_WARNING)
    mem_head = f" {'mem GiB':>8}" if on_gpu else ""
    print(f"{'t':>4} {'s':>4} {'batch':>6} {'BN':>3} {'step ms':>9} {'clips/s':>9}{mem_head} {'TFLOP/s':>8} "
          f"{'MFU':>6} {'of mm':>6} {'iters (mg)':>11} {'iters (base)':>12}"
          + (f" {'plain BN ms':>11}" if plain_bn else ""))
    for row in record["shapes"]:
        plain = f" {row['plain_bn_ms']:>11.1f}" if "plain_bn_ms" in row else ""
        mem = f" {row['peak_mem_gib']:>8.2f}" if on_gpu else ""
        m = row["mfu"]
        print(f"{row['t']:>4} {row['s']:>4} {row['batch']:>6} {row['bn_splits']:>3} {row['median_ms']:>9.1f} "
              f"{row['clips_per_s']:>9.1f}{mem} {m['achieved_tflop_s']:>8.2f} {percent(m['share_of_peak']):>6} "
              f"{percent(m['share_of_matmul']):>6} {row['iterations']:>11,} {row['baseline_iterations']:>12,}{plain}")
    print(FLOPS_FOOTNOTE + peak_note(record["shapes"]))
    print(f"predicted on {record['device']}: {record['kind']} {format_duration(record['predicted_hours'] * 3600)} vs "
          f"baseline {format_duration(record['baseline_predicted_hours'] * 3600)} {per} -> "
          f"{record['predicted_speedup']:.2f}x speedup ({record['iteration_ratio']:.2f}x fewer iterations)")
    if loader is not None:
        bound = record["loader_bound"]
        slow = sorted({f"{r['t']}x{r['s']}" for r in bound["shapes"] if r["bound"] == "loader"})
        print(f"with the loader ({loader.source}): {format_duration(bound['predicted_hours'] * 3600)} vs baseline "
              f"{format_duration(bound['baseline_predicted_hours'] * 3600)} -> {bound['predicted_speedup']:.2f}x; "
              f"loader-bound shapes: {', '.join(slow) or 'none'}")


def _with_scale(overrides: list[str], scale: str | None) -> list[str]:
    """`overrides` with `--scale NAME` as the override scale=NAME (a recipe without --suite); SpecError where an
    override names another scale."""
    from harness.cli_train import override_key

    if scale is None:
        return list(overrides)
    given = [o.split("=", 1)[1] for o in overrides if "=" in o and override_key(o) == "scale"]
    if any(name != scale for name in given):
        raise SpecError(f"--scale {scale} and the override scale={given[0]} disagree: give the scale once.")
    return [*overrides, f"scale={scale}"] if not given else list(overrides)


def register_profile(sub: argparse._SubParsersAction) -> None:
    profile = sub.add_parser("profile", help="time every planned shape and predict the multigrid speedup here",
                             description="Measure the step time of each planned shape on random clips (no data) "
                                         "and predict the run's and its baseline's wall-clock on this hardware.")
    profile.add_argument("--suite", default=None, help="profile every run of this suite (one timing per shape)")
    profile.add_argument("--scale", default=None,
                         help="the scale: with --suite, its runs at that scale (default paper); else the recipe at "
                              "that scale, as the override scale=NAME (default: the recipe as it is)")
    profile.add_argument("--device", choices=("cuda", "cpu"), default=None, help="default: cuda if available")
    profile.add_argument("--step", default="eager", choices=("eager", "cuda_graphs", "compile_graphs"),
                         help="run each step as the trainer does with train.step=STEP (default eager)")
    profile.add_argument("--data", default=None, metavar="RATE|FILE[:PATH]",
                         help="the loader's clips/s per training process: one number for every shape, or a "
                              "`harness data bench --out` record (FILE:cache for its frame-cache loader); adds the "
                              "prediction where every iteration takes max(step, load)")
    profile.add_argument("--sub-batch-bn", default="auto", choices=SUB_BATCH_BN,
                         help="how sub-batch BN computes its groups, as train.sub_batch_bn (default auto)")
    profile.add_argument("--plain-bn", action="store_true",
                         help="also time every shape that trains with sub-batch BN with plain BN: what the groups "
                              "cost there")
    profile.add_argument("--repeats", type=COUNT, default=10)
    profile.add_argument("--warmup", type=NON_NEGATIVE, default=3)
    profile.add_argument("--out", default=None, type=path, help="write the record (JSON) here")
    profile.add_argument("--json", action="store_true")
    profile.add_argument("overrides", nargs="*")
    profile.set_defaults(func=cmd_profile)
