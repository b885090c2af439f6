"""A user's own model for the documented path (docs/your-model.md), as model.target=<this module>:tiny_c3d.

Multigrid-compatible as the paper's §3.1 asks: global average pooling before the classifier and no parameter tied to
the input's frames or size, so one set of weights takes every shape of the schedule.
"""

from __future__ import annotations

from torch import nn


def tiny_c3d(num_classes: int, dropout: float = 0.5, width: float = 1.0) -> nn.Module:
    """Two 3D convolutions, global average pooling, a linear classifier; input (B, 3, T, H, W)."""
    channels = max(4, int(32 * width))
    return nn.Sequential(
        nn.Conv3d(3, channels, kernel_size=3, padding=1), nn.BatchNorm3d(channels), nn.ReLU(),
        nn.Conv3d(channels, 2 * channels, kernel_size=3, stride=2, padding=1), nn.BatchNorm3d(2 * channels),
        nn.ReLU(), nn.AdaptiveAvgPool3d(1), nn.Flatten(), nn.Dropout(dropout), nn.Linear(2 * channels, num_classes))
