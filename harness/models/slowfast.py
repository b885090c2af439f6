"""SlowFast R50 (Feichtenhofer et al. 2019) as the paper trains it (PySlowFast slowfast/models/video_model_builder.py).

Slow pathway: T/α frames picked by linspace(0, T−1, T/α) from the clip; fast pathway: all T
frames at β = 1/8 of the width. Lateral connections after the stem and res2–res4: a (k×1×1)
conv with temporal stride α from fast to slow, 2× the fast width, concatenated to the slow
features. Temporal kernels: slow (1,1,1,3,3), fast (5,3,3,3,3) for conv1, res2..res5.
"""

from __future__ import annotations

import torch
from torch import nn

from harness.models.bn import MultigridBatchNorm3d
from harness.models.registry import register_model
from harness.models.resnet3d import R50_DEPTHS, R50_WIDTHS, Head, Stem, init_weights, res_stage, scaled

SLOW_KERNELS = (1, 1, 1, 3, 3)
FAST_KERNELS = (5, 3, 3, 3, 3)
FAST_RATIO = 8  # β⁻¹: fast pathway channels = slow / 8
FUSION_RATIO = 2  # lateral conv outputs 2× the fast channels


class FastToSlow(nn.Module):
    """Lateral connection: time-strided conv from the fast pathway, concatenated to the slow one."""

    def __init__(self, dim_fast: int, alpha: int, kernel: int) -> None:
        super().__init__()
        self.conv = nn.Conv3d(dim_fast, dim_fast * FUSION_RATIO, (kernel, 1, 1), stride=(alpha, 1, 1),
                              padding=(kernel // 2, 0, 0), bias=False)
        self.bn = MultigridBatchNorm3d(dim_fast * FUSION_RATIO)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, slow: torch.Tensor, fast: torch.Tensor) -> torch.Tensor:
        lateral = self.relu(self.bn(self.conv(fast)))
        if lateral.shape[2] != slow.shape[2]:
            # For T not a multiple of α the strided conv and linspace pick differ by a frame: match lengths.
            lateral = nn.functional.interpolate(lateral, size=slow.shape[2:], mode="nearest")
        return torch.cat([slow, lateral], dim=1)


class SlowFast(nn.Module):
    """Two-pathway ResNet-50; input N×3×T×H×W (the fast clip), any T ≥ α, any H, W."""

    def __init__(self, alpha: int, num_classes: int = 400, dropout: float = 0.5, width: float = 1.0,
                 fusion_kernel: int = 7) -> None:
        super().__init__()
        self.alpha = alpha
        stem = scaled(64, width)
        fast_stem = max(1, stem // FAST_RATIO)
        inner = [scaled(w, width) for w in R50_WIDTHS]
        fast_inner = [max(1, w // FAST_RATIO) for w in inner]
        self.slow_stem = Stem(3, stem, SLOW_KERNELS[0])
        self.fast_stem = Stem(3, fast_stem, FAST_KERNELS[0])
        self.fuse_stem = FastToSlow(fast_stem, alpha, fusion_kernel)
        slow_in, fast_in = stem + fast_stem * FUSION_RATIO, fast_stem
        slow_stages, fast_stages, fusions = [], [], []
        for i, (depth, w, fw) in enumerate(zip(R50_DEPTHS, inner, fast_inner)):
            stride = 1 if i == 0 else 2
            slow_stages.append(res_stage(slow_in, w, 4 * w, [SLOW_KERNELS[i + 1]] * depth, stride))
            fast_stages.append(res_stage(fast_in, fw, 4 * fw, [FAST_KERNELS[i + 1]] * depth, stride))
            if i < 3:
                fusions.append(FastToSlow(4 * fw, alpha, fusion_kernel))
                slow_in = 4 * w + 4 * fw * FUSION_RATIO
            fast_in = 4 * fw
        self.slow_stages = nn.ModuleList(slow_stages)
        self.fast_stages = nn.ModuleList(fast_stages)
        self.fusions = nn.ModuleList(fusions)
        self.head = Head(4 * inner[-1] + 4 * fast_inner[-1], num_classes, dropout)
        init_weights(self)

    def pathways(self, clip: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(slow, fast) inputs: the slow pathway takes T/α frames at linspace(0, T−1, T/α)."""
        t = clip.shape[2]
        if t < self.alpha:
            raise ValueError(f"SlowFast with α={self.alpha} needs at least {self.alpha} frames, got {t}")
        index = torch.linspace(0, t - 1, t // self.alpha, device=clip.device).long()
        return clip.index_select(2, index), clip

    def features(self, clip: torch.Tensor) -> list[torch.Tensor]:
        slow, fast = self.pathways(clip)
        slow, fast = self.slow_stem(slow), self.fast_stem(fast)
        slow = self.fuse_stem(slow, fast)
        for i, (slow_stage, fast_stage) in enumerate(zip(self.slow_stages, self.fast_stages)):
            slow, fast = slow_stage(slow), fast_stage(fast)
            if i < len(self.fusions):
                slow = self.fusions[i](slow, fast)
        return [slow, fast]

    def forward(self, clip: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(clip))


@register_model("slowfast_r50_8x8", min_frames=4, default_frames=32, paper=True,
                description="SlowFast R50 8×8: 32 fast / 8 slow frames, α=4 (paper default)")
def slowfast_r50_8x8(num_classes: int = 400, dropout: float = 0.5, width: float = 1.0) -> SlowFast:
    return SlowFast(alpha=4, num_classes=num_classes, dropout=dropout, width=width, fusion_kernel=7)


@register_model("slowfast_r50_4x16", min_frames=8, default_frames=32, paper=True,
                description="SlowFast R50 4×16: 32 fast / 4 slow frames, α=8")
def slowfast_r50_4x16(num_classes: int = 400, dropout: float = 0.5, width: float = 1.0) -> SlowFast:
    return SlowFast(alpha=8, num_classes=num_classes, dropout=dropout, width=width, fusion_kernel=5)


@register_model("slowfast_r50_16x8", min_frames=4, default_frames=64, paper=True,
                description="SlowFast R50 16×8: 64 fast / 16 slow frames, α=4 (Table 2b T=64, SSv2, Charades)")
def slowfast_r50_16x8(num_classes: int = 400, dropout: float = 0.5, width: float = 1.0) -> SlowFast:
    return SlowFast(alpha=4, num_classes=num_classes, dropout=dropout, width=width, fusion_kernel=7)


@register_model("slowfast_r50_16f", min_frames=2, default_frames=16, paper=True,
                description="SlowFast R50 with 16 fast / 8 slow frames, α=2 (Table 2b T=16)")
def slowfast_r50_16f(num_classes: int = 400, dropout: float = 0.5, width: float = 1.0) -> SlowFast:
    # Fusion kernel for α=2 is not in the spec; we keep the α=4 kernel (7).
    return SlowFast(alpha=2, num_classes=num_classes, dropout=dropout, width=width, fusion_kernel=7)
