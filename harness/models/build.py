"""Build the network a RunSpec names: a registered model or a user factory (`model.target`)."""

from __future__ import annotations

from pathlib import Path

from torch import nn

from harness.models.bn import convert_batchnorm
from harness.models.registry import get_entry, load_target
from harness.models.resnet3d import pad_stem_channels
from harness.spec import ModelSpec, SpecError

OWN_FAMILIES = ("slowfast_", "i3d_")


def build_model(model: ModelSpec, num_classes: int) -> nn.Module:
    """The model of `model` with `num_classes` outputs, BatchNorm3d layers made multigrid-aware."""
    if model.target:
        factory = load_target(model.target)
        net = factory(num_classes=num_classes, dropout=model.dropout, width=model.width)
        if not isinstance(net, nn.Module):
            raise SpecError(f"'model.target' {model.target} returned {type(net).__name__}, not a torch nn.Module.")
        return convert_batchnorm(net)
    entry = get_entry(model.name)
    if model.width != 1.0 and not model.name.startswith(OWN_FAMILIES):
        raise SpecError(f"'model.width' scales only the harness's own ResNet-3D models (slowfast_*, i3d_*); "
                        f"'{model.name}' is a torchvision model. Leave model.width=1.0.")
    net = entry.factory(num_classes=num_classes, dropout=model.dropout, width=model.width)
    if model.pretrained:
        from harness.models.inflate import inflate_into, load_resnet50_state

        path = Path(model.pretrained)
        inflate_into(net, load_resnet50_state(path))
    pad_stem_channels(net, model.pad_stem_channels)
    return net
