"""Sub-batch BN as Triton kernels that read channels-last memory directly: plain BN's passes over the activation
whatever the number of groups.

In channels-last memory an N×C×T×H×W activation is N·T·H·W rows of C channels, and the k groups of consecutive
clips are k contiguous slabs of R = (N/k)·T·H·W rows. So per-group statistics need no copy and no per-group
launches:

forward   `_stats`: each program reduces a run of rows of one group for a block of channels to (mean, M2)
          (Chan's merge of tile-wise means and squared deviations, stable where mean ≫ std), written as partials;
          `_finish_stats`: merges a group's partials into its mean and 1/std and folds the affine weight into one
          scale and shift per (group, channel); `_normalise`: y = x·scale + shift, one pass.
backward  `_grad_sums`: per-(group, channel) partial sums of dy and dy·x̂; a sum over the partials (one torch
          reduction) gives both; `_grad_input`: dx = w·(1/std)·(dy − mean(dy) − x̂·mean(dy·x̂)), one pass.

That is two reads and one write of the activation forward and four reads and one write backward, the passes cuDNN's
plain BN makes, plus small kernels over (groups × partials × C). Statistics are float32 whatever the activation's
dtype. Measured on an H100 (docs/gpu-notes.md): under CUDA graphs these steps are 12-19% faster than the same steps
with cuDNN's plain BN; eagerly every launch pays Triton's host-side cost and the steps take twice as long, so the
kernels pay only where the step is replayed from a graph.

The kernels are jitted on first use for CUDA tensors. With TRITON_INTERPRET=1 set before triton is imported, Triton's
interpreter runs them on CPU tensors (slowly): that is how the CPU tests compare them with the other layouts.
"""

import math
from dataclasses import dataclass
from functools import cache
from types import SimpleNamespace

import torch

from harness.models.fused_bn import dense_memory_format

try:
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover - PyTorch's CUDA wheels bring Triton; CPU-only installs may not
    triton = None
    tl = SimpleNamespace(constexpr=None)  # the kernels' annotations only; _kernels says what is missing


