"""Every registered model trains at two shapes and at pixel-wide feature maps, in channels-last memory and bf16."""

import pytest
import torch
from torch import nn

from harness.models import build_model, get_entry, list_models, multigrid_bns
from harness.spec import ModelSpec

from .tiny_models import tiny


def _shapes(name: str) -> list[tuple[int, int]]:
    t = max(get_entry(name).min_frames, 4)
    return [(t, 32), (2 * t, 48)]


@pytest.mark.parametrize("name", list_models())
def test_every_model_trains_at_two_shapes(name):
    torch.manual_seed(0)
    model = tiny(name).train()
    for t, s in _shapes(name):
        logits = model(torch.randn(2, 3, t, s, s))
        assert logits.shape == (2, 5)
        logits.sum().backward()
        grads = [p.grad for p in model.parameters() if p.requires_grad]
        assert all(g is not None and torch.isfinite(g).all() for g in grads)
        model.zero_grad()
    if not name.startswith(("swin", "mvit")):  # LayerNorm models
        assert multigrid_bns(model), "BatchNorm3d must be multigrid-aware"
        assert not [m for m in model.modules() if type(m) is nn.BatchNorm3d]


def test_every_model_trains_where_multigrid_shrinks_its_feature_maps_to_a_pixel():
    """Small crops at a coarse long-cycle shape (smoke scale: 11 px) leave the last stages 1 pixel wide; the
    non-local blocks' 2×2 pooling has no window there and keeps every position instead."""
    for name in ("i3d_nl_r50", "i3d_r50", "slowfast_r50_8x8"):
        model = tiny(name).train()
        t = max(get_entry(name).min_frames, 4)
        model(torch.randn(2, 3, t, 11, 11)).sum().backward()


def test_channels_last_and_bf16_autocast():
    torch.manual_seed(0)
    model = tiny("slowfast_r50_8x8").eval()
    clip = torch.randn(2, 3, 8, 32, 32)
    reference = model(clip)
    model_cl = model.to(memory_format=torch.channels_last_3d)
    out = model_cl(clip.to(memory_format=torch.channels_last_3d))
    torch.testing.assert_close(out, reference, rtol=1e-4, atol=1e-4)
    model.train()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(clip)
    assert logits.dtype == torch.bfloat16
    assert torch.isfinite(logits).all()
    # Backward runs; its finiteness is checked on the GPU (the next test): torch 2.14's CPU bf16
    # conv3d weight gradient is non-finite for 3×1×1 kernels on 2-frame inputs, in plain torch too.
    logits.float().sum().backward()


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_bf16_channels_last_training_step_on_gpu():
    torch.manual_seed(0)
    model = build_model(ModelSpec(name="slowfast_r50_8x8"), 5).cuda().to(memory_format=torch.channels_last_3d)
    clip = torch.randn(4, 3, 16, 112, 112, device="cuda").to(memory_format=torch.channels_last_3d)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(clip)
    logits.float().sum().backward()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)
