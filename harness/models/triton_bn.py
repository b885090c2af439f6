"""Sub-batch BN as Triton kernels that read channels-last memory directly: plain BN's passes over the activation
whatever the number of groups.

In channels-last memory an N×C×T×H×W activation is N·T·H·W rows of C channels, and the k groups of consecutive
clips are k contiguous slabs of R = (N/k)·T·H·W rows. So per-group statistics need no copy and no per-group
launches:

forward   `_stats`: each program reduces a run of rows of one group for a block of channels to (mean, M2)
          (Chan's merge of tile-wise means and squared deviations, stable where mean ≫ std), written as partials;
          `_finish_stats`: merges each group's partials into its mean, variance and 1/std (tiles of partials at a
          time, two passes over them: the mean, then M2 from the deviations of the partials' means from it), folds
          the affine weight into one scale and shift per (group, channel), and moves the layer's running
          statistics towards the batch's; `_normalise`: y = x·scale + shift, one pass.
backward  `_grad_sums`: per-(group, channel) partial sums of dy and dy·x̂; `_finish_grads` adds them up per group
          (tiles of partials at a time) and, over the groups, into the affine weight's and bias's gradients;
          `_grad_input`: dx = w·(1/std)·(dy − mean(dy) − x̂·mean(dy·x̂)), one pass.

That is two reads and one write of the activation forward and four reads and one write backward, the passes cuDNN's
plain BN makes, plus small kernels over (groups × partials × C). Statistics are float32 whatever the activation's
dtype. The kernels pay where the step is replayed from a CUDA graph; eagerly, every launch costs the host more than
plain BN's (results/profile/paper_cuda_graphs_h100_triton/, paper_eager_h100_triton/). So that the host does little,
the statistics' finishing work (the running statistics, the affine gradients) is done inside the kernels rather than
in small torch ops, the finishing kernels merge their partials a tile at a time rather than serially, and launches
after a kernel's first skip Triton's per-launch dispatch (:mod:`harness.models.triton_launch`).

The kernels are jitted on first use for CUDA tensors. With TRITON_INTERPRET=1 set before triton is imported, Triton's
interpreter runs them on CPU tensors (slowly): that is how the CPU tests compare them with the other layouts.
"""

import math
from dataclasses import dataclass
from functools import cache
from types import SimpleNamespace

import torch

from harness.models.fused_bn import dense_memory_format
from harness.models.triton_launch import DirectLaunch

try:
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover - PyTorch's CUDA wheels bring Triton; CPU-only installs may not
    triton = None
    tl = SimpleNamespace(constexpr=None)  # the kernels' annotations only; _kernels says what is missing


