"""Parameters and FLOPs by fvcore (one clip, eval mode), as the model zoos count them.

fvcore counts one fused multiply-add as one FLOP; "conv-only" is its `conv` operator total,
the number the SlowFast model zoo publishes.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import torch
from torch import nn


@dataclass(frozen=True)
class FlopCount:
    params: int
    gflops: float  # every operator fvcore counts (conv, BN, linear, einsum, pooling where counted)
    gflops_conv: float
    by_operator: dict[str, float]  # GFLOPs per fvcore operator

    def to_dict(self) -> dict:
        return {"params": self.params, "gflops": self.gflops, "gflops_conv": self.gflops_conv,
                "by_operator": self.by_operator}


def count_flops(model: nn.Module, frames: int, crop: int) -> FlopCount:
    """FLOPs of one clip of `frames`×`crop`×`crop` through `model` in eval mode (train mode is restored)."""
    from fvcore.nn import FlopCountAnalysis

    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    # A private generator: counting FLOPs must not move the global RNG (a resumed run recounts them).
    generator = torch.Generator().manual_seed(0)
    clip = torch.randn(1, 3, frames, crop, crop, generator=generator).to(device)
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # tracer and deprecation chatter
            analysis = FlopCountAnalysis(model, clip)
            analysis.unsupported_ops_warnings(False)
            analysis.uncalled_modules_warnings(False)
            by_op = {k: v / 1e9 for k, v in analysis.by_operator().items()}
            total = analysis.total() / 1e9
    finally:
        model.train(was_training)
    params = sum(p.numel() for p in model.parameters())
    return FlopCount(params, total, by_op.get("conv", 0.0), by_op)
