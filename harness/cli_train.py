"""`harness train`: one recipe/variant from its Plan (also under torchrun)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys


def cmd_train(args: argparse.Namespace) -> int:
    from harness.config import compose
    from harness.train.loop import TrainingDiverged, train

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    spec = compose(args.overrides)
    try:
        record = train(spec)
    except TrainingDiverged as err:
        print(f"harness train: diverged: {err}", file=sys.stderr)
        return 3
    if int(os.environ.get("RANK", "0")) != 0:  # every rank returns the record; one of them reports it
        return 0
    final = record["final"]
    measured = record["measured"]
    metric = f"mAP {final['map']:.2f}" if "map" in final else f"top-1 {final['top1']:.2f} top-5 {final['top5']:.2f}"
    print(json.dumps({"run_id": record["run_id"], "output_dir": spec.output_dir, **{k: v for k, v in final.items()}}))
    print(f"done: {record['plan']['iterations']:,} iterations in {measured['train_s']:.1f}s "
          f"({measured['data_wait_share']:.0%} waiting for data), {metric}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    train = sub.add_parser("train", help="train one recipe/variant (baseline or multigrid) from its plan",
                           description="Train from the plan of the composed config. Needs output_dir=DIR; "
                                       "resume=true continues from the latest checkpoint there. Under torchrun "
                                       "(torchrun --nproc_per_node=N -m harness train ...) set num_gpus=N.")
    train.add_argument("overrides", nargs="*", help="key=value overrides, e.g. data.name=synthetic data.root=DIR")
    train.set_defaults(func=cmd_train)