def _stats(x_ptr, mean_ptr, m2_ptr, rows_per_group, channels, rows_per_prog, progs_per_group,
           BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    pid, cid = tl.program_id(0), tl.program_id(1)
    group, part = pid // progs_per_group, pid % progs_per_group
    cols = cid * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < channels
    start = part * rows_per_prog
    end = tl.minimum(start + rows_per_prog, rows_per_group)
    base = group.to(tl.int64) * rows_per_group
    mean = tl.zeros([BLOCK_C], dtype=tl.float32)
    m2 = tl.zeros([BLOCK_C], dtype=tl.float32)
    for r0 in range(start, end, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        rmask = rows < end
        offsets = (base + rows)[:, None] * channels + cols[None, :]
        mask = rmask[:, None] & cmask[None, :]
        v = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        seen = (r0 - start).to(tl.float32)
        count = tl.minimum(end - r0, BLOCK_R).to(tl.float32)
        tile_mean = tl.sum(v, axis=0) / count
        dev = tl.where(mask, v - tile_mean[None, :], 0.0)
        tile_m2 = tl.sum(dev * dev, axis=0)
        delta = tile_mean - mean
        total = seen + count
        mean += delta * (count / total)
        m2 += tile_m2 + delta * delta * (seen * count / total)
    out = pid.to(tl.int64) * channels + cols
    tl.store(mean_ptr + out, mean, mask=cmask)
    tl.store(m2_ptr + out, m2, mask=cmask)


def _finish_stats(mean_ptr, m2_ptr, weight_ptr, bias_ptr, group_mean_ptr, group_invstd_ptr, scale_ptr, shift_ptr,
                  rows_per_group, channels, rows_per_prog, progs_per_group, eps, BLOCK_C: tl.constexpr):
    group, cid = tl.program_id(0), tl.program_id(1)
    cols = cid * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < channels
    first = group * progs_per_group
    mean = tl.zeros([BLOCK_C], dtype=tl.float32)
    m2 = tl.zeros([BLOCK_C], dtype=tl.float32)
    for part in range(0, progs_per_group):
        seen = (part * rows_per_prog).to(tl.float32)
        count = tl.minimum(rows_per_group - part * rows_per_prog, rows_per_prog).to(tl.float32)
        at = (first + part).to(tl.int64) * channels + cols
        part_mean = tl.load(mean_ptr + at, mask=cmask, other=0.0)
        part_m2 = tl.load(m2_ptr + at, mask=cmask, other=0.0)
        delta = part_mean - mean
        total = seen + count
        mean += delta * (count / total)
        m2 += part_m2 + delta * delta * (seen * count / total)
    invstd = 1.0 / tl.sqrt(m2 / rows_per_group + eps)
    scale = tl.load(weight_ptr + cols, mask=cmask, other=1.0).to(tl.float32) * invstd
    shift = tl.load(bias_ptr + cols, mask=cmask, other=0.0).to(tl.float32) - mean * scale
    out = group * channels + cols
    tl.store(group_mean_ptr + out, mean, mask=cmask)
    tl.store(group_invstd_ptr + out, invstd, mask=cmask)
    tl.store(scale_ptr + out, scale, mask=cmask)
    tl.store(shift_ptr + out, shift, mask=cmask)


def _normalise(x_ptr, y_ptr, scale_ptr, shift_ptr, rows_per_group, channels, blocks_per_group,
               BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    # One program: BLOCK_R rows of one group (tiles never straddle two groups), so the group's per-channel
    # scale and shift are loaded once as vectors.
    pid = tl.program_id(0)
    group, block = pid // blocks_per_group, pid % blocks_per_group
    rows = block * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < channels
    mask = (rows < rows_per_group)[:, None] & cmask[None, :]
    offsets = (group.to(tl.int64) * rows_per_group + rows)[:, None] * channels + cols[None, :]
    scale = tl.load(scale_ptr + group * channels + cols, mask=cmask, other=0.0)
    shift = tl.load(shift_ptr + group * channels + cols, mask=cmask, other=0.0)
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offsets, (x * scale[None, :] + shift[None, :]).to(y_ptr.dtype.element_ty), mask=mask)


def _grad_sums(x_ptr, dy_ptr, mean_ptr, invstd_ptr, sum_dy_ptr, sum_dy_xhat_ptr, rows_per_group, channels,
               rows_per_prog, progs_per_group, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    pid, cid = tl.program_id(0), tl.program_id(1)
    group, part = pid // progs_per_group, pid % progs_per_group
    cols = cid * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < channels
    mean = tl.load(mean_ptr + group * channels + cols, mask=cmask, other=0.0)
    invstd = tl.load(invstd_ptr + group * channels + cols, mask=cmask, other=0.0)
    start = part * rows_per_prog
    end = tl.minimum(start + rows_per_prog, rows_per_group)
    base = group.to(tl.int64) * rows_per_group
    sum_dy = tl.zeros([BLOCK_C], dtype=tl.float32)
    sum_dy_xhat = tl.zeros([BLOCK_C], dtype=tl.float32)
    for r0 in range(start, end, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        offsets = (base + rows)[:, None] * channels + cols[None, :]
        mask = (rows < end)[:, None] & cmask[None, :]
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        xhat = tl.where(mask, (x - mean[None, :]) * invstd[None, :], 0.0)
        sum_dy += tl.sum(dy, axis=0)
        sum_dy_xhat += tl.sum(dy * xhat, axis=0)
    out = pid.to(tl.int64) * channels + cols
    tl.store(sum_dy_ptr + out, sum_dy, mask=cmask)
    tl.store(sum_dy_xhat_ptr + out, sum_dy_xhat, mask=cmask)


def _grad_input(x_ptr, dy_ptr, dx_ptr, mean_ptr, invstd_ptr, weight_ptr, sum_dy_ptr, sum_dy_xhat_ptr,
                rows_per_group, channels, blocks_per_group, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    # dx = w·invstd·(dy − mean(dy) − x̂·mean(dy·x̂)) = a·dy + b·x + c per (group, channel), with the group's
    # vectors loaded once per program (as in _normalise).
    pid = tl.program_id(0)
    group, block = pid // blocks_per_group, pid % blocks_per_group
    rows = block * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < channels
    mask = (rows < rows_per_group)[:, None] & cmask[None, :]
    offsets = (group.to(tl.int64) * rows_per_group + rows)[:, None] * channels + cols[None, :]
    at = group * channels + cols
    mean = tl.load(mean_ptr + at, mask=cmask, other=0.0)
    invstd = tl.load(invstd_ptr + at, mask=cmask, other=0.0)
    mean_dy = tl.load(sum_dy_ptr + at, mask=cmask, other=0.0) / rows_per_group
    mean_dy_xhat = tl.load(sum_dy_xhat_ptr + at, mask=cmask, other=0.0) / rows_per_group
    a = tl.load(weight_ptr + cols, mask=cmask, other=0.0).to(tl.float32) * invstd
    b = -a * invstd * mean_dy_xhat
    c = -a * mean_dy - b * mean
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    dx = a[None, :] * dy + b[None, :] * x + c[None, :]
    tl.store(dx_ptr + offsets, dx.to(dx_ptr.dtype.element_ty), mask=mask)


_KERNELS = (_stats, _finish_stats, _normalise, _grad_sums, _grad_input)


@cache
def _kernels() -> dict:
    """The kernels, jitted on first use (importing this module needs no GPU)."""
    if triton is None:
        raise RuntimeError("sub-batch BN with Triton kernels needs the triton package (it comes with PyTorch's "
                           "CUDA wheels); use train.sub_batch_bn=auto instead.")
    return {fn.__name__.lstrip("_"): triton.jit(fn) for fn in _KERNELS}


def _require_device(x: torch.Tensor) -> None:
    # Triton's interpreter runs the kernels on CPU tensors, but only if TRITON_INTERPRET=1 was set before triton
    # was first imported (its own helpers such as tl.sum are kernels too).
    if not x.is_cuda and not (triton is not None and triton.knobs.runtime.interpret):
        raise RuntimeError("sub-batch BN with Triton kernels runs on CUDA tensors (or, for testing, on CPU under "
                           "TRITON_INTERPRET=1); use train.sub_batch_bn=auto and train.plain_bn_impl=cudnn on the CPU.")


# Tiles of about TILE values: up to 64 channels (128 contiguous bytes per row in bf16) × as many rows. The
# reductions give each group enough programs along its rows to fill the GPU (about TARGET_PROGRAMS in all).
TILE, MAX_BLOCK_C, TARGET_PROGRAMS = 4096, 64, 1024


@dataclass(frozen=True)
class _Layout:
    channels: int
    rows_per_group: int
    rows_per_prog: int  # rows one reduction program covers (a multiple of block_r)
    progs_per_group: int
    block_r: int
    block_c: int

    @property
    def channel_blocks(self) -> int:
        return math.ceil(self.channels / self.block_c)


def _layout(x: torch.Tensor, splits: int) -> _Layout:
    c = x.shape[1]
    rows_per_group = x.numel() // c // splits
    block_c = min(MAX_BLOCK_C, triton.next_power_of_2(c))
    block_r = TILE // block_c
    channel_blocks = math.ceil(c / block_c)
    progs = max(1, min(math.ceil(TARGET_PROGRAMS / (splits * channel_blocks)), math.ceil(rows_per_group / block_r)))
    rows_per_prog = math.ceil(math.ceil(rows_per_group / progs) / block_r) * block_r
    return _Layout(c, rows_per_group, rows_per_prog, math.ceil(rows_per_group / rows_per_prog), block_r, block_c)


def _rows(t: torch.Tensor) -> torch.Tensor:
    """`t` (N×C×…) in channels-last memory: N·…·C values, row after row (a view when it already is)."""
    return t.movedim(1, -1).contiguous()


class TritonSubBatchBatchNorm(torch.autograd.Function):
    """y = BN(x) with statistics per contiguous block of `splits` equal blocks of the batch; returns (y, mean, var):
    the blocks' means and unbiased variances, (splits, C) in fp32, for the running statistics."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, splits: int, eps: float):
        _require_device(x)
        k = _kernels()
        lay = _layout(x, splits)
        c, per_group, progs, blocks = lay.channels, lay.rows_per_group, lay.progs_per_group, lay.channel_blocks
        rows = _rows(x)
        # y is allocated in channels-last memory (its storage is `rows`' layout) rather than as a view of a
        # rows tensor: the network applies in-place ReLU to it, which autograd forbids on a custom op's views.
        y = torch.empty(x.shape, device=x.device, dtype=x.dtype, memory_format=torch.channels_last_3d)
        part_mean = torch.empty(splits * progs, c, device=x.device, dtype=torch.float32)
        part_m2 = torch.empty_like(part_mean)
        k["stats"][(splits * progs, blocks)](rows, part_mean, part_m2, per_group, c, lay.rows_per_prog, progs,
                                             BLOCK_R=lay.block_r, BLOCK_C=lay.block_c)
        mean, invstd, scale, shift = (torch.empty(splits, c, device=x.device, dtype=torch.float32) for _ in range(4))
        k["finish_stats"][(splits, blocks)](part_mean, part_m2, weight, bias, mean, invstd, scale, shift, per_group,
                                            c, lay.rows_per_prog, progs, eps, BLOCK_C=lay.block_c)
        per_group_blocks = math.ceil(per_group / lay.block_r)
        k["normalise"][(splits * per_group_blocks, blocks)](rows, y, scale, shift, per_group, c, per_group_blocks,
                                                            BLOCK_R=lay.block_r, BLOCK_C=lay.block_c)
        ctx.save_for_backward(rows, weight, mean, invstd)
        ctx.splits, ctx.memory_format = splits, dense_memory_format(x)
        var = (invstd.pow(-2) - eps) * (per_group / max(per_group - 1, 1))  # unbiased, as nn.BatchNorm keeps
        ctx.mark_non_differentiable(mean, var)
        return y.contiguous(memory_format=dense_memory_format(x)), mean, var

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor, _mean_grad, _var_grad):
        rows, weight, mean, invstd = ctx.saved_tensors
        splits = ctx.splits
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        kern = _kernels()
        lay = _layout(grad_out, splits)
        c, per_group, progs, blocks = lay.channels, lay.rows_per_group, lay.progs_per_group, lay.channel_blocks
        dy = _rows(grad_out)
        partials = torch.empty(2, splits, progs, c, device=rows.device, dtype=torch.float32)
        kern["grad_sums"][(splits * progs, blocks)](rows, dy, mean, invstd, partials[0], partials[1], per_group, c,
                                                    lay.rows_per_prog, progs, BLOCK_R=lay.block_r, BLOCK_C=lay.block_c)
        sum_dy, sum_dy_xhat = partials.sum(2)  # (splits, C) each
        grad_x = None
        if need_x:
            dx = torch.empty_like(rows)
            per_group_blocks = math.ceil(per_group / lay.block_r)
            kern["grad_input"][(splits * per_group_blocks, blocks)](
                rows, dy, dx, mean, invstd, weight, sum_dy, sum_dy_xhat, per_group, c, per_group_blocks,
                BLOCK_R=lay.block_r, BLOCK_C=lay.block_c)
            grad_x = dx.movedim(-1, 1).contiguous(memory_format=ctx.memory_format)
        grad_w = sum_dy_xhat.sum(0).to(weight.dtype) if need_w else None
        grad_b = sum_dy.sum(0).to(weight.dtype) if need_b else None
        return grad_x, grad_w, grad_b, None, None


def triton_sub_batch_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, splits: int,
                          eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(y, block means, block unbiased variances) of sub-batch BN over `splits` contiguous blocks of the batch."""
    return TritonSubBatchBatchNorm.apply(x, weight, bias, splits, eps)
