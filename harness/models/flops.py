"""Parameters and FLOPs by fvcore (one clip, eval mode), as the model zoos count them, and the
counted cost of each shape that multigrid.batch_rule=flops reads.

fvcore counts one fused multiply-add as one FLOP; "conv-only" is its `conv` operator total,
the number the SlowFast model zoo publishes.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from dataclasses import dataclass

import torch
from torch import nn

from harness.spec import ModelSpec, RunSpec


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


def with_shape_costs(spec: RunSpec) -> RunSpec:
    """`spec` with 'multigrid.shape_costs' holding the fvcore count of every shape its batch_rule=flops plan reads
    (relative to the baseline clip), those it gives kept: the rule's data, counted here because harness.schedule is
    pure. The total count (attention's matmuls and einsums included) is what the rule keeps constant."""
    from harness.schedule.shapes import costed_shapes

    m, d = spec.multigrid, spec.data
    base = (d.num_frames, d.crop_size)
    given = {(t, s) for t, s, _ in m.shape_costs}
    missing = [shape for shape in costed_shapes(spec) if shape != base and shape not in given]
    if not missing:
        return spec
    model = dataclasses.replace(spec.model, pretrained=None)  # the architecture's cost, not its weights'
    base_gflops = _counted_gflops(model, d.num_classes, *base)
    counted = [(t, s, round(_counted_gflops(model, d.num_classes, t, s) / base_gflops, 6)) for t, s in missing]
    return spec.replace(multigrid=dataclasses.replace(m, shape_costs=tuple(sorted([*m.shape_costs, *counted]))))


@functools.lru_cache(maxsize=256)
def _counted_gflops(model: ModelSpec, num_classes: int, frames: int, crop: int) -> float:
    """fvcore's total GFLOPs of one clip (a suite composes many specs of one model: each shape is counted once)."""
    return count_flops(_counting_model(model, num_classes), frames, crop).gflops


@functools.lru_cache(maxsize=4)
def _counting_model(model: ModelSpec, num_classes: int) -> nn.Module:
    from harness.models.build import build_model

    return build_model(model, num_classes)
