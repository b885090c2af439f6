"""Inflate an ImageNet ResNet-50 (torchvision layout, read from a file) into I3D or SlowFast's slow pathway.

A 2D kernel k_h×k_w becomes k_t×k_h×k_w by repeating it over time and dividing by k_t, so a
clip that is constant in time gives the 2D network's per-frame features (Carreira &
Zisserman 2017). In SlowFast the slow pathway's stage inputs also carry the lateral
channels from the fast pathway; their weights start at zero, so the property holds for the
slow pathway whatever the fast pathway computes.

The ResNet-50 may come as other tools save it (:func:`load_resnet50_state`: their wrappers, prefixes and
MMAction2's names; the file formats in :mod:`harness.models.weight_files`); what does not fit is named before
any training.
"""

from __future__ import annotations

import re
from pathlib import Path

import torch
from torch import nn

from harness.models.caffe2_names import is_caffe2
from harness.models.i3d import I3D
from harness.models.resnet3d import Bottleneck, Stem
from harness.models.slowfast import SlowFast
from harness.models.weight_files import listed, read_weights, require_finite
from harness.spec import SpecError

Tensor = torch.Tensor


# Where other tools keep the weights inside a checkpoint: plain torchvision; {"state_dict": ...} (Lightning,
# mmpretrain/mmaction, timm's train script); {"model": ...} (DeiT, detectron2-style trainers, torchvision's reference
# scripts); {"model_state": ...} (pycls and PySlowFast); {"model_state_dict": ...} (PyTorch's checkpoint tutorial);
# {"blobs": ...} (Caffe2's checkpoints, read by weight_files).
WRAPPERS = ("state_dict", "model", "model_state", "model_state_dict", "blobs")
RESNET50_BLOCKS = (3, 4, 6, 3)  # bottleneck blocks per stage
# Other torchvision ResNets by (blocks per stage, bottleneck), to name what a wrong file holds.
RESNETS = {((2, 2, 2, 2), False): "ResNet-18", ((3, 4, 6, 3), False): "ResNet-34",
           ((3, 4, 23, 3), True): "ResNet-101", ((3, 8, 36, 3), True): "ResNet-152"}
HOW_TO_SAVE = "torch.save(torchvision.models.resnet50(...).state_dict(), path)"


def resnet50_keys() -> list[str]:
    """Every entry of a torchvision ResNet-50 state dict that inflation reads (all but the classifier and BN's
    num_batches_tracked)."""
    def bn(prefix: str) -> list[str]:
        return [f"{prefix}.{n}" for n in ("weight", "bias", "running_mean", "running_var")]
    keys = ["conv1.weight", *bn("bn1")]
    for layer, blocks in enumerate(RESNET50_BLOCKS, start=1):
        for j in range(blocks):
            for i in (1, 2, 3):
                keys += [f"layer{layer}.{j}.conv{i}.weight", *bn(f"layer{layer}.{j}.bn{i}")]
        keys += [f"layer{layer}.0.downsample.0.weight", *bn(f"layer{layer}.0.downsample.1")]
    return keys


def _strip_prefix(state: dict, path: Path) -> dict:
    """The ResNet's own entries of `state`, without the prefix a wrapper put before them ('module.' of
    DataParallel, 'backbone.' of mmpretrain/mmaction, 'model.' of Lightning, or several): the one before both
    'conv1.weight' and 'layer1.0.conv1.weight'. Unchanged where there is none or the plain keys are there. Several
    networks (MoCo's query and key encoders) are a SpecError: which one to inflate is the user's choice."""
    tail = "layer1.0.conv1.weight"
    prefixes = sorted(k[: -len(tail)] for k in state if k.endswith(tail) and f"{k[: -len(tail)]}conv1.weight" in state)
    if not prefixes or not prefixes[0]:
        return state
    if len(prefixes) > 1:
        raise SpecError(f"'model.pretrained': {path} holds {len(prefixes)} ResNets (under "
                        f"{', '.join(repr(p) for p in prefixes)}); save the one to inflate on its own, without the "
                        f"prefix ({HOW_TO_SAVE}).")
    return {k[len(prefixes[0]):]: v for k, v in state.items() if k.startswith(prefixes[0])}


