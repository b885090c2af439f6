"""`harness bn-bench`: one BN layer's forward and backward timed in each multigrid BN mode (synchronised too, under
torchrun)."""

from __future__ import annotations

import argparse

from harness.cli_args import COUNT, NON_NEGATIVE
from harness.spec import SpecError


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
