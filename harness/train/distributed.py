"""Process-group setup for `torchrun` (NCCL on GPU, gloo on CPU) and the per-iteration agreement check."""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from harness.spec import SpecError


@dataclass(frozen=True)
class DistInfo:
    rank: int
    world_size: int
    local_rank: int
    device: torch.device

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1


def init_distributed(device_choice: str) -> DistInfo:
    """Read torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK); start the process group if world > 1."""
    rank = int(os.environ.get("RANK", 0))
    world = int(os.environ.get("WORLD_SIZE", 1))
    local = int(os.environ.get("LOCAL_RANK", 0))
    use_cuda = torch.cuda.is_available() if device_choice == "auto" else device_choice == "cuda"
    if use_cuda and not torch.cuda.is_available():
        raise SpecError("'train.device=cuda' but no CUDA device is visible. Use train.device=cpu or auto.")
    device = torch.device("cuda", local) if use_cuda else torch.device("cpu")
    if use_cuda:
        torch.cuda.set_device(device)
    if world > 1 and not dist.is_initialized():
        dist.init_process_group("nccl" if use_cuda else "gloo", rank=rank, world_size=world)
    return DistInfo(rank, world, local, device)


_CAPTURE_STREAMS: dict[torch.device, torch.cuda.Stream] = {}


def capture_stream(device: torch.device) -> torch.cuda.Stream:
    """The side stream on which DDP is built and graphed DDP steps warm up and capture, one per device."""
    if device not in _CAPTURE_STREAMS:
        _CAPTURE_STREAMS[device] = torch.cuda.Stream(device)
    return _CAPTURE_STREAMS[device]


def data_parallel(model: nn.Module, info: DistInfo, for_graphs: bool = False) -> nn.Module:
    """`model` under DistributedDataParallel when several processes train (else `model` itself).

    `for_graphs`: DDP is built on the stream that CUDA-graph steps warm up and capture on. DDP's gradient hooks
    keep the stream they were registered on, and a captured backward must not reach outside the capture's
    streams (PyTorch's condition for capturing DDP).
    """
    if not info.distributed:
        return model
    if info.device.type != "cuda":
        return DistributedDataParallel(model)
    if not for_graphs:
        return DistributedDataParallel(model, device_ids=[info.device.index])
    stream = capture_stream(info.device)
    stream.wait_stream(torch.cuda.current_stream(info.device))
    with torch.cuda.stream(stream):
        net = DistributedDataParallel(model, device_ids=[info.device.index])
    torch.cuda.current_stream(info.device).wait_stream(stream)
    return net


def agree(info: DistInfo, loss_finite: bool, t: int, s: int, batch: int) -> tuple[bool, bool]:
    """(every rank's loss is finite, every rank trains the same shape) — one small all-reduce per iteration."""
    if not info.distributed:
        return loss_finite, True
    flags = torch.tensor([0 if loss_finite else 1, t, -t, s, -s, batch, -batch], dtype=torch.float64,
                         device=info.device)
    dist.all_reduce(flags, op=dist.ReduceOp.MAX)
    f = flags.tolist()
    return f[0] == 0, f[1] == -f[2] and f[3] == -f[4] and f[5] == -f[6]


def cleanup(info: DistInfo) -> None:
    if info.distributed and dist.is_initialized():
        dist.destroy_process_group()