def _torchvision_names(state: dict) -> dict:
    """`state` with MMAction2's ResNet names (a ConvModule per convolution and its BN: 'conv1.conv', 'conv1.bn',
    'layer1.0.conv2.bn', 'layer1.0.downsample.conv') turned into torchvision's ('conv1', 'bn1', 'layer1.0.bn2',
    'layer1.0.downsample.0'), the mapping MMAction2 itself applies to load torchvision's weights; unchanged where
    the names are not MMAction2's."""
    if not any(k == "conv1.conv.weight" or k.endswith(".conv1.conv.weight") for k in state):
        return state
    renames = ((r"(^|\.)conv(\d)\.conv\.", r"\1conv\2."), (r"(^|\.)conv(\d)\.bn\.", r"\1bn\2."),
               (r"\.downsample\.conv\.", ".downsample.0."), (r"\.downsample\.bn\.", ".downsample.1."))
    renamed = {}
    for key, value in state.items():
        for pattern, name in renames:
            key = re.sub(pattern, name, key)
        renamed[key] = value
    return renamed


def _video_conv(state: dict) -> str | None:
    """A 3D convolution's entry (name and shape) where `state` is a video model's (PySlowFast, PyTorchVideo,
    torchvision's r3d_18, MMAction2's I3D); else None."""
    return next((f"{k} {tuple(v.shape)}" for k, v in state.items() if isinstance(v, Tensor) and v.dim() == 5), None)


def _found(state: dict) -> str:
    """What a state dict that is not a ResNet-50's holds: a few of the entries inflation does not read, or, where
    none is a tensor, its entries and their types (a wrapper the harness does not know shows there)."""
    expected = set(resnet50_keys())
    others = [k for k, v in state.items() if isinstance(v, Tensor) and k not in expected]
    if others:
        return f"it holds {len(others)} other entr{'y' if len(others) == 1 else 'ies'}, such as {', '.join(others[:4])}"
    shown = ", ".join(f"{k!r} ({type(v).__name__})" for k, v in list(state.items())[:6])
    return f"its entries are {shown}, none a tensor"


def _which_resnet(state: dict) -> str | None:
    """A torchvision ResNet other than ResNet-50 that `state` holds, named with its blocks per stage; else None."""
    blocks = tuple(len({k.split(".")[1] for k in state if k.startswith(f"layer{i}.")}) for i in (1, 2, 3, 4))
    bottleneck = "layer1.0.conv3.weight" in state
    if (blocks == RESNET50_BLOCKS and bottleneck) or not all(blocks):
        return None
    name = RESNETS.get((blocks, bottleneck), "a ResNet")
    return f"{name} ({', '.join(map(str, blocks))} {'bottleneck' if bottleneck else 'basic'} blocks per stage)"


def read_state_dict(path: Path) -> dict:
    """The state dict in the file `model.pretrained` names, out of the wrapper a tool saved it in (one of WRAPPERS);
    the file formats :mod:`harness.models.weight_files` reads. SpecError naming what is wrong, before any training:
    no such file, not a checkpoint (what it is instead), a pickled object other than tensors, an empty dict."""
    if not path.is_file():
        raise SpecError(f"'model.pretrained': no file at {path}. Give the path of a torchvision ResNet-50 state dict "
                        f"({HOW_TO_SAVE}) or of a checkpoint of the same video model.")
    state = read_weights(path, "'model.pretrained'", HOW_TO_SAVE)
    for key in WRAPPERS:
        if isinstance(state, dict) and isinstance(state.get(key), dict):
            state = state[key]
    if not isinstance(state, dict):
        raise SpecError(f"'model.pretrained': {path} holds a {type(state).__name__}, not a state dict "
                        f"({HOW_TO_SAVE}).")
    if not state:
        raise SpecError(f"'model.pretrained': {path} holds an empty dict: no weights ({HOW_TO_SAVE}).")
    if not all(isinstance(k, str) for k in state):
        odd = next(k for k in state if not isinstance(k, str))
        raise SpecError(f"'model.pretrained': {path} holds a dict keyed by {odd!r} ({type(odd).__name__}), not a "
                        f"state dict, whose keys are parameter names such as 'conv1.weight' ({HOW_TO_SAVE}).")
    unusual = [f"{k} ({_kind(v)})" for k, v in state.items() if isinstance(v, Tensor) and _kind(v)]
    if unusual:
        raise SpecError(f"'model.pretrained': {path} holds tensors that are not weights as a model's state_dict() "
                        f"saves them: {listed(unusual, 4)}. Save dense real tensors ({HOW_TO_SAVE}).")
    return state


