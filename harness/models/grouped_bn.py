"""Sub-batch BN as one grouped reduction and one normalising pass, for inductor to fuse (opt-in on CUDA).

The other sub-batch paths pay for the grouping: cuDNN per block launches k BN kernels forward and k backward and
concatenates (`bn.py`), the reference's interleaved layout copies the activation each way, and the fused aten
block kernels still launch 4k kernels per layer (`fused_bn.py`). In channels-last memory the k groups of
consecutive clips are k contiguous slabs of (clips/k · T·H·W) rows of C channels, so the statistics of every
group are one reduction over the middle axis of a (k, rows, C) view (no copy), and normalising is one elementwise
pass with a per-(group, channel) scale and shift. Written as plain tensor ops here; `torch.compile` on this
function alone turns forward and backward into a few Triton kernels whatever k is, which is what plain BN's
cost per element needs. On CPU, and as the reference for tests, the same function runs eagerly.
"""

from __future__ import annotations

from collections.abc import Callable

import torch


def grouped_batch_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, splits: int,
                       eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(y, group means, group unbiased variances) of BN with statistics over `splits` blocks of consecutive clips.

    y has x's dtype and memory format; statistics are computed in float32 as cuDNN's BN does."""
    c = x.shape[1]
    channels_last = x.movedim(1, -1)  # N×T×H×W×C: a view of channels-last memory, a copy otherwise (CPU)
    rows = channels_last.reshape(splits, -1, c).float()
    var, mean = torch.var_mean(rows, dim=1, correction=0)
    scale = torch.rsqrt(var + eps) * weight.float()
    shift = bias.float() - mean * scale
    out = (rows * scale[:, None] + shift[:, None]).to(x.dtype).reshape(channels_last.shape).movedim(-1, 1)
    count = rows.shape[1]
    return out, mean.detach(), (var * (count / max(count - 1, 1))).detach()


_compiled: Callable | None = None


def compiled_grouped_batch_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, splits: int,
                                eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`grouped_batch_norm` through `torch.compile` (compiled once per process, specialised per shape and k)."""
    global _compiled
    if _compiled is None:
        _compiled = torch.compile(grouped_batch_norm, dynamic=False)
    return _compiled(x, weight, bias, splits, eps)
