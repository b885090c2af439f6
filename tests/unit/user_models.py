"""A user model factory for `model.target` tests (what a user's own package would provide)."""

from torch import nn


def tiny_c3d(num_classes: int, dropout: float, width: float) -> nn.Module:
    channels = max(2, int(8 * width))
    return nn.Sequential(
        nn.Conv3d(3, channels, 3, padding=1), nn.BatchNorm3d(channels), nn.ReLU(),
        nn.AdaptiveAvgPool3d(1), nn.Flatten(), nn.Dropout(dropout), nn.Linear(channels, num_classes))


def not_a_model(num_classes: int, dropout: float, width: float) -> str:
    return "oops"


def without_num_classes(dropout: float, width: float) -> nn.Module:  # a factory written for a fixed label set
    return tiny_c3d(10, dropout, width)


def needs_depth(num_classes: int, dropout: float, width: float, depth: int) -> nn.Module:
    return tiny_c3d(num_classes, dropout, width)


NOT_A_FACTORY = 3