def _kind(tensor: Tensor) -> str:
    """What makes a saved tensor unusable as a weight (sparse, without data, complex), or ''."""
    if tensor.layout != torch.strided:
        return f"{str(tensor.layout).removeprefix('torch.')} layout"
    if tensor.is_meta:
        return "no data: a meta tensor"
    return "complex" if tensor.is_complex() else ""


def load_resnet50_state(path: Path) -> dict[str, Tensor]:
    """A torchvision ResNet-50 state dict from `path`, as torchvision or another tool saved it (read_state_dict's
    formats and wrappers, with a prefix such as 'module.' or 'backbone.', in MMAction2's names)."""
    return resnet50_state(read_state_dict(path), path)


def resnet50_state(state: dict, path: Path) -> dict[str, Tensor]:
    """The torchvision ResNet-50 in `state` (read from `path`). SpecError naming what is wrong, before any training:
    a video model's weights, another ResNet, or entries that inflation needs missing (with a few of those the file
    holds)."""
    state = _strip_prefix(_torchvision_names({k: v for k, v in state.items() if isinstance(k, str)}), path)
    needed = resnet50_keys()
    missing = [k for k in needed if not isinstance(state.get(k), torch.Tensor)]
    video = _video_conv(state)
    if video is not None:
        raise SpecError(f"'model.pretrained': {path} holds a video model's weights, not a 2D ResNet-50's: its "
                        f"convolutions are already 3D ({video}; {_found(state)}), as PySlowFast, PyTorchVideo, "
                        f"torchvision's video models and MMAction2's 3D models save them. Inflation takes an "
                        f"ImageNet ResNet-50 state dict ({HOW_TO_SAVE}); model.pretrained loads a video model's "
                        f"weights as they are only into the same model (harness train's or PySlowFast's checkpoints).")
    if is_caffe2(state):
        raise SpecError(f"'model.pretrained': {path} is a Caffe2 checkpoint (a pickle of {{'blobs': ...}}) of an image "
                        f"model, in Caffe2's names ({listed(list(state), 3)}): inflation reads a torchvision ResNet-50 "
                        f"state dict ({HOW_TO_SAVE}). Caffe2 checkpoints are read for video models (PySlowFast's "
                        f"SlowFast and I3D model zoo).")
    other = _which_resnet(state)
    if other is not None:
        raise SpecError(f"'model.pretrained': {path} holds {other}; inflation needs a ResNet-50 "
                        f"({', '.join(map(str, RESNET50_BLOCKS))} bottleneck blocks per stage, as the I3D and SlowFast "
                        f"models have).")
    if missing:
        shown = listed(missing, 5)
        found = f"; {_found(state)}" if len(missing) == len(needed) else ""
        raise SpecError(f"'model.pretrained': {path} does not hold a torchvision ResNet-50 state dict: "
                        f"{len(missing)} entr{'y' if len(missing) == 1 else 'ies'} missing ({shown}){found}. The "
                        f"weights are read at the top level or under {', '.join(map(repr, WRAPPERS))}, with or "
                        f"without a prefix such as 'module.' or 'backbone.', in torchvision's or MMAction2's names; "
                        f"save the whole state dict ({HOW_TO_SAVE}).")
    require_finite(state, needed, path)
    return state


