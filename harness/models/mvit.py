"""MViTv2-S for video (Li et al., CVPR 2022, "MViTv2: Improved Multiscale Vision Transformers for Classification
and Detection"), built to train at every multigrid shape.

The architecture and the parameter names are torchvision's `mvit_v2_s` (torchvision/models/video/mvit.py), so its
state dicts load as they are: a 3×7×7 patch embedding at stride 2×4×4, 16 blocks of pooling attention (MViT's Q, K and V
each pooled by a 3×3×3 depthwise convolution and a LayerNorm) with MViTv2's two changes to it, the residual pooling
connection (the pooled query added to the attention's output) and decomposed relative position embeddings (one table
each along t, h and w), and a class token that the head reads.

What differs, so that any T×H×W runs (multigrid trains at many; the multigrid paper's footnote 6):
- the token grid is the patch embedding's output at each call, not the size the model was built for;
- each relative position table is resampled to the grid of the shape at hand, linearly along its length, as PySlowFast
  does for inputs of other sizes (slowfast/models/attention.py, `get_rel_pos`). At the size it is built for (16×224²)
  no table is resampled and the model computes what torchvision's does.
MViTv2-S has no absolute position embedding, and its class token carries no position: no parameter depends on the
shape. The pooling convolutions pad by one, so every stage keeps at least one token along each axis at any size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn
from torchvision.ops import stochastic_depth

Grid = tuple[int, int, int]  # tokens along t, h, w
Tensor = torch.Tensor


@dataclass(frozen=True)
class BlockSetting:
    """One multiscale block: its heads and widths, and how it pools the query (the stage's downsampling) and the
    keys and values (attention's cost)."""

    heads: int
    dim_in: int
    dim_out: int
    stride_q: Grid
    stride_kv: Grid


def mvit_v2_s_blocks() -> list[BlockSetting]:
    """MViTv2-S's 16 blocks (PySlowFast configs/Kinetics/MVITv2_S_16x4.yaml, torchvision's mvit_v2_s): widths
    96→768 and heads 1→8, doubled at blocks 1, 3 and 14, where the query is pooled 2× in space; keys and values
    pooled to 1/8 of the first stage's grid in space (the config's POOL_KV_STRIDE_ADAPTIVE), so their stride halves
    wherever the query's grid does."""
    stage_starts = (1, 3, 14)
    blocks, dim, heads, kv_stride = [], 96, 1, 8
    for i in range(16):
        dim_in, stride_q = dim, (1, 1, 1)
        if i in stage_starts:
            dim, heads, kv_stride, stride_q = dim * 2, heads * 2, max(kv_stride // 2, 1), (1, 2, 2)
        blocks.append(BlockSetting(heads, dim_in, dim, stride_q, (1, kv_stride, kv_stride)))
    return blocks


def _resampled(table: Tensor, length: int) -> Tensor:
    """A relative position table (offsets × channels) linearly interpolated to `length` offsets."""
    if table.shape[0] == length:
        return table
    return F.interpolate(table.t()[None], size=length, mode="linear")[0].t()


def _offsets(q: int, k: int, device: torch.device) -> Tensor:
    """The table row of each (query, key) pair along one axis of `q` query and `k` key tokens: their distance on the
    finer of the two grids, shifted to start at 0 (PySlowFast slowfast/models/attention.py, cal_rel_pos_spatial).
    Computed in integers: the reference's float ratios truncate to the same rows wherever they are exact."""
    i = torch.arange(q, device=device)[:, None]
    j = torch.arange(k, device=device)[None, :]
    if q >= k:  # each key step spans q/k query steps
        return i + torch.div((k - 1 - j) * q, k, rounding_mode="floor")
    return torch.div(i * k, q, rounding_mode="floor") + (k - 1 - j)


def _relative_position_terms(q: Tensor, q_grid: Grid, k_grid: Grid, tables: tuple[Tensor, Tensor, Tensor]) -> Tensor:
    """The decomposed relative position term q·(R_t + R_h + R_w) of every grid query and key (MViTv2's
    decomposed relative position embedding), as (batch, heads, query tokens, key tokens); the class token has none."""
    # A coarser grid samples the same clip (multigrid resamples it, it does not crop it), so the tables are stretched
    # to the grid rather than cut: an offset keeps meaning the same distance in the scene.
    rows = [_resampled(table, 2 * max(nq, nk) - 1)[_offsets(nq, nk, table.device)]
            for table, nq, nk in zip(tables, q_grid, k_grid)]
    b, heads, _, c = q.shape
    grid_q = q[:, :, 1:].reshape(b, heads, *q_grid, c)
    along_t = torch.einsum("bnthwc,tkc->bnthwk", grid_q, rows[0])
    along_h = torch.einsum("bnthwc,hkc->bnthwk", grid_q, rows[1])
    along_w = torch.einsum("bnthwc,wkc->bnthwk", grid_q, rows[2])
    terms = along_t[..., :, None, None] + along_h[..., None, :, None] + along_w[..., None, None, :]
    return terms.reshape(b, heads, math.prod(q_grid), math.prod(k_grid))


class PoolTokens(nn.Module):
    """Pooling of one of Q, K, V: a depthwise 3×3×3 convolution over each head's token grid, then LayerNorm
    (PySlowFast's MVIT.MODE 'conv'); the class token is not pooled."""

    def __init__(self, channels: int, stride: Grid, norm: type[nn.Module]) -> None:
        super().__init__()
        self.pool = nn.Conv3d(channels, channels, 3, stride=stride, padding=1, groups=channels, bias=False)
        self.norm_act = nn.Sequential(norm(channels))  # torchvision's name, so its state dicts load as they are

    def forward(self, x: Tensor, grid: Grid) -> tuple[Tensor, Grid]:
        b, heads, _, c = x.shape
        tokens = x[:, :, 1:].transpose(2, 3).reshape(b * heads, c, *grid)
        tokens = self.pool(tokens)
        pooled: Grid = tuple(tokens.shape[2:])
        tokens = tokens.reshape(b, heads, c, -1).transpose(2, 3)
        return self.norm_act(torch.cat((x[:, :, :1], tokens), dim=2)), pooled


class PoolingAttention(nn.Module):
    """Multi-head pooling attention with relative positions and the residual pooling connection (MViTv2),
    its width the block's output width (the config's DIM_MUL_IN_ATT)."""

    def __init__(self, setting: BlockSetting, table_lengths: tuple[int, int], norm: type[nn.Module]) -> None:
        super().__init__()
        dim, self.heads = setting.dim_out, setting.heads
        head_dim = dim // setting.heads
        self.scale = head_dim**-0.5
        self.qkv = nn.Linear(setting.dim_in, 3 * dim)
        self.project = nn.Sequential(nn.Linear(dim, dim))  # torchvision's layout (project.0)
        self.pool_q = PoolTokens(head_dim, setting.stride_q, norm)
        self.pool_k = PoolTokens(head_dim, setting.stride_kv, norm)
        self.pool_v = PoolTokens(head_dim, setting.stride_kv, norm)
        spatial, temporal = table_lengths
        self.rel_pos_h = nn.Parameter(torch.zeros(spatial, head_dim))
        self.rel_pos_w = nn.Parameter(torch.zeros(spatial, head_dim))
        self.rel_pos_t = nn.Parameter(torch.zeros(temporal, head_dim))

    def forward(self, x: Tensor, grid: Grid) -> tuple[Tensor, Grid]:
        b, n, _ = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        k, k_grid = self.pool_k(k, grid)
        v, _ = self.pool_v(v, grid)
        q, q_grid = self.pool_q(q, grid)
        logits = (self.scale * q) @ k.transpose(2, 3)
        terms = _relative_position_terms(q, q_grid, k_grid, (self.rel_pos_t, self.rel_pos_h, self.rel_pos_w))
        logits = logits + F.pad(terms, (1, 0, 1, 0))  # nothing for the class token's row and column
        out = logits.softmax(dim=-1) @ v
        out = torch.cat((out[:, :, :1], out[:, :, 1:] + q[:, :, 1:]), dim=2)  # residual pooling, not on the class token
        return self.project(out.transpose(1, 2).reshape(b, out.shape[2], -1)), q_grid


def _max_pool_skip(x: Tensor, grid: Grid, stride: Grid) -> Tensor:
    """The skip connection pooled as the query is (max pooling, kernel stride + 1), class token kept."""
    b, _, c = x.shape
    kernel = tuple(s + 1 if s > 1 else 1 for s in stride)
    tokens = x[:, 1:].transpose(1, 2).reshape(b, c, *grid)
    tokens = F.max_pool3d(tokens, kernel, stride, tuple(k // 2 for k in kernel))
    return torch.cat((x[:, :1], tokens.flatten(2).transpose(1, 2)), dim=1)


class MultiscaleBlock(nn.Module):
    """Pre-norm attention and MLP; where the width grows, the skip is projected from the normalised input."""

    def __init__(self, setting: BlockSetting, table_lengths: tuple[int, int], drop_path: float,
                 norm: type[nn.Module]) -> None:
        super().__init__()
        dim = setting.dim_out
        self.stride_q, self.drop_path = setting.stride_q, drop_path
        self.norm1 = norm(setting.dim_in)
        self.attn = PoolingAttention(setting, table_lengths, norm)
        self.norm2 = norm(dim)
        # torchvision's MLP layout (mlp.0, mlp.3): Linear, GELU, Dropout, Linear, Dropout.
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Dropout(0.0), nn.Linear(4 * dim, dim),
                                 nn.Dropout(0.0))
        self.project = nn.Linear(setting.dim_in, dim) if setting.dim_in != dim else None

    def _dropped(self, x: Tensor) -> Tensor:
        return stochastic_depth(x, self.drop_path, "row", self.training)

    def forward(self, x: Tensor, grid: Grid) -> tuple[Tensor, Grid]:
        normed = self.norm1(x)
        attended, pooled = self.attn(normed, grid)
        skip = x if self.project is None else self.project(normed)
        if max(self.stride_q) > 1:
            skip = _max_pool_skip(skip, grid, self.stride_q)
        x = skip + self._dropped(attended)
        return x + self._dropped(self.mlp(self.norm2(x))), pooled


class ClassToken(nn.Module):
    """The learned class token put before the grid tokens (torchvision's `pos_encoding`, which for MViTv2 holds only
    this: positions are relative)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.class_token = nn.Parameter(torch.zeros(dim))

    def forward(self, tokens: Tensor) -> Tensor:
        return torch.cat((self.class_token.expand(tokens.shape[0], 1, -1), tokens), dim=1)


class MViTv2(nn.Module):
    """MViTv2 for clips of any T×H×W; built for `frames`×`crop`² (the relative position tables' lengths)."""

    def __init__(self, blocks: list[BlockSetting], num_classes: int = 400, dropout: float = 0.5,
                 drop_path: float = 0.2, frames: int = 16, crop: int = 224) -> None:
        super().__init__()
        norm = partial(nn.LayerNorm, eps=1e-6)
        self.conv_proj = nn.Conv3d(3, blocks[0].dim_in, (3, 7, 7), stride=(2, 4, 4), padding=(1, 3, 3))
        self.pos_encoding = ClassToken(blocks[0].dim_in)
        grid = (frames // 2, crop // 4, crop // 4)
        self.blocks = nn.ModuleList()
        for i, setting in enumerate(blocks):
            # Table lengths as torchvision sizes them at the built shape, so that its weights fit.
            side = max(grid[1:])
            spatial = 2 * max(side // setting.stride_q[1], side // setting.stride_kv[1]) - 1
            path = drop_path * i / (len(blocks) - 1)  # deeper blocks dropped more often (linear rule)
            self.blocks.append(MultiscaleBlock(setting, (spatial, 2 * grid[0] - 1), path, norm))
            grid = tuple(g // s for g, s in zip(grid, setting.stride_q))
        self.norm = norm(blocks[-1].dim_out)
        self.head = nn.Sequential(nn.Dropout(dropout), nn.Linear(blocks[-1].dim_out, num_classes))
        self._initialise()

    def _initialise(self) -> None:
        """truncated-normal(0.02) linear layers, tables and class token; unit LayerNorms (as torchvision and
        PySlowFast initialise MViT)."""
        for name, p in self.named_parameters():
            if name.endswith(("rel_pos_h", "rel_pos_w", "rel_pos_t", "class_token")):
                nn.init.trunc_normal_(p, std=0.02)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.LayerNorm):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, clip: Tensor) -> Tensor:
        x = self.conv_proj(clip)
        grid: Grid = tuple(x.shape[2:])
        x = self.pos_encoding(x.flatten(2).transpose(1, 2))
        for block in self.blocks:
            x, grid = block(x, grid)
        return self.head(self.norm(x)[:, 0])


def mvit_v2_s(num_classes: int = 400, dropout: float = 0.5, drop_path: float = 0.2) -> MViTv2:
    """MViTv2-S 16×4 (34.5M parameters), drop path 0.2 as published (PySlowFast's DROPPATH_RATE)."""
    return MViTv2(mvit_v2_s_blocks(), num_classes, dropout, drop_path)
