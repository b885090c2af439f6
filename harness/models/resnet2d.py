"""The 2D ResNet-50 that `harness models pretrain-2d` trains: torchvision's, in the layout inflation reads.

At width 1.0 it is exactly `torchvision.models.resnet50`. At a smaller width (smoke scale shrinks the video models
to 1/16) every stage is narrowed by the same rule the 3D models use (`resnet3d.scaled`), keeping torchvision's
module names, so that its state dict inflates into the equally narrowed I3D or SlowFast slow pathway: ImageNet
weights exist at full width only, and a full-width 2D network does not fit a narrowed 3D one.
"""

from __future__ import annotations

import torch
import torchvision
from torch import nn
from torchvision.models.resnet import Bottleneck

from harness.models.resnet3d import R50_DEPTHS, R50_WIDTHS, scaled


def resnet50_2d(num_classes: int, width: float = 1.0) -> torchvision.models.ResNet:
    """torchvision's ResNet-50 with `num_classes` outputs, its channels scaled by `width` as the 3D models scale."""
    net = torchvision.models.resnet50(weights=None, num_classes=num_classes)
    if width == 1.0:
        return net
    dim_in = scaled(64, width)
    net.conv1 = nn.Conv2d(3, dim_in, kernel_size=7, stride=2, padding=3, bias=False)
    net.bn1 = nn.BatchNorm2d(dim_in)
    for i, (depth, inner) in enumerate(zip(R50_DEPTHS, R50_WIDTHS)):
        inner, stride = scaled(inner, width), 1 if i == 0 else 2
        dim_out = inner * Bottleneck.expansion
        # The first block of every stage changes the channels, so it has torchvision's projection shortcut.
        shortcut = nn.Sequential(nn.Conv2d(dim_in, dim_out, 1, stride=stride, bias=False), nn.BatchNorm2d(dim_out))
        blocks = [Bottleneck(dim_in, inner, stride, shortcut)]
        blocks += [Bottleneck(dim_out, inner) for _ in range(depth - 1)]
        setattr(net, f"layer{i + 1}", nn.Sequential(*blocks))
        dim_in = dim_out
    net.fc = nn.Linear(dim_in, num_classes)
    for m in net.modules():  # torchvision's initialisation of the replaced layers
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
    return net


def backbone_state(net: nn.Module) -> dict[str, torch.Tensor]:
    """The state dict without the classifier (`fc.*`): what inflation reads; the video model has its own head."""
    return {k: v.detach().cpu().clone() for k, v in net.state_dict().items() if not k.startswith("fc.")}
