"""`harness profile`, `harness throughput`, `harness scaling` and `harness bn-bench`: the measurement commands."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from harness.cli_args import COUNT, NON_NEGATIVE, path
from harness.spec import SUB_BATCH_BN, SpecError


def _require_out(args: argparse.Namespace) -> None:
    """Refuse an --out that could not be written before the measurement it would lose."""
    if args.out:
        from harness.io import require_writable_file

        require_writable_file(Path(args.out), "--out")


def _save_or_print_json(record: dict, args: argparse.Namespace) -> bool:
    """Write `record` to --out if given; with --json print it and return True (the caller then prints no table)."""
    if args.out:
        from harness.io import write_json_atomic

        write_json_atomic(Path(args.out), record)
    if getattr(args, "json", False):
        print(json.dumps(record))
        return True
    return False


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
    _require_out(args)
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
        if _save_or_print_json(record, args):
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
    if _save_or_print_json(record, args):
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
              f"{row['clips_per_s']:>9.1f}{mem} {m['achieved_tflop_s']:>8.2f} {_share(m['share_of_peak']):>6} "
              f"{_share(m['share_of_matmul']):>6} {row['iterations']:>11,} {row['baseline_iterations']:>12,}{plain}")
    print(FLOPS_FOOTNOTE + _peak_note(record["shapes"]))
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


def cmd_throughput(args: argparse.Namespace) -> int:

    from tqdm import tqdm

    from harness.device import pick_device, require_device
    from harness.measure.throughput import measure_throughput, require_plain_bn_device
    from harness.measure.throughput_modes import row_setting
    from harness.records import ThroughputRecord

    require_device(args.device)
    # Before the progress bar, before any timing.
    require_plain_bn_device(args.plain_bn_impl, pick_device(args.device))
    _require_out(args)

    def save_so_far(fields: dict) -> None:  # after every row: a measurement cut off keeps its rows
        if args.out:
            from harness.io import write_json_atomic

            write_json_atomic(Path(args.out), ThroughputRecord(**fields).to_dict())

    # (GPU-only modes are skipped on a CPU)
    total = (len(args.recipes) * len(args.pad_stem_channels) * len(args.plain_bn_impl) * len(args.batches)
             * len(args.modes))
    with tqdm(total=total, desc="timing steps", unit="step mode", disable=args.json) as bar:
        record = ThroughputRecord(**measure_throughput(args.recipes, args.batches, args.modes, device=args.device,
                                                       warmup=args.warmup, repeats=args.repeats,
                                                       kernels=args.kernels, progress=bar,
                                                       on_row=save_so_far,
                                                       pad_stem=args.pad_stem_channels,
                                                       plain_bn=args.plain_bn_impl)).to_dict()
    if _save_or_print_json(record, args):
        return 0
    print(f"{record['device']}, {record['precision']}; matmul ceiling {record['matmul_tflops']:.1f} TFLOP/s"
          f"{_peak_note(record['rows'])}")
    if record["skipped"]:
        print(f"skipped (they need a GPU): {', '.join(record['skipped'])}")
    print(f"{'model':<20} {'t×s²':>8} {'batch':>5} {'mode':<28} {'ms/step':>8} {'clips/s':>8} {'TFLOP/s':>8} "
          f"{'MFU':>6} {'of mm':>6} {'setup s':>8} {'mem GiB':>8}")
    for r in record["rows"]:
        m = r["mfu"]
        print(f"{r['model']:<20} {r['t']:>3}×{r['s']:<4} {r['batch']:>5} {row_setting(r):<28} "
              f"{r['ms_per_step']:>8.1f} {r['clips_per_s']:>8.1f} {m['achieved_tflop_s']:>8.1f} "
              f"{_share(m['share_of_peak']):>6} {_share(m['share_of_matmul']):>6} {r['setup_s']:>8.1f} "
              f"{r['peak_mem_gib']:>8.2f}")
    print(FLOPS_FOOTNOTE)
    for r in record["rows"]:
        if r.get("compile"):
            _print_compile_cost(r)
    for r in record["rows"]:
        if r.get("kernels"):
            _print_kernels(r)
    return 0


FLOPS_FOOTNOTE = ("TFLOP/s: training FLOPs = 2 × 3 × fvcore's forward multiply-adds a clip, × clips/s; MFU: of the "
                  "card's dense bf16 peak (NVIDIA's datasheets); of mm: of the bf16 matmul timed on the device")


def _share(share: float | None) -> str:
    return "-" if share is None else f"{share:.1%}"


def _peak_note(rows: list[dict]) -> str:
    """`; peak N TFLOP/s (datasheet)` where the shapes' MFU knows the card's peak."""
    peak = next((r["mfu"]["peak_tflop_s"] for r in rows if r.get("mfu") and r["mfu"]["peak_tflop_s"]), None)
    return f"; dense bf16 peak {peak:.0f} TFLOP/s (datasheet)" if peak else ""


def _print_compile_cost(row: dict) -> None:
    from harness.measure.throughput_modes import row_setting

    c = row["compile"]
    print(f"{row['model']} × {row['batch']}, {row_setting(row)}: setup {row['setup_s']:.1f} s, {c['graphs']} "
          f"graph(s): tracing {c['tracing_s']:.1f} s, AOTAutograd {c['aot_autograd_s']:.1f} s, Inductor "
          f"{c['inductor_forward_s'] + c['inductor_backward_s']:.1f} s, guards {c['guards_s']:.1f} s; cache hits "
          f"AOTAutograd {c['aot_autograd_cache_hits']}, Inductor {c['inductor_cache_hits']} "
          f"(misses {c['inductor_cache_misses']})")


def _print_kernels(row: dict) -> None:
    from harness.measure.kernels import short_name
    from harness.measure.throughput_modes import row_setting

    k = row["kernels"]
    busy = f", busy {k['busy_share']:.0%} of the step" if k["busy_share"] is not None else ""
    print(f"\n{row['model']} {row['t']}×{row['s']}² × {row['batch']}, {row_setting(row)}: "
          f"{k['device_ms_per_step']:.1f} ms of kernels per step{busy}")
    print("  " + ", ".join(f"{group} {ms:.1f} ms" for group, ms in k["groups_ms"].items()))
    for top in k["top"]:
        print(f"  {top['ms_per_step']:7.2f} ms {top['share']:6.1%} {top['group']:<13} {short_name(top['name'], 90)}")


def register_throughput(sub: argparse._SubParsersAction) -> None:
    from harness.measure.throughput_modes import DEFAULT_RECIPES, MODES
    from harness.spec import PLAIN_BN_IMPL

    p = sub.add_parser("throughput", help="trainer step clips/s at a recipe's baseline shape vs a plain loop",
                       description="Time the trainer's training step (each train.step mode) and a plain PyTorch "
                                   "loop on the same model and random clips at each recipe's baseline shape.")
    p.add_argument("--recipes", nargs="+", default=list(DEFAULT_RECIPES), metavar="RECIPE")
    p.add_argument("--batches", nargs="+", type=COUNT, default=[8, 32], metavar="N", help="per-GPU batches")
    p.add_argument("--pad-stem-channels", nargs="+", type=NON_NEGATIVE, default=[0], metavar="C",
                   help="model.pad_stem_channels values to time each recipe with, e.g. 0 8 (default 0: unpadded)")
    p.add_argument("--plain-bn-impl", nargs="+", default=["cudnn"], choices=PLAIN_BN_IMPL, metavar="IMPL",
                   help="train.plain_bn_impl values to time each recipe with, e.g. cudnn triton (default cudnn)")
    p.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES, metavar="MODE",
                   help=f"any of {', '.join(MODES)} (default all)")
    p.add_argument("--device", choices=("cuda", "cpu"), default=None, help="default: cuda if available")
    p.add_argument("--warmup", type=NON_NEGATIVE, default=5)
    p.add_argument("--repeats", type=COUNT, default=20)
    p.add_argument("--kernels", type=NON_NEGATIVE, default=0, metavar="N",
                   help="also profile a few steps of each mode and keep its N largest kernels, time per kernel "
                        "group and how busy the GPU is during the step: where the step's time goes")
    p.add_argument("--out", default=None, type=path, help="write the record (JSON) here")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_throughput)


def cmd_scaling(args: argparse.Namespace) -> int:

    from harness.measure.scaling import measure_scaling
    from harness.records import ScalingRecord

    _require_out(args)
    measured = measure_scaling(args.suite, args.scale, args.variants, warmup=args.warmup, repeats=args.repeats,
                               step_mode=args.step, per_gpu_batch=args.per_gpu_batch,
                               sub_batch_bn=args.sub_batch_bn)
    if not measured.pop("is_main"):
        return 0
    record = ScalingRecord(**measured).to_dict()
    _save_or_print_json(record, args)
    per_gpu = record["fixed_per_gpu_batch"]
    print(f"{record['device']} × {record['world_size']}, global batch {record['global_batch']}"
          f"{f' ({per_gpu} clips per GPU at the base shape)' if per_gpu else ''}, {record['step']} steps, "
          f"sub-batch BN {record['sub_batch_bn']}")
    print(f"{'t':>3} {'s':>4} {'per-GPU':>7} {'global':>6} {'split':>5} {'sync':>4} {'ms':>7} {'clips/s':>8}")
    for r in record["shapes"]:
        print(f"{r['t']:>3} {r['s']:>4} {r['per_gpu_batch']:>7} {r['global_batch']:>6} {r['bn_splits']:>5} "
              f"{r['bn_sync']:>4} {r['median_ms']:>7.1f} {r['clips_per_s']:>8.1f}")
    for label, seconds in record["predicted_s"].items():
        print(f"predicted {label}: {seconds:.1f} s of steps")
    return 0


def register_scaling(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scaling", help="DDP step time of every planned shape at the scale's global batch",
                       description="Time every planned shape of a suite's runs (and their baselines) at the "
                                   "scale's global batch split over this process group (run under torchrun for "
                                   "several GPUs; alone for one). Compare the outputs of 1 and N processes.")
    p.add_argument("--suite", default="kinetics_ablation")
    p.add_argument("--scale", default="proxy")
    p.add_argument("--variants", nargs="+", default=["multigrid"], metavar="VARIANT")
    p.add_argument("--warmup", type=NON_NEGATIVE, default=5)
    p.add_argument("--repeats", type=COUNT, default=15)
    p.add_argument("--step", choices=("eager", "cuda_graphs"), default="eager",
                   help="the trainer's step mode to time (cuda_graphs: one graph per shape, DDP's and synchronised "
                        "BN's collectives captured too; needs CUDA)")
    p.add_argument("--per-gpu-batch", type=COUNT, default=None, metavar="N",
                   help="hold N base-shape clips per GPU, the global batch growing with the processes (weak "
                        "scaling, as the paper's recipes train); default: the scale's global batch, shared")
    p.add_argument("--sub-batch-bn", default=None, metavar="IMPL",
                   help="train.sub_batch_bn of the timed runs (auto or triton; default: the suite's)")
    p.add_argument("--out", default=None, type=path)
    p.set_defaults(func=cmd_scaling)


def cmd_bn_bench(args: argparse.Namespace) -> int:
    import torch

    from harness.measure.bn_bench import bench_bn
    from harness.train.distributed import cleanup, init_distributed

    if args.batch % args.splits:
        raise SpecError(f"--batch {args.batch} does not split into --splits {args.splits} equal groups: give a "
                        f"multiple of {args.splits}.")
    info = init_distributed("auto")
    try:
        shape = (args.batch, args.channels, args.frames, args.size, args.size)
        rows = bench_bn(shape, args.splits, info.device, warmup=args.warmup, repeats=args.repeats)
    finally:
        cleanup(info)
    if info.is_main:
        device = torch.cuda.get_device_name(info.device) if info.device.type == "cuda" else "cpu"
        print(f"one BN layer, forward + backward, {'×'.join(map(str, shape))} per process, {device} × "
              f"{info.world_size}")
        for r in rows:
            print(f"  {r.mode:<36} {r.median_ms:8.3f} ms")
    return 0


def register_bn_bench(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bn-bench", help="time one BN layer in each multigrid BN mode (run under torchrun for sync)",
                       description="Forward + backward of one BN layer on an N×C×T×H×W activation: plain BN, "
                                   "sub-batch BN (contiguous blocks and the reference's interleaved groups; the Triton "
                                   "kernels on GPU), and "
                                   "under torchrun BN synchronised over the processes (and torch's SyncBatchNorm "
                                   "on GPU).")
    p.add_argument("--batch", type=COUNT, default=8, help="clips per process (default 8)")
    p.add_argument("--channels", type=COUNT, default=64)
    p.add_argument("--frames", type=COUNT, default=8)
    p.add_argument("--size", type=COUNT, default=56)
    p.add_argument("--splits", type=COUNT, default=2, help="groups for sub-batch BN (default 2)")
    p.add_argument("--warmup", type=NON_NEGATIVE, default=5)
    p.add_argument("--repeats", type=COUNT, default=20)
    p.set_defaults(func=cmd_bn_bench)


def register(sub: argparse._SubParsersAction) -> None:
    register_profile(sub)
    register_throughput(sub)
    register_scaling(sub)
    register_bn_bench(sub)
