"""Start a video model from another video model's weights: fine-tuning, as the paper's SSv2 and Charades recipes
start from a Kinetics-400 model (`model.pretrained` naming a video checkpoint instead of an ImageNet ResNet-50).

Read: the harness's own names (a trainer checkpoint, whose weights sit under "model", or a state dict saved from one
of its models), PySlowFast's (the "model_state" of its .pyth checkpoints; :mod:`harness.models.pyslowfast_names`
renames them), Caffe2's (the "blobs" of PySlowFast's Caffe2 model zoo .pkl files;
:mod:`harness.models.caffe2_names`) and PyTorchVideo's (its torch.hub checkpoints;
:mod:`harness.models.pytorchvideo_names`), with or without a wrapper's prefix ('module.' of DDP, '_orig_mod.' of
torch.compile). Every tensor of the model must come from the file with the model's shape, except the classifier:
where the file's has another number of classes (the Kinetics model's 400 for SSv2's 174) the model keeps its
freshly initialised one, as fine-tuning on another dataset does. What does not fit is a SpecError that names the
file and the entries, before any training.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from harness.models import pyslowfast_names, pytorchvideo_names
from harness.models.caffe2_names import caffe2_to_pyslowfast, is_caffe2
from harness.models.weight_files import listed, require_finite
from harness.spec import SpecError

# Other implementations whose names are read: (name, its module, which holds ANCHORS and module_names(model)).
OTHER_LAYOUTS = (("PySlowFast", pyslowfast_names), ("PyTorchVideo", pytorchvideo_names))
# The models each layout's module_names maps.
READ_FOR = {"PySlowFast": "slowfast_* and i3d_*", "PyTorchVideo": "slowfast_*, i3d_* and x3d_*"}

Tensor = torch.Tensor
# BN's count of batches seen: PyTorch keeps it, the trainer never reads it (momentum is fixed), and other tools
# leave it out of their checkpoints.
OPTIONAL = "num_batches_tracked"


def is_video_state(state: dict) -> bool:
    """Whether `state` holds a video model's weights (3D convolutions) rather than an image model's."""
    return any(isinstance(v, Tensor) and v.dim() == 5 for v in state.values())


def _classifier(model: nn.Module) -> tuple[str, ...]:
    """The entries of the model's classifier: its last linear layer's (head.fc here, fc in torchvision's models)."""
    last = [name for name, module in model.named_modules() if isinstance(module, nn.Linear)]
    return (f"{last[-1]}.weight", f"{last[-1]}.bias") if last else ()


def _unpadded(weight: Tensor, shape: torch.Size) -> Tensor:
    """A stem convolution saved with its input channels padded with zeros (model.pad_stem_channels), cut back to
    the model's `shape` where only the padding differs; anything else as it is."""
    if (weight.dim() == 5 and len(shape) == 5 and weight.shape[1] > shape[1]
            and weight.shape[:1] + weight.shape[2:] == shape[:1] + shape[2:]
            and not weight[:, shape[1]:].any()):
        return weight[:, : shape[1]]
    return weight


def _renamed(state: dict[str, Tensor], prefixes: list[str], names: dict[str, str] | None, who: str,
             model: nn.Module, path: Path) -> dict[str, Tensor]:
    """`state`, in `who`'s names under one of `prefixes` ('' for none; 'module.' of DDP, '_orig_mod.' of
    torch.compile), with the harness's names (`names`: their module → ours, {} for the harness's own); an entry
    whose module the layout does not have keeps its name (named later as one the model does not have)."""
    if names is None:
        raise SpecError(f"'model.pretrained': {path} holds {who}'s weights, which are read for the "
                        f"{READ_FOR[who]} models, not {type(model).__name__}.")
    if len(prefixes) > 1:
        raise SpecError(f"'model.pretrained': {path} holds {len(prefixes)} {who} models (under "
                        f"{', '.join(repr(p) for p in prefixes)}); save the one to start from on its own.")
    prefix, renamed = prefixes[0], {}
    for key, value in state.items():
        if key.startswith(prefix):
            module, _, leaf = key[len(prefix):].rpartition(".")
            renamed[f"{names[module]}.{leaf}" if module in names else key[len(prefix):]] = value
    return renamed


def load_video_weights(model: nn.Module, state: dict, path: Path, fresh_classifier: bool = False) -> str:
    """Load the video weights `state` (read from `path`) into `model` in place, the classifier too unless its shape
    differs or `fresh_classifier`; a sentence saying what was loaded (for the run's log). SpecError, naming the
    file, where they do not fit the model."""
    tensors = {k: v for k, v in state.items() if isinstance(k, str) and isinstance(v, Tensor)}
    own, classifier = model.state_dict(), _classifier(model)
    left_out: list[str] = []
    if is_caffe2(tensors):
        tensors, left_out = caffe2_to_pyslowfast(tensors)
    # Each layout by an entry every model of it has; the harness's own names (its model's first entry) last.
    layouts = [(who, layout.ANCHORS, layout.module_names) for who, layout in OTHER_LAYOUTS]
    for who, anchors, names in [*layouts, ("harness", (next(iter(own)),), lambda _: {})]:
        prefixes = sorted({k[: -len(a)] for k in tensors for a in anchors if k == a or k.endswith("." + a)})
        if prefixes:
            tensors = _renamed(tensors, prefixes, names(model), who, model, path)
            break
    # A file without the classifier (a backbone's weights) starts it afresh; every other entry must be there.
    missing = [k for k in own if k not in tensors and not k.endswith(OPTIONAL) and k not in classifier]
    if not any(k in tensors for k in own if k not in classifier and not k.endswith(OPTIONAL)):
        raise SpecError(f"'model.pretrained': {path} holds another model's weights: none of the "
                        f"{type(model).__name__}'s entries is there (such as {listed(missing, 2)}); it holds "
                        f"{listed(list(tensors), 3)}. Give a checkpoint of the same model (harness train writes "
                        f"one per epoch under output_dir/checkpoints/).")
    tensors = {k: _unpadded(v, own[k].shape) if k in own else v for k, v in tensors.items()}
    unexpected = [k for k in tensors if k not in own]
    reshaped = [k for k in own if k in tensors and tensors[k].shape != own[k].shape and k not in classifier]
    if missing or unexpected or reshaped:
        parts = ([f"{len(missing)} of the model's entries missing ({listed(missing)})"] if missing else []) + \
                ([f"{len(unexpected)} the model does not have ({listed(unexpected)})"] if unexpected else []) + \
                ([f"{len(reshaped)} of another shape (" + listed([f"{k} {tuple(tensors[k].shape)} where the model "
                  f"has {tuple(own[k].shape)}" for k in reshaped], 2) + ")"] if reshaped else [])
        raise SpecError(f"'model.pretrained': {path} does not hold weights of this model ({type(model).__name__} "
                        f"at model.width and the recipe's layout): {'; '.join(parts)}. Give a checkpoint of the same "
                        f"model at the same width, from harness train or PySlowFast (.pyth, or its Caffe2 .pkl).")
    require_finite(tensors, [k for k in own if k in tensors], path)
    reshaped_head = any(k not in tensors or tensors[k].shape != own[k].shape for k in classifier)
    fresh_head = bool(classifier) and (reshaped_head or fresh_classifier)
    loaded = {k: v for k, v in tensors.items() if not (fresh_head and k in classifier)}
    model.load_state_dict(loaded, strict=False)
    skipped = f"; {len(left_out)} Caffe2 blob(s) of no model part left out ({listed(left_out)})" if left_out else ""
    if fresh_head:
        there = (f"{tensors[classifier[0]].shape[0]} classes there" if classifier[0] in tensors
                 else "none there")
        asked = " as model.fresh_classifier asks" if fresh_classifier and not reshaped_head else ""
        return (f"started from {path}: every layer but the classifier ({there}, {own[classifier[0]].shape[0]} "
                f"here, initialised afresh{asked}){skipped}")
    return f"started from {path}: every layer, the classifier included{skipped}"
