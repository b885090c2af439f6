"""model.pad_stem_channels (harness.models.resnet3d): the padded stem convolution is the same convolution."""

import pytest
import torch
from torch import nn

from harness.models import build_model
from harness.spec import ModelSpec

from .tiny_models import TINY


@pytest.mark.parametrize("layout", [torch.contiguous_format, torch.channels_last_3d])
def test_a_padded_stem_convolution_is_the_same_convolution_and_gradient(layout):
    """model.pad_stem_channels: zero channels added to input and weight change no sum, and the weight's real
    channels get the same gradient (the padding is rebuilt from them every call)."""
    from harness.models.resnet3d import padded_conv3d

    torch.manual_seed(0)
    conv = nn.Conv3d(3, 8, (5, 7, 7), stride=(1, 2, 2), padding=(2, 3, 3), bias=False)
    x = torch.randn(2, 3, 4, 20, 20).contiguous(memory_format=layout)
    plain = conv(x)
    plain.square().sum().backward()
    grad, conv.weight.grad = conv.weight.grad.clone(), None
    padded = padded_conv3d(x, conv, 8)
    padded.square().sum().backward()
    assert torch.allclose(padded, plain, atol=1e-5) and padded.is_contiguous(memory_format=layout)
    assert conv.weight.grad.shape == (8, 3, 5, 7, 7) and torch.allclose(conv.weight.grad, grad, rtol=1e-4, atol=1e-4)


def test_stem_padding_is_set_on_every_stem_and_leaves_the_parameters_alone():
    from harness.models.resnet3d import StemConv3d

    plain = build_model(ModelSpec(name="slowfast_r50_8x8", width=TINY), 5)
    padded = build_model(ModelSpec(name="slowfast_r50_8x8", width=TINY, pad_stem_channels=8), 5)
    stems = [m for m in padded.modules() if isinstance(m, StemConv3d)]
    assert len(stems) == 2 and {m.pad_channels for m in stems} == {8}  # the slow and the fast pathway's
    assert {m.pad_channels for m in plain.modules() if isinstance(m, StemConv3d)} == {0}
    assert {k: v.shape for k, v in plain.state_dict().items()} == {k: v.shape for k, v in padded.state_dict().items()}


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_a_padded_stem_trains_as_the_unpadded_one_on_gpu():
    torch.manual_seed(0)
    # no dropout: the two forward passes would draw different masks
    models = [build_model(ModelSpec(name="i3d_r50", pad_stem_channels=pad, dropout=0.0), 5) for pad in (0, 8)]
    models[1].load_state_dict(models[0].state_dict())
    clip = torch.randn(2, 3, 8, 112, 112, device="cuda").to(memory_format=torch.channels_last_3d)
    grads = []
    # In fp32 without TF32 the padded convolution is the same arithmetic up to summation order. (Under bf16 the
    # two models' stem gradients differed by 10% on an H100: rounding differences grow through 50 random layers.)
    with torch.backends.cudnn.flags(enabled=True, benchmark=False, deterministic=False, allow_tf32=False):
        for model in models:
            model = model.cuda().to(memory_format=torch.channels_last_3d).train()
            loss = model(clip).square().sum()
            loss.backward()
            grads.append(model.stem.conv1.weight.grad)
    assert (grads[1] - grads[0]).norm() < 1e-3 * grads[0].norm()
