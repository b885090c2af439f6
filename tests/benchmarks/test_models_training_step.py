"""CPU micro-benchmarks of model steps at tiny widths (`nox -s bench`; run once, untimed, in `nox -s tests`)."""

import pytest
import torch

from harness.models import build_model, multigrid_bns, set_bn_layout
from harness.spec import ModelSpec


@pytest.mark.parametrize("name", ["slowfast_r50_8x8", "i3d_r50"])
@pytest.mark.parametrize("splits", [1, 4])
def test_training_step_tiny(benchmark, name, splits):
    torch.manual_seed(0)
    model = build_model(ModelSpec(name=name, width=1 / 8), 10).train()
    set_bn_layout(multigrid_bns(model), splits, 1)
    clip = torch.randn(8, 3, 8, 32, 32)

    def step():
        model.zero_grad(set_to_none=True)
        model(clip).logsumexp(1).mean().backward()

    benchmark(step)
