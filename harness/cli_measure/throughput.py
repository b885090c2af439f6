"""`harness throughput`: the trainer's step (each train.step mode) against a plain PyTorch loop at each recipe's
baseline shape; the table it prints, with compile costs and the largest kernels where asked."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli_args import COUNT, NON_NEGATIVE, path
from harness.cli_measure.output import FLOPS_FOOTNOTE, peak_note, percent, require_out, save_or_print_json


def cmd_throughput(args: argparse.Namespace) -> int:

    from tqdm import tqdm

    from harness.device import pick_device, require_device
    from harness.measure.throughput import measure_throughput, require_plain_bn_device
    from harness.measure.throughput_modes import row_setting
    from harness.records import ThroughputRecord

    require_device(args.device)
    # Before the progress bar, before any timing.
    require_plain_bn_device(args.plain_bn_impl, pick_device(args.device))
    require_out(args)

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
    if save_or_print_json(record, args):
        return 0
    print(f"{record['device']}, {record['precision']}; matmul ceiling {record['matmul_tflops']:.1f} TFLOP/s"
          f"{peak_note(record['rows'])}")
    if record["skipped"]:
        print(f"skipped (they need a GPU): {', '.join(record['skipped'])}")
    print(f"{'model':<20} {'t×s²':>8} {'batch':>5} {'mode':<28} {'ms/step':>8} {'clips/s':>8} {'TFLOP/s':>8} "
          f"{'MFU':>6} {'of mm':>6} {'setup s':>8} {'mem GiB':>8}")
    for r in record["rows"]:
        m = r["mfu"]
        print(f"{r['model']:<20} {r['t']:>3}×{r['s']:<4} {r['batch']:>5} {row_setting(r):<28} "
              f"{r['ms_per_step']:>8.1f} {r['clips_per_s']:>8.1f} {m['achieved_tflop_s']:>8.1f} "
              f"{percent(m['share_of_peak']):>6} {percent(m['share_of_matmul']):>6} {r['setup_s']:>8.1f} "
              f"{r['peak_mem_gib']:>8.2f}")
    print(FLOPS_FOOTNOTE)
    for r in record["rows"]:
        if r.get("compile"):
            _print_compile_cost(r)
    for r in record["rows"]:
        if r.get("kernels"):
            _print_kernels(r)
    return 0



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