def _stats(x_ptr, part_ptr, rows_per_group, channels, rows_per_prog, progs_per_group,
           BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    # part_ptr: (mean, M2) × programs × channels
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
    tl.store(part_ptr + out, mean, mask=cmask)
    tl.store(part_ptr + tl.num_programs(0).to(tl.int64) * channels + out, m2, mask=cmask)


def _finish_stats(part_ptr, weight_ptr, bias_ptr, stats_ptr, running_mean_ptr, running_var_ptr, rows_per_group,
                  channels, rows_per_prog, progs_per_group, splits, eps, var_divisor, factor,
                  UPDATE_RUNNING: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    # One program per block of channels, every group: each group's partials merged into its mean and unbiased
    # variance (for the running statistics), 1/std, and the affine weight folded into a scale and shift. With
    # UPDATE_RUNNING, the running statistics move towards the batch's (mean of the group means; mean of the group
    # variances plus the variance of the group means) by `factor`, here rather than in a dozen small torch ops.
    # The partials are merged BLOCK_P at a time, as tiles reduced across their rows, not one after another: a
    # group has up to about TARGET_PROGRAMS of them, and a serial merge of that many was this kernel's latency.
    # Chan's formula for many parts at once, in two passes over the tiles: mean = Σ nᵢ·meanᵢ / n, then
    # M2 = Σ M2ᵢ + Σ nᵢ·(meanᵢ − mean)², deviations taken from the group's mean, stable where mean ≫ std.
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < channels
    parts = splits * progs_per_group
    weight = tl.load(weight_ptr + cols, mask=cmask, other=1.0).to(tl.float32)
    bias = tl.load(bias_ptr + cols, mask=cmask, other=0.0).to(tl.float32)
    means_mean = tl.zeros([BLOCK_C], dtype=tl.float32)  # Welford over the group means
    means_m2 = tl.zeros([BLOCK_C], dtype=tl.float32)
    var_sum = tl.zeros([BLOCK_C], dtype=tl.float32)
    for group in range(0, splits):
        total = tl.zeros([BLOCK_C], dtype=tl.float32)  # Σ nᵢ·meanᵢ
        for p0 in range(0, progs_per_group, BLOCK_P):
            part = p0 + tl.arange(0, BLOCK_P)
            pmask = part < progs_per_group
            # every partial covers rows_per_prog rows but a group's last, which covers what is left
            count = tl.where(pmask, tl.minimum(rows_per_group - part * rows_per_prog, rows_per_prog), 0).to(tl.float32)
            at = (group * progs_per_group + part).to(tl.int64)[:, None] * channels + cols[None, :]
            part_mean = tl.load(part_ptr + at, mask=pmask[:, None] & cmask[None, :], other=0.0)
            total += tl.sum(count[:, None] * part_mean, axis=0)
        mean = total / rows_per_group
        m2 = tl.zeros([BLOCK_C], dtype=tl.float32)
        for p0 in range(0, progs_per_group, BLOCK_P):
            part = p0 + tl.arange(0, BLOCK_P)
            pmask = part < progs_per_group
            count = tl.where(pmask, tl.minimum(rows_per_group - part * rows_per_prog, rows_per_prog), 0).to(tl.float32)
            at = (group * progs_per_group + part).to(tl.int64)[:, None] * channels + cols[None, :]
            mask = pmask[:, None] & cmask[None, :]
            part_mean = tl.load(part_ptr + at, mask=mask, other=0.0)
            part_m2 = tl.load(part_ptr + parts * channels + at, mask=mask, other=0.0)
            dev = tl.where(mask, part_mean - mean[None, :], 0.0)
            m2 += tl.sum(part_m2 + count[:, None] * dev * dev, axis=0)
        invstd = 1.0 / tl.sqrt(m2 / rows_per_group + eps)
        scale = weight * invstd
        var = m2 / var_divisor  # unbiased (rows - 1), as nn.BatchNorm keeps
        out = group * channels + cols
        plane = splits * channels  # stats_ptr: (mean, invstd, scale, shift, var) × splits × channels
        tl.store(stats_ptr + out, mean, mask=cmask)
        tl.store(stats_ptr + plane + out, invstd, mask=cmask)
        tl.store(stats_ptr + 2 * plane + out, scale, mask=cmask)
        tl.store(stats_ptr + 3 * plane + out, bias - mean * scale, mask=cmask)
        tl.store(stats_ptr + 4 * plane + out, var, mask=cmask)
        delta = mean - means_mean
        means_mean += delta / (group + 1)
        means_m2 += delta * (mean - means_mean)
        var_sum += var
    if UPDATE_RUNNING:
        batch_var = var_sum / splits + means_m2 / splits
        running_mean = tl.load(running_mean_ptr + cols, mask=cmask, other=0.0).to(tl.float32)
        running_var = tl.load(running_var_ptr + cols, mask=cmask, other=0.0).to(tl.float32)
        running_mean += factor * (means_mean - running_mean)
        running_var += factor * (batch_var - running_var)
        tl.store(running_mean_ptr + cols, running_mean.to(running_mean_ptr.dtype.element_ty), mask=cmask)
        tl.store(running_var_ptr + cols, running_var.to(running_var_ptr.dtype.element_ty), mask=cmask)


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


def _grad_sums(x_ptr, dy_ptr, mean_ptr, invstd_ptr, part_ptr, rows_per_group, channels, rows_per_prog,
               progs_per_group, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    # part_ptr: (sum of dy, sum of dy·x̂) × programs × channels
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
    tl.store(part_ptr + out, sum_dy, mask=cmask)
    tl.store(part_ptr + tl.num_programs(0).to(tl.int64) * channels + out, sum_dy_xhat, mask=cmask)


def _finish_grads(part_ptr, sums_ptr, grad_weight_ptr, grad_bias_ptr, channels, progs_per_group, splits,
                  BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    # One program per block of channels: each group's partial sums of dy and dy·x̂ added up (for _grad_input),
    # BLOCK_P partials at a time as in _finish_stats, and over the groups, the affine weight's and bias's gradients.
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < channels
    parts = splits * progs_per_group
    grad_weight = tl.zeros([BLOCK_C], dtype=tl.float32)
    grad_bias = tl.zeros([BLOCK_C], dtype=tl.float32)
    for group in range(0, splits):
        sum_dy = tl.zeros([BLOCK_C], dtype=tl.float32)
        sum_dy_xhat = tl.zeros([BLOCK_C], dtype=tl.float32)
        for p0 in range(0, progs_per_group, BLOCK_P):
            part = p0 + tl.arange(0, BLOCK_P)
            at = (group * progs_per_group + part).to(tl.int64)[:, None] * channels + cols[None, :]
            mask = (part < progs_per_group)[:, None] & cmask[None, :]
            sum_dy += tl.sum(tl.load(part_ptr + at, mask=mask, other=0.0), axis=0)
            sum_dy_xhat += tl.sum(tl.load(part_ptr + parts * channels + at, mask=mask, other=0.0), axis=0)
        out = group * channels + cols
        tl.store(sums_ptr + out, sum_dy, mask=cmask)
        tl.store(sums_ptr + splits * channels + out, sum_dy_xhat, mask=cmask)
        grad_weight += sum_dy_xhat
        grad_bias += sum_dy
    tl.store(grad_weight_ptr + cols, grad_weight.to(grad_weight_ptr.dtype.element_ty), mask=cmask)
    tl.store(grad_bias_ptr + cols, grad_bias.to(grad_bias_ptr.dtype.element_ty), mask=cmask)


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


_KERNELS = (_stats, _finish_stats, _normalise, _grad_sums, _finish_grads, _grad_input)


@cache
def _kernels() -> dict:
    """The kernels, jitted on first use (importing this module needs no GPU)."""
    if triton is None:
        raise RuntimeError("sub-batch BN with Triton kernels needs the triton package (it comes with PyTorch's "
                           "CUDA wheels); use train.sub_batch_bn=auto instead.")
    return {fn.__name__.lstrip("_"): triton.jit(fn) for fn in _KERNELS}


@cache
def _launchers() -> dict:
    """The kernels behind launchers that skip Triton's per-launch dispatch once a specialisation has compiled
    (eager steps: the host's time per launch falls to about a CUDA launch's; :mod:`harness.models.triton_launch`)."""
    return {name: DirectLaunch(fn) for name, fn in _kernels().items()}


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
    block_p: int  # partials the finishing kernels merge at once (a tile of block_p × block_c, at most TILE)

    @property
    def channel_blocks(self) -> int:
        return math.ceil(self.channels / self.block_c)


def _layout(x: torch.Tensor, splits: int) -> _Layout:
    return _layout_for(x.shape[1], x.numel() // x.shape[1], splits)


@cache  # a layer meets the same few shapes every step: eagerly, working the layout out again costs the host
def _layout_for(c: int, rows: int, splits: int) -> _Layout:
    rows_per_group = rows // splits
    block_c = min(MAX_BLOCK_C, triton.next_power_of_2(c))
    block_r = TILE // block_c
    channel_blocks = math.ceil(c / block_c)
    progs = max(1, min(math.ceil(TARGET_PROGRAMS / (splits * channel_blocks)), math.ceil(rows_per_group / block_r)))
    rows_per_prog = math.ceil(math.ceil(rows_per_group / progs) / block_r) * block_r
    progs_per_group = math.ceil(rows_per_group / rows_per_prog)
    block_p = min(triton.next_power_of_2(progs_per_group), TILE // block_c)
    return _Layout(c, rows_per_group, rows_per_prog, progs_per_group, block_r, block_c, block_p)


def _rows(t: torch.Tensor) -> torch.Tensor:
    """`t` (N×C×…) in channels-last memory: N·…·C values, row after row (a view when it already is)."""
    return t.movedim(1, -1).contiguous()


class TritonSubBatchBatchNorm(torch.autograd.Function):
    """y = BN(x) with statistics per contiguous block of `splits` equal blocks of the batch; returns (y, mean, var):
    the blocks' means and unbiased variances, (splits, C) in fp32, for the running statistics."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, splits: int, eps: float,
                running_mean: torch.Tensor | None, running_var: torch.Tensor | None, factor: float):
        _require_device(x)
        k = _launchers()
        lay = _layout(x, splits)
        c, per_group, progs, blocks = lay.channels, lay.rows_per_group, lay.progs_per_group, lay.channel_blocks
        rows = _rows(x)
        # y is allocated in channels-last memory (its storage is `rows`' layout) rather than as a view of a
        # rows tensor: the network applies in-place ReLU to it, which autograd forbids on a custom op's views.
        y = torch.empty(x.shape, device=x.device, dtype=x.dtype, memory_format=torch.channels_last_3d)
        # Few allocations and small ops: eagerly each costs the host more than its kernel costs the GPU.
        partials = torch.empty(2, splits * progs, c, device=x.device, dtype=torch.float32)
        k["stats"]((splits * progs, blocks), rows, partials, per_group, c, lay.rows_per_prog, progs,
                   BLOCK_R=lay.block_r, BLOCK_C=lay.block_c)
        stats = torch.empty(5, splits, c, device=x.device, dtype=torch.float32)
        update = running_mean is not None
        k["finish_stats"]((blocks,), partials, weight, bias, stats, running_mean if update else stats,
                          running_var if update else stats, per_group, c, lay.rows_per_prog, progs, splits, eps,
                          float(max(per_group - 1, 1)), float(factor), UPDATE_RUNNING=update, BLOCK_P=lay.block_p,
                          BLOCK_C=lay.block_c)
        mean, invstd, scale, shift, var = stats.unbind(0)
        per_group_blocks = math.ceil(per_group / lay.block_r)
        k["normalise"]((splits * per_group_blocks, blocks), rows, y, scale, shift, per_group, c, per_group_blocks,
                       BLOCK_R=lay.block_r, BLOCK_C=lay.block_c)
        ctx.save_for_backward(rows, weight, mean, invstd)
        ctx.splits, ctx.memory_format = splits, dense_memory_format(x)
        ctx.mark_non_differentiable(mean, var)
        return y.contiguous(memory_format=dense_memory_format(x)), mean, var

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor, _mean_grad, _var_grad):
        rows, weight, mean, invstd = ctx.saved_tensors
        splits = ctx.splits
        kern = _launchers()
        lay = _layout(grad_out, splits)
        c, per_group, progs, blocks = lay.channels, lay.rows_per_group, lay.progs_per_group, lay.channel_blocks
        dy = _rows(grad_out)
        partials = torch.empty(2, splits * progs, c, device=rows.device, dtype=torch.float32)
        kern["grad_sums"]((splits * progs, blocks), rows, dy, mean, invstd, partials, per_group, c,
                          lay.rows_per_prog, progs, BLOCK_R=lay.block_r, BLOCK_C=lay.block_c)
        sums = torch.empty(2, splits, c, device=rows.device, dtype=torch.float32)  # (sum of dy, of dy·x̂) per group
        grads = torch.empty(2, c, device=rows.device, dtype=weight.dtype)  # the weight's and the bias's
        kern["finish_grads"]((blocks,), partials, sums, grads[0], grads[1], c, progs, splits, BLOCK_P=lay.block_p,
                             BLOCK_C=lay.block_c)
        grad_x = None
        if ctx.needs_input_grad[0]:
            dx = torch.empty_like(rows)
            per_group_blocks = math.ceil(per_group / lay.block_r)
            sum_dy, sum_dy_xhat = sums.unbind(0)
            kern["grad_input"]((splits * per_group_blocks, blocks), rows, dy, dx, mean, invstd, weight, sum_dy,
                               sum_dy_xhat, per_group, c, per_group_blocks, BLOCK_R=lay.block_r, BLOCK_C=lay.block_c)
            grad_x = dx.movedim(-1, 1).contiguous(memory_format=ctx.memory_format)
        grad_w, grad_b = grads.unbind(0)
        return grad_x, grad_w, grad_b, None, None, None, None, None


def triton_sub_batch_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, splits: int, eps: float,
                          running_mean: torch.Tensor | None = None, running_var: torch.Tensor | None = None,
                          factor: float = 0.0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(y, block means, block unbiased variances) of sub-batch BN over `splits` contiguous blocks of the batch.
    With `running_mean` and `running_var` the kernels also move them towards the batch's statistics by `factor`
    (the batch's: the mean of the block means; the mean of the block variances plus the variance of the means)."""
    return TritonSubBatchBatchNorm.apply(x, weight, bias, splits, eps, running_mean, running_var, factor)
