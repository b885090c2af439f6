"""BatchNorm whose statistics follow the multigrid Plan (paper §3; PySlowFast slowfast/models/batchnorm_helper.py).

`MultigridBatchNorm3d` is an `nn.BatchNorm3d` (same parameters, buffers and state-dict
keys, so checkpoints hold plain BN and load at any split count) with two training modes:

- **sub-batch BN** (`num_splits = k > 1`): statistics over `k` groups of the per-GPU batch: for
  small `k` group `i` = the `i`-th block of `N/k` consecutive clips (no copies in channels-last
  memory), for larger `k` the reference's clips `i mod k` (reshape `N×C×…` to `N/k × kC × …`,
  one kernel). The batch order is a uniform shuffle, so both draw the same random partition.
  The affine weight and bias are shared by all groups. The running statistics are updated with the aggregate of
  the groups — mean of group means; mean of (unbiased) group variances plus the variance of
  the group means — so evaluation uses one plain BN, as in the paper.
- **synchronised BN** (`num_sync = d > 1`): statistics over the batches of `d` consecutive
  ranks: on CUDA with PyTorch's fused BN kernels and two collectives per layer (`fused_bn`),
  elsewhere from elementwise ops with autograd through the all-reduce.

The layout changes between iterations by setting two integers (`set_bn_layout`): nothing is
rebuilt, the optimizer keeps its parameters. At split 1 and sync 1 it is plain BN.

Difference from the reference implementation: it keeps per-group running statistics and
aggregates them only when a checkpoint is saved, so its eval variance misses the spread of
the group means that our per-step aggregate keeps. Training outputs are the reference's up to which clips
share a group (above).
"""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

from harness.models.fused_bn import dense_memory_format, fused_synced_batch_norm
from harness.models.triton_bn import triton_sub_batch_norm
from harness.spec import PLAIN_BN_IMPL, SUB_BATCH_BN, SUB_BATCH_BN_CUDA_ONLY, SpecError, TrainSpec

# Up to how many sub-batches BN normalises contiguous blocks of the batch (k BN kernels) rather than the
# reference's interleaved groups (one BN kernel on a copy): blocks save the copy but launch once per block, so they
# win at small k, and at more k under CUDA graphs, which replay the launches (results/profile/bn_blocks_experiment/).
BLOCK_SPLITS_EAGER = 2
BLOCK_SPLITS_GRAPHED = 4

# How sub-batch BN computes its groups (`train.sub_batch_bn`, one of harness.spec.SUB_BATCH_BN):
#   auto         cuDNN BN per contiguous block up to `max_block_splits` groups, the reference's interleaved layout
#                beyond (the choice measured above); the trainer's train.sub_batch_bn=auto runs this unless
#                harness.train.choose picks a faster implementation proven on the card;
#   triton       Triton kernels that reduce every group in one launch, in channels-last memory (CUDA; triton_bn).
# BN over the whole per-GPU batch (one group, no sync) is nn.BatchNorm3d's (cuDNN on GPU) unless
# `train.plain_bn_impl=triton` runs it through those kernels with one group.


