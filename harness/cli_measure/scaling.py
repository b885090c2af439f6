"""`harness scaling`: the DDP step time of every planned shape at the scale's global batch, split over this process
group (1 process or N under torchrun, to compare)."""

from __future__ import annotations

import argparse

from harness.cli_args import COUNT, NON_NEGATIVE, path
from harness.cli_measure.output import require_out, save_or_print_json


def cmd_scaling(args: argparse.Namespace) -> int:

    from harness.measure.scaling import measure_scaling
    from harness.records import ScalingRecord

    require_out(args)
    measured = measure_scaling(args.suite, args.scale, args.variants, warmup=args.warmup, repeats=args.repeats,
                               step_mode=args.step, per_gpu_batch=args.per_gpu_batch,
                               sub_batch_bn=args.sub_batch_bn)
    if not measured.pop("is_main"):
        return 0
    record = ScalingRecord(**measured).to_dict()
    save_or_print_json(record, args)
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
