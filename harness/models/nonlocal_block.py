"""Non-local block (Wang et al. 2018) as I3D-NL R50 uses it (PySlowFast slowfast/models/nonlocal_helper.py).

Inner width half the block's width; θ, φ, g and the output are 1×1×1 convs. θ reads the
block input at full resolution; the input is then max-pooled 1×2×2 and φ and g read the
pooled input, so each costs a quarter of θ (the order of the reference implementation,
PySlowFast's `Nonlocal`). The affinity θᵀφ is scaled by 1/√inner and softmax-normalised
over the pooled positions (the reference configs' "softmax" instantiation). The output conv
is followed by BN whose scale starts at zero, so the block starts as identity. Feature maps under 2 pixels
wide or high (small crops at multigrid's coarse shapes) are not pooled.
"""

from __future__ import annotations

import torch
from torch import nn

from harness.models.bn import MultigridBatchNorm3d


class NonLocal(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        inner = max(1, dim // 2)
        self.inner = inner
        self.theta = nn.Conv3d(dim, inner, 1)
        self.phi = nn.Conv3d(dim, inner, 1)
        self.g = nn.Conv3d(dim, inner, 1)
        self.pool = nn.MaxPool3d((1, 2, 2), stride=(1, 2, 2))
        self.out = nn.Conv3d(inner, dim, 1)
        self.bn = MultigridBatchNorm3d(dim)
        self.bn.zero_init = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[0]
        theta = self.theta(x).flatten(2)  # N × inner × THW
        # Pool first: φ and g then run on a quarter of the positions. A multigrid shape can shrink a feature map
        # below 2 pixels (small crops at a coarse long-cycle shape), where the 2×2 pool has no window; there every
        # position is kept, which is what pooling a 1-pixel side to itself would give.
        pooled = self.pool(x) if min(x.shape[-2:]) >= 2 else x
        phi = self.phi(pooled).flatten(2)  # N × inner × THW/4
        g = self.g(pooled).flatten(2)
        affinity = torch.einsum("nct,ncp->ntp", theta, phi) * self.inner**-0.5
        attention = affinity.softmax(dim=-1)
        y = torch.einsum("ntp,ncp->nct", attention, g).reshape(n, self.inner, *x.shape[2:])
        return x + self.bn(self.out(y))