class MultigridBatchNorm3d(nn.BatchNorm3d):
    """BatchNorm3d with a settable sub-batch split count and cross-device sync count."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1) -> None:
        super().__init__(num_features, eps=eps, momentum=momentum)
        self.num_splits = 1
        self.max_block_splits = BLOCK_SPLITS_EAGER  # see _sub_batch_forward and set_bn_block_splits
        self.num_sync = 1
        self.sync_group: dist.ProcessGroup | None = None
        self.fused_sync = True  # on CUDA, synchronise with the fused kernels of fused_bn (False: portable)
        self.sub_batch_impl = "auto"  # one of SUB_BATCH_BN; `harness bn-bench` times them all
        self.plain_impl = "cudnn"  # one of PLAIN_BN_IMPL: training BN over the whole batch (one group, no sync)

    def _update_factor(self) -> float:
        """Weight of this batch in the running statistics: `momentum`, or with momentum None (precise BN)
        1/batches seen, a cumulative average, as nn.BatchNorm does."""
        if self.momentum is None:
            return 1.0 / float(self.num_batches_tracked)
        return self.momentum

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        plain = self.num_splits == 1 and self.num_sync == 1
        if not self.training or (plain and self.plain_impl == "cudnn"):
            return super().forward(x)
        if self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
        if plain:  # plain_impl triton: the sub-batch kernels with one group
            return self._sub_batch_forward(x, self.plain_impl)
        if self.num_splits > 1:
            return self._sub_batch_forward(x, self.sub_batch_impl)
        return self._synced_forward(x)

    def _sub_batch_forward(self, x: torch.Tensor, impl: str) -> torch.Tensor:
        k = self.num_splits
        if x.shape[0] % k:
            raise ValueError(f"sub-batch BN: batch of {x.shape[0]} clips cannot be split into {k} equal groups")
        # Their kernels update the running statistics too (less host work).
        if impl == "triton":
            out, _, _ = triton_sub_batch_norm(x, self.weight, self.bias, k, self.eps, self.running_mean,
                                              self.running_var, self._update_factor())
            return out
        out, group_mean, group_var = self._sub_batch_by_batch_norm(x, k, blocks=k <= self.max_block_splits)
        with torch.no_grad():
            batch_mean = group_mean.mean(0)
            batch_var = group_var.mean(0) + group_mean.var(0, unbiased=False)
            factor = self._update_factor()
            self.running_mean.lerp_(batch_mean.to(self.running_mean.dtype), factor)
            self.running_var.lerp_(batch_var.to(self.running_var.dtype), factor)
        return out

    def _sub_batch_by_batch_norm(self, x: torch.Tensor, k: int,
                                 blocks: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Sub-batch BN from F.batch_norm (cuDNN on GPU): (y, group means, group unbiased variances)."""
        n, c = x.shape[0], self.num_features
        # Per-group buffers with momentum 1 receive exactly this batch's group statistics.
        group_mean = torch.zeros(k, c, device=x.device, dtype=torch.float32)
        group_var = torch.ones(k, c, device=x.device, dtype=torch.float32)
        if blocks:
            # Group i = the i-th block of n/k consecutive clips. A block is contiguous in channels-last memory
            # too, so each group runs the fast BN kernel in place and only the concatenation copies; but it is
            # k kernels instead of one, which pays only while k is small (or launches are cheap: CUDA graphs).
            out = torch.cat([F.batch_norm(chunk, group_mean[i], group_var[i], self.weight, self.bias, True, 1.0,
                                          self.eps) for i, chunk in enumerate(x.chunk(k))])
            return out, group_mean, group_var
        # The reference's layout: group i = clips i mod k, one BN over n/k × kC (a copy each way when the
        # activations are channels-last), handed back in the input's memory format.
        grouped = x.reshape(n // k, k * c, *x.shape[2:])
        out = F.batch_norm(grouped, group_mean.view(-1), group_var.view(-1), self.weight.repeat(k),
                           self.bias.repeat(k), True, 1.0, self.eps)
        return out.reshape(x.shape).contiguous(memory_format=dense_memory_format(x)), group_mean, group_var

    def _synced_forward(self, x: torch.Tensor) -> torch.Tensor:
        if not (dist.is_available() and dist.is_initialized()):
            return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, True,
                                self.momentum, self.eps)
        if x.is_cuda and self.fused_sync:
            return fused_synced_batch_norm(x, self.weight, self.bias, self.running_mean, self.running_var,
                                           self._update_factor(), self.eps, self.sync_group)
        # Portable path (CPU/gloo, or fused_sync off): statistics from fp32 elementwise ops, autograd through
        # the all-reduce. About ten passes over the activation where the fused kernels make two.
        dims = [0, *range(2, x.dim())]
        xf = x.float()
        # torch.full launches a fill kernel; torch.tensor([...], device=cuda) would copy from pageable host
        # memory, which synchronises the stream: once per BN layer, the CPU would wait for the GPU.
        count = torch.full((1,), float(x.numel() // x.shape[1]), device=x.device, dtype=torch.float32)
        stats = torch.cat([xf.sum(dims), (xf * xf).sum(dims), count])
        stats = _AllReduceSum.apply(stats, self.sync_group)  # autograd flows back to every rank's inputs
        c = self.num_features
        total = stats[2 * c]
        mean = stats[:c] / total
        var = (stats[c:2 * c] / total - mean * mean).clamp_min(0)
        with torch.no_grad():
            factor = self._update_factor()
            self.running_mean.lerp_(mean.detach().to(self.running_mean.dtype), factor)
            unbiased = var.detach() * total / (total - 1).clamp_min(1)
            self.running_var.lerp_(unbiased.to(self.running_var.dtype), factor)
        shape = [1, c] + [1] * (x.dim() - 2)
        scale = self.weight.float() * torch.rsqrt(var + self.eps)
        shift = self.bias.float() - mean * scale
        return (xf * scale.view(shape) + shift.view(shape)).to(x.dtype)


class _AllReduceSum(torch.autograd.Function):
    """Sum over the ranks of `group`, differentiable: every rank's output depends on every rank's input with
    weight 1, so the input gradient is the sum of all ranks' output gradients (another all-reduce)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, group: dist.ProcessGroup | None) -> torch.Tensor:
        ctx.group = group
        out = x.clone()
        dist.all_reduce(out, group=group)
        return out

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        grad = grad.clone()
        dist.all_reduce(grad, group=ctx.group)
        return grad, None


_SYNC_GROUPS: dict[int, dist.ProcessGroup | None] = {}


def sync_group(size: int) -> dist.ProcessGroup | None:
    """This rank's group of `size` consecutive ranks; every rank must call it at the same point."""
    if size <= 1 or not (dist.is_available() and dist.is_initialized()):
        return None
    if size not in _SYNC_GROUPS:
        world, rank = dist.get_world_size(), dist.get_rank()
        if world % size:
            raise ValueError(f"BN sync over {size} devices needs a world size divisible by it, got {world}")
        mine = None
        for start in range(0, world, size):  # new_group is collective: every rank creates every group
            group = dist.new_group(list(range(start, start + size)))
            if start <= rank < start + size:
                mine = group
        _SYNC_GROUPS[size] = mine
    return _SYNC_GROUPS[size]


def multigrid_bns(model: nn.Module) -> list[MultigridBatchNorm3d]:
    """All multigrid BN layers of `model` (collect once, then pass to `set_bn_layout`)."""
    return [m for m in model.modules() if isinstance(m, MultigridBatchNorm3d)]


def set_bn_layout(bns: list[MultigridBatchNorm3d], splits: int, sync: int) -> None:
    """Switch every BN layer to `splits` sub-batches and `sync` devices (cheap; call on phase changes)."""
    group = sync_group(sync) if sync > 1 else None
    for bn in bns:
        bn.num_splits, bn.num_sync, bn.sync_group = splits, sync, group


def set_bn_block_splits(bns: list[MultigridBatchNorm3d], max_block_splits: int) -> None:
    """Sub-batch BN uses contiguous blocks up to this many groups (more when kernel launches are cheap)."""
    for bn in bns:
        bn.max_block_splits = max_block_splits


def set_bn_sub_batch_impl(bns: list[MultigridBatchNorm3d], impl: str) -> None:
    """Every layer computes sub-batch BN with `impl` (one of SUB_BATCH_BN)."""
    if impl not in SUB_BATCH_BN:
        raise ValueError(f"sub-batch BN implementation must be one of {SUB_BATCH_BN}, got {impl!r}")
    for bn in bns:
        bn.sub_batch_impl = impl


def require_bn_kernels_device(sub_batch_impl: str, plain_impl: str, device: torch.device) -> None:
    """SpecError, before any work, where train.sub_batch_bn or train.plain_bn_impl names CUDA kernels and the run's
    device is not a GPU (train.device=auto on a machine without one)."""
    if device.type == "cuda":
        return
    if sub_batch_impl in SUB_BATCH_BN_CUDA_ONLY:
        raise SpecError(f"train.sub_batch_bn={sub_batch_impl} runs CUDA kernels, but no CUDA GPU is visible here. "
                        f"Use train.sub_batch_bn=auto.")
    if plain_impl != "cudnn":
        raise SpecError(f"train.plain_bn_impl={plain_impl} runs CUDA kernels, but no CUDA GPU is visible here. "
                        f"Use train.plain_bn_impl=cudnn.")


def set_bn_impls(bns: list[MultigridBatchNorm3d], train: TrainSpec) -> None:
    """Every layer computes sub-batch and plain training BN as `train` (train.sub_batch_bn, train.plain_bn_impl)
    says."""
    set_bn_sub_batch_impl(bns, train.sub_batch_bn)
    set_bn_plain_impl(bns, train.plain_bn_impl)


def set_bn_plain_impl(bns: list[MultigridBatchNorm3d], impl: str) -> None:
    """Every layer computes training BN over its whole batch (one group, no sync) with `impl` (PLAIN_BN_IMPL)."""
    if impl not in PLAIN_BN_IMPL:
        raise ValueError(f"plain BN implementation must be one of {PLAIN_BN_IMPL}, got {impl!r}")
    for bn in bns:
        bn.plain_impl = impl


def convert_batchnorm(module: nn.Module) -> nn.Module:
    """Replace every nn.BatchNorm3d of `module` (e.g. a torchvision model) by MultigridBatchNorm3d, in place."""
    for name, child in module.named_children():
        if isinstance(child, nn.BatchNorm3d) and not isinstance(child, MultigridBatchNorm3d):
            bn = MultigridBatchNorm3d(child.num_features, eps=child.eps, momentum=child.momentum or 0.1)
            bn.load_state_dict(child.state_dict())
            setattr(module, name, bn)
        else:
            convert_batchnorm(child)
    return module
