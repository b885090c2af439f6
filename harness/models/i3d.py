"""I3D R50 and I3D-NL R50 (paper Tables 3-4; PySlowFast slowfast/models/video_model_builder.py), single pathway.

conv1 temporal kernel 5; bottleneck temporal kernels 3,3,3 | 3,1,3,1 | 3,1,3,1,3,1 | 1,3,1;
a temporal max-pool (kernel and stride 2) between res2 and res3. I3D-NL adds non-local
blocks after blocks 1 and 3 of res3 and 1, 3, 5 of res4 (0-based).
"""

from __future__ import annotations

import torch
from torch import nn

from harness.models.registry import register_model
from harness.models.resnet3d import R50_WIDTHS, Head, Stem, init_weights, res_stage, scaled

I3D_KERNELS = ((3, 3, 3), (3, 1, 3, 1), (3, 1, 3, 1, 3, 1), (1, 3, 1))
NONLOCAL_AFTER = ((), (1, 3), (1, 3, 5), ())


class I3D(nn.Module):
    """Inflated ResNet-50; input N×3×T×H×W, any T ≥ 1 (the temporal pool uses ceil mode), any H, W."""

    def __init__(self, num_classes: int = 400, dropout: float = 0.5, width: float = 1.0,
                 nonlocal_blocks: bool = False) -> None:
        super().__init__()
        stem = scaled(64, width)
        inner = [scaled(w, width) for w in R50_WIDTHS]
        self.stem = Stem(3, stem, 5)
        # ceil_mode keeps odd and single-frame clips valid (multigrid's coarse shapes have few frames).
        self.pool_t = nn.MaxPool3d((2, 1, 1), stride=(2, 1, 1), ceil_mode=True)
        stages, dim_in = [], stem
        for i, (kernels, w) in enumerate(zip(I3D_KERNELS, inner)):
            nl = NONLOCAL_AFTER[i] if nonlocal_blocks else ()
            stages.append(res_stage(dim_in, w, 4 * w, kernels, 1 if i == 0 else 2, nl))
            dim_in = 4 * w
        self.res2, self.res3, self.res4, self.res5 = stages
        self.head = Head(dim_in, num_classes, dropout)
        init_weights(self)

    def features(self, clip: torch.Tensor) -> list[torch.Tensor]:
        x = self.res2(self.stem(clip))
        x = self.res5(self.res4(self.res3(self.pool_t(x))))
        return [x]

    def forward(self, clip: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(clip))


@register_model("i3d_r50", default_frames=8, paper=True, description="I3D R50 (Table 3, Table 4)")
def i3d_r50(num_classes: int = 400, dropout: float = 0.5, width: float = 1.0) -> I3D:
    return I3D(num_classes, dropout, width)


@register_model("i3d_nl_r50", default_frames=8, paper=True, description="I3D R50 with 5 non-local blocks (Table 3)")
def i3d_nl_r50(num_classes: int = 400, dropout: float = 0.5, width: float = 1.0) -> I3D:
    return I3D(num_classes, dropout, width, nonlocal_blocks=True)
