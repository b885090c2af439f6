"""X3D-S and X3D-M: the published architecture and counts; multigrid shapes and BN."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from harness.models import build_model, multigrid_bns, set_bn_layout
from harness.models.flops import count_flops
from harness.models.x3d import X3D, X3DBlock
from harness.spec import ModelSpec

SMOKE_WIDTH = 0.0625


def _x3d(name: str = "x3d_m", classes: int = 400, width: float = 1.0) -> X3D:
    torch.manual_seed(classes)
    return build_model(ModelSpec(name=name, width=width), classes)


def test_the_published_widths_depths_and_blocks():
    """X3D-S/M (X3D paper §3; PySlowFast configs/Kinetics/X3D_M.yaml: width factor 2.0, depth factor 2.2,
    bottleneck factor 2.25): 24 stem channels; res2..res5 of 3, 5, 11, 7 blocks and 24, 48, 96, 192 channels around
    54, 108, 216, 432; squeeze-excitation in every other block; conv5 to 432, then 2048."""
    model = _x3d()
    assert (model.stem.conv_xy.kernel_size, model.stem.conv_t.kernel_size) == ((1, 3, 3), (5, 1, 1))
    assert model.stem.conv_t.groups == model.stem.conv_t.in_channels == 24
    stages = [model.res2, model.res3, model.res4, model.res5]
    assert [len(s) for s in stages] == [3, 5, 11, 7]
    assert [s[0].conv3.out_channels for s in stages] == [24, 48, 96, 192]
    assert [s[0].conv1.out_channels for s in stages] == [54, 108, 216, 432]
    for stage in stages:
        assert [block.se is not None for block in stage] == [i % 2 == 0 for i in range(len(stage))]
        assert all(b.conv2.groups == b.conv2.in_channels and b.conv2.kernel_size == (3, 3, 3) for b in stage)
        assert stage[0].conv2.stride == (1, 2, 2) and all(b.conv2.stride == (1, 1, 1) for b in stage[1:])
    assert [s[0].se.reduce.out_channels for s in stages] == [8, 8, 16, 32]  # 1/16, rounded to multiples of 8
    assert isinstance(model.res2[0].swish, nn.SiLU)
    assert (model.head.conv5.out_channels, model.head.lin5.out_channels, model.head.fc.in_features) == (432, 2048, 2048)
    assert isinstance(model.head.pool, nn.AdaptiveAvgPool3d)
    assert all(isinstance(m, nn.BatchNorm3d) for m in multigrid_bns(model))
    assert not [m for m in model.modules() if type(m) is nn.BatchNorm3d]


# Published counts (fvcore, one clip, conv multiply-adds, the convention of the model zoos): PySlowFast MODEL_ZOO.md
# lists X3D-M at 4.73 GFLOPs and X3D-S at 1.96, both 3.8M parameters; the X3D paper's 6.2 GFLOPs for X3D-M is the
# 16×256² view of its 3-crop test (4.73 × (256/224)²), its 2.0 for X3D-S the 13×160² one (13×182², the S config's
# 3-crop test crop, counts 2.72). PyTorchVideo's hub models hold 3,794,274 parameters, as these do.
PUBLISHED = [("x3d_m", 16, 224, 4.73), ("x3d_m", 16, 256, 6.2), ("x3d_s", 13, 160, 1.96)]


@pytest.mark.parametrize(("name", "frames", "crop", "gflops"), PUBLISHED)
def test_flops_and_parameters_match_the_published_counts(name, frames, crop, gflops):
    count = count_flops(_x3d(name), frames, crop)
    assert count.params == 3_794_274
    assert count.gflops_conv == pytest.approx(gflops, rel=0.02)
    assert count.gflops > count.gflops_conv  # BN and the classifier on top


def test_a_training_step_at_two_multigrid_shapes_with_sub_batch_bn():
    """Two shapes of a multigrid cycle (fewer frames and pixels at a larger batch, then the base shape), BN over
    sub-batches of 2 clips: one model, no rebuild, finite gradients everywhere, running statistics moved."""
    torch.manual_seed(0)
    model = _x3d("x3d_m", classes=4, width=SMOKE_WIDTH).train()
    bns = multigrid_bns(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    before = model.stem.bn.running_mean.clone()
    for batch, splits, t, s in [(8, 4, 4, 32), (4, 2, 8, 64)]:
        set_bn_layout(bns, splits=splits, sync=1)
        loss = nn.functional.cross_entropy(model(torch.randn(batch, 3, t, s, s)), torch.randint(0, 4, (batch,)))
        optimizer.zero_grad()
        loss.backward()
        assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
        optimizer.step()
    assert not torch.equal(before, model.stem.bn.running_mean)
    assert all(isinstance(b, X3DBlock) for b in model.res3)
