"""The registered models built narrow enough to train in CPU tests."""

from __future__ import annotations

from torch import nn

from harness.models import build_model
from harness.spec import ModelSpec

TINY = 1 / 16  # widths of the harness's own models in CPU tests


def tiny(name: str, classes: int = 5) -> nn.Module:
    """Model `name` for `classes` classes, TINY wide where it takes a width."""
    width = TINY if ModelSpec(name=name).takes_width else 1.0  # the harness's own models narrow, torchvision's not
    return build_model(ModelSpec(name=name, width=width, dropout=0.5), classes)
