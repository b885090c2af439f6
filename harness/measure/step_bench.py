"""Training-step time of a model at each planned shape (timed honestly: synchronised, warm-up excluded).

A timed step is the trainer's whole iteration (harness.train.step.train_iteration), not a forward + backward alone.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import torch
from torch import nn

from harness.device import memory_format_for, sync_device
from harness.models.bn import multigrid_bns, set_bn_layout
from harness.train.step import make_step, train_iteration


@dataclass(frozen=True)
class StepTime:
    t: int
    s: int
    batch: int
    bn_splits: int
    median_ms: float
    clips_per_s: float
    peak_mem_gib: float
    # With sub-batch BN (bn_splits > 1) and `harness profile --plain-bn`: the same step with plain BN, what
    # sub-batch BN costs at this shape.
    plain_bn_ms: float | None = None
    # `harness profile`: the step's FLOPs utilisation (harness.measure.mfu.mfu_fields)
    mfu: dict | None = None

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None or k not in ("plain_bn_ms", "mfu")}


def median_ms(run: Callable[[], object], device: torch.device, *, warmup: int, repeats: int) -> float:
    """Median milliseconds of `run()` over `repeats` calls after `warmup` uncounted ones. Each call is timed to
    completion on `device`; under torch.distributed every rank starts each call together (a barrier)."""
    distributed = torch.distributed.is_available() and torch.distributed.is_initialized()
    times = []
    for i in range(warmup + repeats):
        sync_device(device)
        if distributed:
            torch.distributed.barrier()
        start = time.perf_counter()
        run()
        sync_device(device)
        if i >= warmup:
            times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def time_training_step(model: nn.Module, optimizer: torch.optim.Optimizer, t: int, s: int, batch: int,
                       bn_splits: int, device: torch.device, *, bf16: bool, channels_last: bool,
                       step: str = "eager", warmup: int = 3, repeats: int = 10) -> StepTime:
    """Median time of one training iteration on random clips of batch×3×t×s×s, run as the trainer runs it with
    `train.step=<step>` (train_iteration: LR set, step, loss read, SGD step, sync; the first warm-up step captures
    or compiles)."""
    set_bn_layout(multigrid_bns(model), bn_splits, 1)
    fmt = memory_format_for(channels_last)
    clip = torch.randn(batch, 3, t, s, s, device=device).to(memory_format=fmt)
    labels = torch.randint(0, 2, (batch,), device=device)
    runner = make_step(step, model, optimizer, nn.functional.cross_entropy, bf16, device)
    key = (t, s, batch, bn_splits, 1)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)

    lr = optimizer.param_groups[0]["lr"]  # set again every iteration, as the trainer sets its schedule's
    ms = median_ms(lambda: train_iteration(runner, clip, labels, key, lr), device, warmup=warmup, repeats=repeats)
    peak = torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else 0.0
    return StepTime(t, s, batch, bn_splits, ms, batch / ms * 1e3, peak)
