"""X3D-S and X3D-M (Feichtenhofer, "X3D: Expanding Architectures for Efficient Video Recognition", CVPR 2020), with
multigrid BN: every BatchNorm is :class:`MultigridBatchNorm3d`, and the head pools globally, so that the network
runs at every shape a multigrid Plan produces.

The architecture is the paper's (§3) as PySlowFast (`slowfast/models/video_model_builder.py`, class X3D;
`resnet_helper.py`, X3DTransform; `head_helper.py`, X3DHead) and PyTorchVideo (`pytorchvideo/models/x3d.py`) build
it. From a base of 12 channels, widths double per stage (12, 24, 48, 96), are multiplied by the width factor
γw = 2.0 and rounded to multiples of 8 (24, 48, 96, 192 channels out of res2..res5); base depths 1, 2, 5, 3 are
multiplied by the depth factor γd = 2.2 and rounded up (3, 5, 11, 7 blocks).

- Stem: a 1×3×3 convolution at spatial stride 2, then a depthwise 5×1×1 temporal convolution, BN, ReLU.
- Bottleneck: 1×1×1 to 2.25× the stage width, BN, ReLU; depthwise 3×3×3 (spatial stride 2 in a stage's first
  block), BN, squeeze-excitation (blocks 0, 2, 4, ... of a stage, reduction 1/16), swish; 1×1×1 back, BN; the sum
  with the shortcut, ReLU. No temporal stride anywhere: every feature keeps all frames (paper §3).
- Head: conv5 1×1×1 to 432 channels (2.25 × 192), BN, ReLU; global average pool; 1×1×1 to 2048, ReLU; dropout;
  the linear classifier.

Differences from the references, and why:
- The head pools globally before its 2048-d layer. PySlowFast and PyTorchVideo pool with a fixed window of the
  training clip's feature size (e.g. 16×7×7 for X3D-M at 224 px), which fails on multigrid's smaller shapes. At the
  training clip size both are the same average; at larger test crops the references apply the 2048-d layer and its
  ReLU to each window and average afterwards.
- A stage's first shortcut has BN only where it changes the width (not in res2, whose 24 channels stay 24), as in
  PyTorchVideo's `create_x3d_res_block`, so that its checkpoints load; PySlowFast's ResBlock normalises that
  shortcut too (48 parameters more).

`width` (smoke scale) multiplies γw and the 2048-d layer; depths stay the published ones.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from harness.models.bn import MultigridBatchNorm3d
from harness.models.registry import register_model
from harness.models.resnet3d import StemConv3d, init_weights

BASE_CHANNELS = 12  # the first stage's width before expansion (PySlowFast X3D.DIM_C1)
STAGE_DEPTHS = (1, 2, 5, 3)  # blocks of res2..res5 before the depth factor
WIDTH_FACTOR = 2.0  # γw of X3D-S and X3D-M
DEPTH_FACTOR = 2.2  # γd of X3D-S and X3D-M
BOTTLENECK_FACTOR = 2.25  # γb: inner width of a bottleneck over its output width
HEAD_CHANNELS = 2048  # the layer before the classifier (PySlowFast X3D.DIM_C5)
SE_RATIO = 1 / 16
STEM_TEMPORAL_KERNEL = 5


def round_width(channels: float, divisor: int = 8) -> int:
    """`channels` to the nearest multiple of `divisor` (at least `divisor`), one more multiple where rounding lost
    over 10%: the rule of PySlowFast's and PyTorchVideo's `round_width`, which fixes X3D's widths."""
    rounded = max(divisor, int(channels + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * channels else rounded


def stage_depths(depth_factor: float = DEPTH_FACTOR) -> list[int]:
    """Blocks per stage: the base depths times the depth factor, rounded up (3, 5, 11, 7 for γd = 2.2)."""
    return [int(math.ceil(depth_factor * d)) for d in STAGE_DEPTHS]


def stage_widths(width_factor: float = WIDTH_FACTOR) -> list[int]:
    """Output channels of res2..res5: the base widths 12, 24, 48, 96 times the width factor, rounded."""
    base = [BASE_CHANNELS]
    for _ in STAGE_DEPTHS[1:]:
        base.append(round_width(2 * base[-1]))
    return [round_width(w * width_factor) for w in base]


class SqueezeExcitation(nn.Module):
    """Channel gates from the clip's mean feature: 1×1×1 down to `reduced` channels, ReLU, 1×1×1 up, sigmoid."""

    def __init__(self, channels: int, reduced: int) -> None:
        super().__init__()
        self.pool = nn.AdaptiveAvgPool3d(1)
        self.reduce = nn.Conv3d(channels, reduced, 1)
        self.relu = nn.ReLU(inplace=True)
        self.expand = nn.Conv3d(reduced, channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(self.expand(self.relu(self.reduce(self.pool(x)))))


class X3DStem(nn.Module):
    """1×3×3 convolution at spatial stride 2, depthwise 5×1×1 temporal convolution, BN, ReLU."""

    def __init__(self, dim_out: int) -> None:
        super().__init__()
        self.conv_xy = StemConv3d(3, dim_out, (1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1), bias=False)
        k = STEM_TEMPORAL_KERNEL
        self.conv_t = nn.Conv3d(dim_out, dim_out, (k, 1, 1), padding=(k // 2, 0, 0), groups=dim_out, bias=False)
        self.bn = MultigridBatchNorm3d(dim_out)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.relu(self.bn(self.conv_t(self.conv_xy(x))))


class X3DBlock(nn.Module):
    """1×1×1 → depthwise 3×3×3 (spatial stride) with optional squeeze-excitation and swish → 1×1×1, plus shortcut."""

    def __init__(self, dim_in: int, dim_inner: int, dim_out: int, stride: int, squeeze_excite: bool) -> None:
        super().__init__()
        self.conv1 = nn.Conv3d(dim_in, dim_inner, 1, bias=False)
        self.bn1 = MultigridBatchNorm3d(dim_inner)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv3d(dim_inner, dim_inner, 3, stride=(1, stride, stride), padding=1, groups=dim_inner,
                               bias=False)
        self.bn2 = MultigridBatchNorm3d(dim_inner)
        self.se = SqueezeExcitation(dim_inner, round_width(dim_inner * SE_RATIO)) if squeeze_excite else None
        self.swish = nn.SiLU(inplace=True)
        self.conv3 = nn.Conv3d(dim_inner, dim_out, 1, bias=False)
        self.bn3 = MultigridBatchNorm3d(dim_out)
        self.bn3.zero_init = True  # PySlowFast's X3D configs start each residual branch at zero (ZERO_INIT_FINAL_BN)
        self.downsample = None
        if dim_in != dim_out or stride != 1:
            projection: list[nn.Module] = [nn.Conv3d(dim_in, dim_out, 1, stride=(1, stride, stride), bias=False)]
            if dim_in != dim_out:
                projection.append(MultigridBatchNorm3d(dim_out))
            self.downsample = nn.Sequential(*projection)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shortcut = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.se is not None:
            out = self.se(out)
        out = self.bn3(self.conv3(self.swish(out)))
        return self.relu(out + shortcut)


def x3d_stage(dim_in: int, dim_inner: int, dim_out: int, depth: int) -> nn.Sequential:
    """`depth` blocks, the first at spatial stride 2; squeeze-excitation in blocks 0, 2, 4, ..."""
    return nn.Sequential(*[X3DBlock(dim_in if i == 0 else dim_out, dim_inner, dim_out, 2 if i == 0 else 1,
                                    squeeze_excite=i % 2 == 0) for i in range(depth)])


class X3DHead(nn.Module):
    """conv5 1×1×1, BN, ReLU; global average pool (any clip shape); 1×1×1 to the head width, ReLU; dropout; linear."""

    def __init__(self, dim_in: int, dim_conv5: int, dim_head: int, num_classes: int, dropout: float) -> None:
        super().__init__()
        self.conv5 = nn.Conv3d(dim_in, dim_conv5, 1, bias=False)
        self.bn5 = MultigridBatchNorm3d(dim_conv5)
        self.relu = nn.ReLU(inplace=True)
        self.pool = nn.AdaptiveAvgPool3d(1)
        self.lin5 = nn.Conv3d(dim_conv5, dim_head, 1, bias=False)  # a convolution, as the references hold it
        self.dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        self.fc = nn.Linear(dim_head, num_classes)

    def forward(self, features: list[torch.Tensor]) -> torch.Tensor:
        x = self.pool(self.relu(self.bn5(self.conv5(features[0]))))
        x = self.relu(self.lin5(x)).flatten(1)
        return self.fc(self.dropout(x))


class X3D(nn.Module):
    """X3D backbone and head; input N×3×T×H×W, any T ≥ 1, any H, W (output stride 32 in space, 1 in time)."""

    def __init__(self, num_classes: int = 400, dropout: float = 0.5, width: float = 1.0) -> None:
        super().__init__()
        widths = stage_widths(WIDTH_FACTOR * width)
        stem = round_width(BASE_CHANNELS * WIDTH_FACTOR * width)
        self.stem = X3DStem(stem)
        stages, dim_in = [], stem
        for dim_out, depth in zip(widths, stage_depths(), strict=True):
            dim_inner = int(BOTTLENECK_FACTOR * dim_out)
            stages.append(x3d_stage(dim_in, dim_inner, dim_out, depth))
            dim_in = dim_out
        self.res2, self.res3, self.res4, self.res5 = stages
        self.head = X3DHead(dim_in, dim_inner, round_width(HEAD_CHANNELS * width), num_classes, dropout)
        init_weights(self)
        for m in self.modules():
            if isinstance(m, nn.Conv3d) and m.bias is not None:
                nn.init.zeros_(m.bias)  # the squeeze-excitation convolutions, as PySlowFast's c2_msra_fill

    def features(self, clip: torch.Tensor) -> list[torch.Tensor]:
        return [self.res5(self.res4(self.res3(self.res2(self.stem(clip)))))]

    def forward(self, clip: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(clip))


@register_model("x3d_s", default_frames=13,
                description="X3D-S: 13 frames at stride 6, 160 px (tested at 182)")
def x3d_s(num_classes: int = 400, dropout: float = 0.5, width: float = 1.0) -> X3D:
    return X3D(num_classes, dropout, width)


@register_model("x3d_m", default_frames=16,
                description="X3D-M: 16 frames at stride 5, 224 px (tested at 256)")
def x3d_m(num_classes: int = 400, dropout: float = 0.5, width: float = 1.0) -> X3D:
    return X3D(num_classes, dropout, width)
