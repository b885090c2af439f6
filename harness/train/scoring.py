"""Scoring a run's model: its validation videos (where train.eval_every says and at the end), a sample of its
training videos, and the precise-BN pass that may come before a score."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from harness.data.clip_dataset import BadVideoLog, VideoClipDataset, collate_clips, collate_eval
from harness.data.errors import DataError
from harness.device import sync_device
from harness.models import multigrid_bns, set_bn_layout
from harness.schedule import Plan
from harness.spec import RunSpec
from harness.train.distributed import DistInfo
from harness.train.evaluate import evaluate
from harness.train.loaders import eval_options, run_loader
from harness.train.meter import RunMeter


@dataclass(frozen=True)
class Scoring:
    """What scoring a run's model takes: the network, how clips reach it, and the log of unreadable videos."""

    spec: RunSpec
    net: nn.Module
    info: DistInfo
    multilabel: bool
    prepare: Callable[[torch.Tensor], torch.Tensor]  # the loader's clips, ready for the network
    autocast: contextlib.AbstractContextManager
    bad: BadVideoLog


@torch.no_grad()
def precise_bn(scoring: Scoring, plan: Plan, train_set: VideoClipDataset) -> float:
    """Recompute BN statistics as a true average over `train.precise_bn` batches at the test shape; return the
    seconds it took."""
    start = time.perf_counter()
    spec, net = scoring.spec, scoring.net
    bns = multigrid_bns(net)
    fine = plan.phases[-1]
    set_bn_layout(bns, fine.bn_splits, fine.bn_sync)
    saved = [bn.momentum for bn in bns]
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None  # cumulative moving average: every batch weighs the same
    batch = spec.solver.batch_size // spec.num_gpus
    generator = torch.Generator().manual_seed(spec.seed)
    order = torch.randperm(len(train_set), generator=generator)[: batch * spec.train.precise_bn].tolist()
    loader = run_loader(torch.utils.data.Subset(train_set, order), min(spec.train.num_workers, 4),
                        batch_size=batch, drop_last=True, collate_fn=collate_clips)
    net.train()
    for item in loader:
        with scoring.autocast:
            net(scoring.prepare(item["clips"]))
    for bn, momentum in zip(bns, saved):
        bn.momentum = momentum
    sync_device(scoring.info.device)  # the queued forward passes belong to this time
    return time.perf_counter() - start


def score_videos(scoring: Scoring, dataset: VideoClipDataset, meter: RunMeter,
                 videos: list[int] | None = None) -> dict[str, Any]:
    """The metrics of every video of `dataset` (or the `videos` among them) over the evaluation views; the time it
    takes is added to `meter.eval_s`."""
    start = time.perf_counter()
    spec, info = scoring.spec, scoring.info
    views = dataset.sampling.eval_clips
    chosen = range(len(dataset.records)) if videos is None else videos
    mine = [v * views + c for k, v in enumerate(chosen) if k % info.world_size == info.rank for c in range(views)]
    loader = run_loader(torch.utils.data.Subset(dataset, mine), min(spec.train.num_workers, 4),
                        batch_size=spec.train.eval_batch_size, collate_fn=collate_eval)
    metrics = evaluate(scoring.net, loader, len(dataset.records), spec.data.num_classes, scoring.multilabel,
                       scoring.prepare, scoring.autocast, info.device, info.distributed, on_failures=scoring.bad.update)
    metrics["videos"] = len(chosen)
    meter.eval_s += time.perf_counter() - start
    if chosen and metrics["videos_scored"] == 0:  # else a NaN accuracy would be recorded as the run's result
        listed = {str(dataset.records[v].path) for v in chosen}
        example = next((f" (e.g. {p}: {r})" for p, r in scoring.bad.files.items() if p in listed), "")
        raise DataError(f"None of the {len(chosen)} videos evaluated could be read{example}. "
                        f"Run 'harness data check' on the dataset.")
    return metrics


def train_scores(scoring: Scoring, meter: RunMeter, min_frames: int) -> dict[str, Any]:
    """The model scored on `train.train_eval_videos` training videos (evenly spaced through the list) with the
    evaluation views, its keys prefixed `train_`: beside the validation score it tells underfitting from memorising."""
    spec = scoring.spec
    train_views = VideoClipDataset.from_spec(spec, "train", train=False, min_frames=min_frames, **eval_options(spec))
    n = len(train_views.records)
    count = min(spec.train.train_eval_videos, n)
    picked = sorted({i * n // count for i in range(count)})
    return {f"train_{k}": v for k, v in score_videos(scoring, train_views, meter, picked).items()}
