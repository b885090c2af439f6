"""Synchronised BatchNorm on CUDA built from PyTorch's fused BN kernels (the ones torch.nn.SyncBatchNorm uses).

These aten ops (`batch_norm_stats`, `batch_norm_elemt`, `batch_norm_backward_reduce`, `batch_norm_backward_elemt`,
...) work in the input's dtype and memory format and exist for CUDA only; the portable paths stay in `bn.py` (and
are what CI tests on CPU).

**Synchronised BN.** The portable path builds the statistics from fp32 elementwise ops (a float copy of the
activation, a square, two reductions, a scale and a shift, each with its own backward), about ten passes over the
activation where plain BN makes two. Here:

forward   per-rank mean and 1/std in one pass (`batch_norm_stats`), one all-gather of (mean, 1/std, count)
          for all ranks, a Welford merge that also updates the running statistics
          (`batch_norm_gather_stats_with_counts`), and one normalising pass (`batch_norm_elemt`);
backward  per-rank sums of dy and dy·(x-mean) with the weight and bias gradients in one pass, one all-reduce
          of the two sums, and one pass for the input gradient.
"""

from __future__ import annotations

import torch
import torch.distributed as dist


def dense_memory_format(x: torch.Tensor) -> torch.memory_format:
    """channels-last-3d if `x` is laid out so (and not also plainly contiguous), else contiguous."""
    if x.dim() == 5 and not x.is_contiguous() and x.is_contiguous(memory_format=torch.channels_last_3d):
        return torch.channels_last_3d
    return torch.contiguous_format


class FusedSyncedBatchNorm(torch.autograd.Function):
    """y = BN(x) with statistics over the batches of every rank of `group`; running stats updated in place."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, running_mean: torch.Tensor,
                running_var: torch.Tensor, factor: float, eps: float, group: dist.ProcessGroup | None):
        x = x.contiguous(memory_format=dense_memory_format(x))  # the kernels take either dense layout
        channels = x.shape[1]
        local_mean, local_invstd = torch.batch_norm_stats(x, eps)
        # torch.full is a fill kernel; a tensor built from a Python number would copy from host memory and
        # synchronise the stream once per layer.
        count = torch.full((1,), x.numel() // channels, dtype=local_mean.dtype, device=x.device)
        mine = torch.cat([local_mean, local_invstd, count])
        world = dist.get_world_size(group)
        every = torch.empty(world, mine.numel(), dtype=mine.dtype, device=mine.device)
        dist.all_gather_into_tensor(every, mine, group=group)
        # Column slices of `every` are strided; the kernels get dense copies (a few hundred floats).
        means, invstds = every[:, :channels].contiguous(), every[:, channels:2 * channels].contiguous()
        counts = every[:, 2 * channels].contiguous()
        # The merge updates running_mean/var with weight `factor` (unbiased variance over all ranks' clips).
        mean, invstd = torch.batch_norm_gather_stats_with_counts(x, means, invstds, running_mean, running_var,
                                                                 factor, eps, counts)
        ctx.save_for_backward(x, weight, mean, invstd, counts.to(torch.int32))
        ctx.group = group
        return torch.batch_norm_elemt(x, weight, bias, mean, invstd, eps)

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor):
        x, weight, mean, invstd, counts = ctx.saved_tensors
        grad_out = grad_out.contiguous(memory_format=dense_memory_format(x))
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        sum_dy, sum_dy_xmu, grad_weight, grad_bias = torch.batch_norm_backward_reduce(
            grad_out, x, mean, invstd, weight, need_x, need_w, need_b)
        grad_x = None
        if need_x:
            sums = torch.cat([sum_dy, sum_dy_xmu])
            dist.all_reduce(sums, group=ctx.group)  # the input gradient depends on every rank's clips
            sum_dy, sum_dy_xmu = sums.chunk(2)
            grad_x = torch.batch_norm_backward_elemt(grad_out, x, mean, invstd, weight, sum_dy, sum_dy_xmu, counts)
        # weight/bias gradients cover this rank's clips; DDP's gradient all-reduce combines them.
        return grad_x, grad_weight, grad_bias, None, None, None, None, None


def fused_synced_batch_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, running_mean: torch.Tensor,
                            running_var: torch.Tensor, factor: float, eps: float,
                            group: dist.ProcessGroup | None) -> torch.Tensor:
    return FusedSyncedBatchNorm.apply(x, weight, bias, running_mean, running_var, factor, eps, group)
