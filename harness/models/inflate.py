"""Inflate an ImageNet ResNet-50 (torchvision layout, read from a file) into I3D or SlowFast's slow pathway.

A 2D kernel k_h×k_w becomes k_t×k_h×k_w by repeating it over time and dividing by k_t, so a
clip that is constant in time gives the 2D network's per-frame features (Carreira &
Zisserman 2017). In SlowFast the slow pathway's stage inputs also carry the lateral
channels from the fast pathway; their weights start at zero, so the property holds for the
slow pathway whatever the fast pathway computes.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from harness.models.resnet3d import Bottleneck, Stem
from harness.spec import SpecError

Tensor = torch.Tensor


def load_resnet50_state(path: Path) -> dict[str, Tensor]:
    """A torchvision ResNet-50 state dict from `path` (plain, or under 'state_dict'/'model', 'module.' stripped)."""
    if not path.is_file():
        raise SpecError(f"'model.pretrained': no file at {path}. Give the path of a torchvision ResNet-50 state dict "
                        f"(torch.save(torchvision.models.resnet50(...).state_dict(), path)).")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises several types for a file that is not a checkpoint
        raise SpecError(f"'model.pretrained': {path} is not a readable PyTorch checkpoint: {err}") from err
    for key in ("state_dict", "model"):
        if isinstance(state, dict) and isinstance(state.get(key), dict):
            state = state[key]
    state = {k.removeprefix("module."): v for k, v in state.items()}
    if "conv1.weight" not in state or "layer4.2.conv3.weight" not in state:
        raise SpecError(f"'model.pretrained': {path} does not hold a torchvision ResNet-50 state dict "
                        f"(missing conv1.weight / layer4.2.conv3.weight).")
    return state


def _inflate_conv(conv: nn.Conv3d, weight2d: Tensor, where: str) -> None:
    out_c, in_c, kt = conv.weight.shape[0], conv.weight.shape[1], conv.weight.shape[2]
    if weight2d.shape[0] != out_c or weight2d.shape[1] > in_c or weight2d.shape[2:] != conv.weight.shape[3:]:
        raise SpecError(f"Cannot inflate {where}: 2D weight {tuple(weight2d.shape)} does not fit 3D conv "
                        f"{tuple(conv.weight.shape)} (inflation needs model.width=1.0).")
    inflated = torch.zeros_like(conv.weight)
    inflated[:, : weight2d.shape[1]] = weight2d.unsqueeze(2).repeat(1, 1, kt, 1, 1) / kt
    with torch.no_grad():
        conv.weight.copy_(inflated)


def _copy_bn(bn: nn.BatchNorm3d, state: dict[str, Tensor], prefix: str) -> None:
    with torch.no_grad():
        for name in ("weight", "bias", "running_mean", "running_var"):
            getattr(bn, name).copy_(state[f"{prefix}.{name}"])


def _inflate_stem(stem: Stem, state: dict[str, Tensor]) -> None:
    _inflate_conv(stem.conv1, state["conv1.weight"], "conv1")
    _copy_bn(stem.bn1, state, "bn1")


def _inflate_block(block: Bottleneck, state: dict[str, Tensor], prefix: str) -> None:
    for i in (1, 2, 3):
        _inflate_conv(getattr(block, f"conv{i}"), state[f"{prefix}.conv{i}.weight"], f"{prefix}.conv{i}")
        _copy_bn(getattr(block, f"bn{i}"), state, f"{prefix}.bn{i}")
    if block.downsample is not None:
        _inflate_conv(block.downsample[0], state[f"{prefix}.downsample.0.weight"], f"{prefix}.downsample.0")
        _copy_bn(block.downsample[1], state, f"{prefix}.downsample.1")


def inflate_into(model: nn.Module, state: dict[str, Tensor]) -> nn.Module:
    """Load the inflated ResNet-50 into an I3D or into a SlowFast's slow pathway (in place)."""
    from harness.models.i3d import I3D
    from harness.models.slowfast import SlowFast

    if isinstance(model, I3D):
        stem, stages = model.stem, [model.res2, model.res3, model.res4, model.res5]
    elif isinstance(model, SlowFast):
        stem, stages = model.slow_stem, list(model.slow_stages)
    else:
        raise SpecError(f"'model.pretrained' inflation supports the i3d_* and slowfast_* models, "
                        f"not {type(model).__name__}.")
    _inflate_stem(stem, state)
    for layer, stage in enumerate(stages, start=1):
        blocks = [m for m in stage if isinstance(m, Bottleneck)]  # skip non-local blocks
        for j, block in enumerate(blocks):
            _inflate_block(block, state, f"layer{layer}.{j}")
    return model
