"""The 2D ResNet-50 of `harness models pretrain-2d`: torchvision's at full width, inflatable at every width."""

import pytest
import torch
import torchvision

from harness.models import build_model
from harness.models.inflate import inflate_into
from harness.models.resnet2d import backbone_state, resnet50_2d
from harness.spec import ModelSpec


def test_full_width_is_torchvisions_resnet50():
    ours = resnet50_2d(10).state_dict()
    theirs = torchvision.models.resnet50(num_classes=10).state_dict()
    assert {k: v.shape for k, v in ours.items()} == {k: v.shape for k, v in theirs.items()}


@pytest.mark.parametrize("width", [0.0625, 0.25])
def test_narrowed_network_keeps_torchvisions_names_and_inflates_into_models_of_its_width(width):
    torch.manual_seed(0)
    net = resnet50_2d(4, width)
    assert net(torch.randn(2, 3, 32, 32)).shape == (2, 4)
    assert set(net.state_dict()) == set(torchvision.models.resnet50().state_dict())
    state = backbone_state(net)
    assert not any(k.startswith("fc.") for k in state)
    for name in ("slowfast_r50_8x8", "i3d_r50"):
        # inflate_into raises on any weight that does not fit the 3D model's layer
        model = build_model(ModelSpec(name=name, width=width), 4)
        inflate_into(model, state)
    slow_conv = model.stem.conv1.weight  # I3D's stem: kernel 5 in time, the 2D kernel / 5 on every frame
    assert torch.allclose(slow_conv.sum(2), state["conv1.weight"], atol=1e-6)
