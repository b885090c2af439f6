"""torchvision's video classifiers, registered and wrapped so they accept every planned shape.

Wrapping: BatchNorm becomes MultigridBatchNorm3d (sub-batch BN / sync), a dropout is put
before the classifier, and S3D's fixed 2×7×7 average pool becomes a global one (its fixed
pool fails on the small spatial sizes of multigrid's coarse shapes). MViTv2-S is torchvision's
architecture and parameter names rebuilt in harness.models.mvit, whose token grid and relative
position tables follow the input's shape (torchvision's fix it); MViTv1's absolute embeddings are not
offered.
"""

from __future__ import annotations

import torchvision.models.video as tvv
from torch import nn

from harness.models.bn import convert_batchnorm
from harness.models.mvit import mvit_v2_s as build_mvit_v2_s
from harness.models.registry import register_model


def _with_dropout(classifier: nn.Module, dropout: float) -> nn.Module:
    return nn.Sequential(nn.Dropout(dropout), classifier) if dropout > 0 else classifier


def _resnet_family(builder, num_classes: int, dropout: float) -> nn.Module:
    model = builder(weights=None, num_classes=num_classes)
    model.fc = _with_dropout(model.fc, dropout)
    return convert_batchnorm(model)


@register_model("r3d_18", description="torchvision R3D-18")
def r3d_18(num_classes: int = 400, dropout: float = 0.5, width: float = 1.0) -> nn.Module:
    return _resnet_family(tvv.r3d_18, num_classes, dropout)


@register_model("mc3_18", description="torchvision MC3-18 (mixed 3D/2D convolutions)")
def mc3_18(num_classes: int = 400, dropout: float = 0.5, width: float = 1.0) -> nn.Module:
    return _resnet_family(tvv.mc3_18, num_classes, dropout)


@register_model("r2plus1d_18", description="torchvision R(2+1)D-18")
def r2plus1d_18(num_classes: int = 400, dropout: float = 0.5, width: float = 1.0) -> nn.Module:
    return _resnet_family(tvv.r2plus1d_18, num_classes, dropout)


@register_model("s3d", min_frames=8, description="torchvision S3D, with a global average pool")
def s3d(num_classes: int = 400, dropout: float = 0.5, width: float = 1.0) -> nn.Module:
    model = tvv.s3d(weights=None, num_classes=num_classes, dropout=dropout)
    model.avgpool = nn.AdaptiveAvgPool3d(1)
    return convert_batchnorm(model)


@register_model("swin3d_t", description="torchvision Video Swin-T (LayerNorm; BN layout does not apply)")
def swin3d_t(num_classes: int = 400, dropout: float = 0.5, width: float = 1.0) -> nn.Module:
    model = tvv.swin3d_t(weights=None, num_classes=num_classes, dropout=dropout)
    return model


@register_model("mvit_v2_s", description="MViTv2-S (LayerNorm; BN layout does not apply), torchvision's weights load")
def mvit_v2_s(num_classes: int = 400, dropout: float = 0.5, width: float = 1.0) -> nn.Module:
    return build_mvit_v2_s(num_classes=num_classes, dropout=dropout)
