"""ResNet-3D building blocks shared by SlowFast and I3D (as in PySlowFast slowfast/models/resnet_helper.py).

Bottleneck blocks follow ResNet v1.5 as the reference does: temporal kernel on the first
1×1 conv, spatial stride on the 3×3 conv. Module names mirror torchvision's ResNet
(`conv1/bn1/.../downsample`) so ImageNet weights inflate by name.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn
from torch.nn import functional as F

from harness.models.bn import MultigridBatchNorm3d
from harness.models.nonlocal_block import NonLocal

R50_DEPTHS = (3, 4, 6, 3)
R50_WIDTHS = (64, 128, 256, 512)  # bottleneck inner widths of res2..res5 (outputs are 4×)


def scaled(channels: int, width: float) -> int:
    """Channels scaled by the width multiplier (smoke scale shrinks models), never below 1."""
    return max(1, int(round(channels * width)))


def padded_conv3d(x: torch.Tensor, conv: nn.Conv3d, channels: int) -> torch.Tensor:
    """`conv(x)` with x's and the weight's input channels padded with zeros to `channels`: the same sums, so the
    same result up to rounding, computed by kernels that need a channel count cuDNN has tensor-core kernels for.
    The gradient reaches the weight's real channels only (the padding is made anew each call)."""
    extra = channels - x.shape[1]
    fmt = torch.channels_last_3d if x.is_contiguous(memory_format=torch.channels_last_3d) else torch.contiguous_format
    x = F.pad(x, (0, 0, 0, 0, 0, 0, 0, extra)).contiguous(memory_format=fmt)
    weight = F.pad(conv.weight, (0, 0, 0, 0, 0, 0, 0, extra)).contiguous(memory_format=fmt)
    return F.conv3d(x, weight, conv.bias, conv.stride, conv.padding, conv.dilation, conv.groups)


class StemConv3d(nn.Conv3d):
    """The stem's convolution; on CUDA with `pad_channels` > its input channels (model.pad_stem_channels), the
    input channels are padded with zeros first (:func:`padded_conv3d`). Same parameters as nn.Conv3d."""

    pad_channels = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.is_cuda and self.pad_channels > x.shape[1] and self.groups == 1:
            return padded_conv3d(x, self, self.pad_channels)
        return super().forward(x)


def pad_stem_channels(model: nn.Module, channels: int) -> None:
    """Pad the input channels of every stem convolution of `model` to `channels` on CUDA (0: off)."""
    for m in model.modules():
        if isinstance(m, StemConv3d):
            m.pad_channels = channels


class Stem(nn.Module):
    """conv kt×7×7 stride 1×2×2, BN, ReLU, max-pool 1×3×3 stride 1×2×2."""

    def __init__(self, dim_in: int, dim_out: int, temporal_kernel: int) -> None:
        super().__init__()
        self.conv1 = StemConv3d(dim_in, dim_out, (temporal_kernel, 7, 7), stride=(1, 2, 2),
                               padding=(temporal_kernel // 2, 3, 3), bias=False)
        self.bn1 = MultigridBatchNorm3d(dim_out)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool3d((1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.maxpool(self.relu(self.bn1(self.conv1(x))))


class Bottleneck(nn.Module):
    """1×1 (temporal kernel kt) → 1×3×3 (spatial stride) → 1×1, with a projection shortcut if needed."""

    def __init__(self, dim_in: int, dim_inner: int, dim_out: int, temporal_kernel: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv3d(dim_in, dim_inner, (temporal_kernel, 1, 1), padding=(temporal_kernel // 2, 0, 0),
                               bias=False)
        self.bn1 = MultigridBatchNorm3d(dim_inner)
        self.conv2 = nn.Conv3d(dim_inner, dim_inner, (1, 3, 3), stride=(1, stride, stride), padding=(0, 1, 1),
                               bias=False)
        self.bn2 = MultigridBatchNorm3d(dim_inner)
        self.conv3 = nn.Conv3d(dim_inner, dim_out, 1, bias=False)
        self.bn3 = MultigridBatchNorm3d(dim_out)
        self.bn3.zero_init = True  # a residual branch that starts at zero trains better (Goyal et al.)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if dim_in != dim_out or stride != 1:
            self.downsample = nn.Sequential(
                nn.Conv3d(dim_in, dim_out, 1, stride=(1, stride, stride), bias=False), MultigridBatchNorm3d(dim_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shortcut = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + shortcut)


def res_stage(dim_in: int, dim_inner: int, dim_out: int, temporal_kernels: Sequence[int], stride: int,
              nonlocal_after: Sequence[int] = ()) -> nn.Sequential:
    """A residual stage; block i uses temporal kernel temporal_kernels[i]; non-local blocks follow the listed blocks."""
    blocks: list[nn.Module] = []
    for i, kt in enumerate(temporal_kernels):
        blocks.append(Bottleneck(dim_in if i == 0 else dim_out, dim_inner, dim_out, kt, stride if i == 0 else 1))
        if i in nonlocal_after:
            blocks.append(NonLocal(dim_out))
    return nn.Sequential(*blocks)


class Head(nn.Module):
    """Global average pool per pathway (any clip shape), concat, dropout, linear classifier."""

    def __init__(self, dim_in: int, num_classes: int, dropout: float) -> None:
        super().__init__()
        self.pool = nn.AdaptiveAvgPool3d(1)
        self.dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        self.fc = nn.Linear(dim_in, num_classes)

    def forward(self, features: Sequence[torch.Tensor]) -> torch.Tensor:
        pooled = torch.cat([self.pool(f).flatten(1) for f in features], dim=1)
        return self.fc(self.dropout(pooled))


def init_weights(model: nn.Module, fc_std: float = 0.01) -> None:
    """He init for convs, BN weight 1 (0 for the last BN of each residual branch), small linear head."""
    for m in model.modules():
        if isinstance(m, nn.Conv3d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        elif isinstance(m, nn.BatchNorm3d):
            nn.init.constant_(m.weight, 0.0 if getattr(m, "zero_init", False) else 1.0)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=fc_std)
            nn.init.zeros_(m.bias)
