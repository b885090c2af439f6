"""`harness bn-bench`: forward + backward time of one BN layer in each of multigrid BN's modes.

The step-time profiles say which shapes are slow; this says how much of it one BN layer is. For an
activation of N×C×T×H×W (channels-last on GPU, bf16 under autocast) it times plain BN; sub-batch BN in both
layouts `train.sub_batch_bn=auto` picks between (cuDNN per block and the reference's interleaved groups) and, on
GPU, with the Triton kernels; and, under
torchrun, BN synchronised over all processes (on GPU with the fused kernels and with the portable ops), beside
``torch.nn.SyncBatchNorm`` (GPU only) for comparison.
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass

import torch
from torch import nn

from harness.device import memory_format_for, use_bf16, use_channels_last
from harness.measure.step_bench import median_ms
from harness.models.bn import MultigridBatchNorm3d, sync_group


@dataclass(frozen=True)
class BNTime:
    mode: str
    shape: tuple[int, ...]
    median_ms: float

    def to_dict(self) -> dict:
        return asdict(self)


def _time(layer: nn.Module, x: torch.Tensor, bf16: bool, warmup: int, repeats: int) -> float:
    autocast = torch.autocast(x.device.type, dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()
    grad = torch.randn_like(x)

    def forward_backward() -> None:
        x.grad = None
        with autocast:
            out = layer(x)
        out.backward(grad.to(out.dtype))

    return median_ms(forward_backward, x.device, warmup=warmup, repeats=repeats)


def bench_bn(shape: tuple[int, int, int, int, int], splits: int, device: torch.device, *, warmup: int = 5,
             repeats: int = 20) -> list[BNTime]:
    """Every mode that applies here; `splits` groups for the sub-batch modes (N must divide by it)."""
    n, c = shape[:2]
    if n % splits:
        raise ValueError(f"a batch of {n} clips cannot be split into {splits} groups")
    on_gpu = device.type == "cuda"
    bf16, fmt = use_bf16(device), memory_format_for(use_channels_last(device))
    x = torch.randn(shape, device=device).contiguous(memory_format=fmt).requires_grad_()
    world = torch.distributed.get_world_size() if torch.distributed.is_initialized() else 1
    rows = []

    def add(mode: str, layer: nn.Module) -> None:
        rows.append(BNTime(mode, shape, _time(layer.to(device).train(), x, bf16, warmup, repeats)))

    add("plain", nn.BatchNorm3d(c))
    if splits > 1:
        # auto's two layouts, each forced by its block limit (blocks up to max_block_splits groups), and Triton's.
        for name, impl, max_block_splits in (("blocks", "auto", splits), ("interleaved", "auto", 0),
                                             *((("triton", "triton", 0),) if on_gpu else ())):
            bn = MultigridBatchNorm3d(c)
            bn.num_splits, bn.sub_batch_impl, bn.max_block_splits = splits, impl, max_block_splits
            add(f"sub-batch {name} k={splits}", bn)
    if world > 1:
        # The default path (fused on GPU), and on GPU also the portable ops for comparison.
        for fused in ((True, False) if on_gpu else (True,)):
            bn = MultigridBatchNorm3d(c)
            bn.num_sync, bn.sync_group, bn.fused_sync = world, sync_group(world), fused
            add(f"synchronised over {world}" + ("" if fused else " (portable ops)"), bn)
        if on_gpu:
            add(f"torch SyncBatchNorm over {world}", nn.SyncBatchNorm(c))
    return rows