def _inflate_conv(conv: nn.Conv3d, weight2d: Tensor, where: str) -> None:
    """Inflate `weight2d` into `conv`; ValueError (inflate_into names the file) where it does not fit."""
    out_c, in_c, kt = conv.weight.shape[0], conv.weight.shape[1], conv.weight.shape[2]
    if weight2d.shape[0] != out_c or weight2d.shape[1] > in_c or weight2d.shape[2:] != conv.weight.shape[3:]:
        raise ValueError(f"{where}.weight is {tuple(weight2d.shape)}, which does not fit the model's 3D convolution "
                         f"{tuple(conv.weight.shape)}")
    inflated = torch.zeros_like(conv.weight)
    inflated[:, : weight2d.shape[1]] = weight2d.unsqueeze(2).repeat(1, 1, kt, 1, 1) / kt
    with torch.no_grad():
        conv.weight.copy_(inflated)


def _copy_bn(bn: nn.BatchNorm3d, state: dict[str, Tensor], prefix: str) -> None:
    """Copy a 2D BN's parameters and statistics into `bn`; ValueError (inflate_into names the file) where one does
    not fit."""
    with torch.no_grad():
        for name in ("weight", "bias", "running_mean", "running_var"):
            value, target = state[f"{prefix}.{name}"], getattr(bn, name)
            if value.shape != target.shape:
                raise ValueError(f"{prefix}.{name} is {tuple(value.shape)}, where the model's BN holds "
                                 f"{tuple(target.shape)}")
            target.copy_(value)


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


def _holder(path: Path | None) -> str:
    return f"{path} holds" if path is not None else "the weights hold"


def _require_same_width(stem: Stem, state: dict[str, Tensor], path: Path | None) -> None:
    """SpecError naming model.pretrained where the ResNet-50 in `state` is of another width than the model: then no
    layer fits (torchvision's ImageNet weights for a model narrowed by scale=smoke, or a `harness models
    pretrain-2d` stand-in trained at another scale)."""
    have, want = state["conv1.weight"].shape[0], stem.conv1.weight.shape[0]
    if have != want:
        full = 64  # a full-width ResNet-50's stem channels, which model.width scales
        raise SpecError(f"'model.pretrained': {_holder(path)} a ResNet-50 with {have} stem channels, but the "
                        f"model's stem has {want} (model.width scales the {full} of a full-width one): no layer "
                        f"fits. Give the weights of a ResNet-50 of the model's width ('harness models pretrain-2d "
                        f"--out PATH' with this run's scale= or model.width= trains one), or set "
                        f"model.width={have / full:g}.")


def inflate_into(model: nn.Module, state: dict[str, Tensor], path: Path | None = None) -> nn.Module:
    """Load the inflated ResNet-50 into an I3D or into a SlowFast's slow pathway (in place); `path`, the file it
    came from, is named in errors."""
    if isinstance(model, I3D):
        stem, stages = model.stem, [model.res2, model.res3, model.res4, model.res5]
    elif isinstance(model, SlowFast):
        stem, stages = model.slow_stem, list(model.slow_stages)
    else:
        raise SpecError(f"'model.pretrained' inflation supports the i3d_* and slowfast_* models, "
                        f"not {type(model).__name__}.")
    _require_same_width(stem, state, path)
    try:
        _inflate_stem(stem, state)
        for layer, stage in enumerate(stages, start=1):
            blocks = [m for m in stage if isinstance(m, Bottleneck)]  # skip non-local blocks
            for j, block in enumerate(blocks):
                _inflate_block(block, state, f"layer{layer}.{j}")
    except ValueError as err:  # a layer of another shape: a ResNet-50 altered, or another network under its names
        raise SpecError(f"'model.pretrained': {_holder(path)} a layer of another shape than a torchvision "
                        f"ResNet-50's of the model's width: {err}. Give a ResNet-50 state dict ({HOW_TO_SAVE})."
                        ) from None
    return model
