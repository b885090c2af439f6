"""Build the network a RunSpec names: a registered model or a user factory (`model.target`)."""

from __future__ import annotations

import inspect
import logging
from pathlib import Path

from torch import nn

from harness.models.bn import convert_batchnorm
from harness.models.inflate import inflate_into, read_state_dict, resnet50_state
from harness.models.registry import get_entry, load_target
from harness.models.resnet3d import pad_stem_channels
from harness.models.video_weights import is_video_state, load_video_weights
from harness.paths import list_checkpoints
from harness.spec import ModelSpec, SpecError

log = logging.getLogger("harness.models")


def build_model(model: ModelSpec, num_classes: int) -> nn.Module:
    """The model of `model` with `num_classes` outputs, BatchNorm3d layers made multigrid-aware."""
    if model.target:
        factory = load_target(model.target)
        arguments = {"num_classes": num_classes, "dropout": model.dropout, "width": model.width}
        _require_factory_accepts(model.target, factory, arguments)
        net = factory(**arguments)
        if not isinstance(net, nn.Module):
            raise SpecError(f"'model.target' {model.target} returned {type(net).__name__}, not a torch nn.Module.")
        return convert_batchnorm(net)
    entry = get_entry(model.name)
    if model.width != 1.0 and not model.takes_width:
        raise SpecError(f"'model.width' scales only the harness's own models (slowfast_*, i3d_*, x3d_*); "
                        f"'{model.name}' is a torchvision model. Leave model.width=1.0.")
    net = entry.factory(num_classes=num_classes, dropout=model.dropout, width=model.width)
    if model.pretrained:
        start_from(net, Path(model.pretrained), model.fresh_classifier)
    pad_stem_channels(net, model.pad_stem_channels)
    return net


def is_paper_model(model: ModelSpec) -> bool:
    """Whether `model` is one of the paper's architectures (a registered paper model, not a user factory or a
    torchvision model): only then do the paper's numbers describe the model that ran."""
    return not model.target and get_entry(model.name).paper


def start_from(net: nn.Module, path: Path, fresh_classifier: bool = False) -> None:
    """Load `path` (model.pretrained: a file, or a harness train output_dir, whose newest checkpoint is taken) into
    `net` in place: a video model's weights as they are (fine-tuning, the classifier afresh where the classes
    differ or `fresh_classifier`), an ImageNet ResNet-50 inflated to 3D."""
    path, state = _read_weights(path)
    if is_video_state(state):
        log.info(load_video_weights(net, state, path, fresh_classifier))
    else:
        inflate_into(net, resnet50_state(state, path), path)


def _require_factory_accepts(target: str, factory, arguments: dict) -> None:
    """Raise SpecError if the user factory cannot be called with the keyword arguments the harness passes.

    Checked against the signature, not by calling and catching TypeError: a TypeError raised inside the user's
    own code is theirs to see with its traceback."""
    if not callable(factory):
        raise SpecError(f"'model.target' {target} is not callable (a {type(factory).__name__}): name a factory "
                        f"def f(num_classes, dropout, width) -> nn.Module.")
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # some built-ins and C extensions state no signature: let the call tell
        return
    try:
        signature.bind(**arguments)
    except TypeError as err:
        call = f"{target.partition(':')[2]}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})"
        raise SpecError(f"'model.target' {target} cannot be called as {call}: {err}. The "
                        f"factory must accept the keyword arguments num_classes, dropout and width (add **kwargs "
                        f"to ignore those it does not use) and need no others.") from None


def _read_weights(path: Path) -> tuple[Path, dict]:
    """The file `path` names and the state dict in it: `path` itself, or for a folder of harness train's (its
    output_dir or the checkpoints/ in it) its newest checkpoint that can be read, as a resume takes it (damaged
    newer ones are passed over with a warning). SpecError for a folder without any, or with none readable."""
    if not path.is_dir():
        return path, read_state_dict(path)
    folder = path / "checkpoints" if (path / "checkpoints").is_dir() else path
    found = list_checkpoints(folder)
    if not found:
        raise SpecError(f"'model.pretrained': {path} is a folder without harness train checkpoints "
                        f"(checkpoint_*.pt, also under checkpoints/); give the weights file itself.")
    damaged = []
    for checkpoint in reversed(found):
        try:
            return checkpoint, read_state_dict(checkpoint)
        except SpecError as err:
            damaged.append(str(err))
            log.warning("model.pretrained: checkpoint %s cannot be read, trying an older one (%s)", checkpoint, err)
    raise SpecError(f"'model.pretrained': no checkpoint in {folder} can be read; the newest: {damaged[0]}")
