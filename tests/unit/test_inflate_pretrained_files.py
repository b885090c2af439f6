"""model.pretrained given files that other tools and implementations write: each is read (with its names mapped to
torchvision's) or refused, before training, with the file, what it holds and what the harness reads. Nothing in a
file is ever unpickled beyond tensors and plain containers."""

from __future__ import annotations

import argparse
import json
import os
import pickle
import struct
import zipfile

import numpy as np
import pytest
import torch
import torchvision

from harness.models import build_model
from harness.models.inflate import load_resnet50_state
from harness.models.resnet2d import backbone_state, resnet50_2d
from harness.spec import ModelSpec, SpecError


def _numbered_state(arch: str = "resnet50", module=torchvision.models) -> dict[str, torch.Tensor]:
    """A torchvision model's state dict keys, each a small tensor holding its own index (so a mapping that mixes
    entries up shows), 5-D where the real entry is (video models)."""
    with torch.device("meta"):
        shapes = {k: v.shape for k, v in getattr(module, arch)().state_dict().items()}
    return {k: torch.full((1,) * max(1, len(shape)), float(i)) for i, (k, shape) in enumerate(shapes.items())}


def _mmaction_names(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """torchvision's ResNet names as MMAction2's ResNet (a ConvModule per convolution) has them."""
    renamed = {}
    for key, value in state.items():
        for old, new in ((".downsample.0.", ".downsample.conv."), (".downsample.1.", ".downsample.bn.")):
            key = key.replace(old, new)
        parts = key.split(".")
        if parts[-2].startswith("bn") and parts[-2][2:].isdigit():  # bn1 -> conv1.bn
            parts[-2:-1] = [f"conv{parts[-2][2:]}", "bn"]
        elif parts[-2].startswith("conv") and parts[-2][4:].isdigit():  # conv1 -> conv1.conv
            parts[-2:-1] = [parts[-2], "conv"]
        renamed[".".join(parts)] = value
    return renamed


def _safetensors(state: dict[str, torch.Tensor]) -> bytes:
    """The bytes of a .safetensors file (the format as documented: header length, JSON header, raw data)."""
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, tensor in state.items():
        raw = tensor.contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensor.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


READ = {
    # MMAction2's TSN ResNet-50: ConvModule names under 'backbone.', its head beside, 'meta' beside the weights.
    "mmaction": lambda s: {"meta": {"epoch": 100, "mmaction_version": "1.2.0"},
                           "state_dict": {f"backbone.{k}": v for k, v in _mmaction_names(s).items()
                                          if not k.startswith("fc")} | {"cls_head.fc_cls.weight": torch.zeros(1)}},
    # torchvision's reference training scripts keep their argparse arguments beside the weights.
    "torchvision-reference": lambda s: {"model": s, "optimizer": {"state": {}, "param_groups": []}, "epoch": 89,
                                        "args": argparse.Namespace(lr=0.5, data_path="/datasets/imagenet")},
    "pytorch-tutorial": lambda s: {"model_state_dict": s, "optimizer_state_dict": {}, "epoch": 3, "loss": 0.4},
}


@pytest.mark.parametrize("wrap", [*READ.values(), None], ids=[*READ, "safetensors"])
def test_weights_as_other_tools_save_them_are_read(tmp_path, wrap):
    state = _numbered_state()
    if wrap is None:  # timm / Hugging Face: model.safetensors, read without the safetensors package
        path = tmp_path / "model.safetensors"
        path.write_bytes(_safetensors(state))
    else:
        path = tmp_path / "w.pth"
        torch.save(wrap(state), path)
    loaded = load_resnet50_state(path)
    for key in ("conv1.weight", "bn1.running_var", "layer1.0.bn2.weight", "layer3.0.downsample.1.running_mean",
                "layer4.2.conv3.weight"):
        assert torch.equal(loaded[key], state[key]), key


@pytest.mark.parametrize("make, found", [
    (lambda: {"model_state": {"s1.pathway0_stem.conv.weight": torch.zeros(1, 1, 1, 1, 1),
                              "s1.pathway0_stem.bn.weight": torch.zeros(1)},
              "epoch": 196, "optimizer_state": {"state": {}, "param_groups": []}, "cfg": "TRAIN:\n  ENABLE: True\n"},
     "s1.pathway0_stem.conv.weight (1, 1, 1, 1, 1)"),  # a PySlowFast .pyth
    (lambda: {"blocks.0.multipathway_blocks.0.conv.weight": torch.zeros(1, 1, 1, 1, 1),  # PyTorchVideo's hub
              "blocks.6.proj.weight": torch.zeros(1)}, "blocks.0.multipathway_blocks.0.conv.weight"),
    (lambda: _numbered_state("r3d_18", torchvision.models.video), "stem.0.weight (1, 1, 1, 1, 1)"),
    (lambda: {"state_dict": {f"backbone.{k}": v.reshape(1, 1, 1, 1, 1) if k.endswith("conv.weight") else v
                             for k, v in _mmaction_names(_numbered_state()).items()}},
     "conv1.weight (1, 1, 1, 1, 1)"),  # MMAction2's I3D: ResNet-50 names, 3D kernels
], ids=["pyslowfast", "pytorchvideo", "torchvision-r3d_18", "mmaction-i3d"])
def test_video_model_weights_are_named_as_such(tmp_path, make, found):
    # They were "265 entries missing (conv1.weight, ...)", and torchvision's r3d_18 "a ResNet-18".
    path = tmp_path / "video.pyth"
    torch.save(make(), path)
    with pytest.raises(SpecError) as err:
        load_resnet50_state(path)
    message = str(err.value)
    assert f"{path} holds a video model's weights, not a 2D ResNet-50's" in message and found in message
    assert "takes an ImageNet ResNet-50 state dict" in message


class _RunsCode:
    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


def test_files_that_are_no_checkpoint_are_named_and_never_unpickled(tmp_path):
    def error(name: str, data: bytes | None = None, obj: object = None) -> str:
        path = tmp_path / name
        if data is not None:
            path.write_bytes(data)
        else:
            torch.save(obj, path)
        with pytest.raises(SpecError) as err:
            load_resnet50_state(path)
        return str(err.value)

    marker = tmp_path / "code-ran"
    for protocol in (2, pickle.HIGHEST_PROTOCOL):  # an arbitrary class, in a plain pickle or a wrapper's value
        message = error("evil.pkl", pickle.dumps({"state_dict": _RunsCode(marker)}, protocol=protocol))
        assert "is a plain Python pickle (pickle.dump), not a file torch.save wrote (it names " in message
        assert "mkdir)" in message and "it is not unpickled" in message
    assert not marker.exists()
    caffe2 = {"blobs": {"conv1_w": np.zeros((2, 3, 7, 7), np.float32), "res_conv1_bn_s": np.ones(2, np.float32)}}
    message = error("R-50.pkl", pickle.dumps(caffe2, protocol=2))  # Detectron's ImageNet ResNet-50
    assert "is a Caffe2 checkpoint (a pickle of {'blobs': ...}) of an image model" in message and "conv1_w" in message
    good = tmp_path / "good.pth"
    torch.save(_numbered_state(), good)
    cut = error("cut.pth", good.read_bytes()[:4096])
    assert "cut.pth is cut short: a zip archive (torch.save's format) without its end" in cut
    assert "copy or download it again" in cut
    assert "is a web page or other markup" in error("page.pth", b"<!DOCTYPE html>\n<html>Sign in</html>")
    assert "neither a zip archive nor a pickle" in error("notes.pth", b"hello world\n")  # was "...checkpoint: 101"
    assert "holds an empty dict: no weights" in error("empty.pth", obj={})
    assert "holds an empty dict" in error("empty_wrapped.pth", obj={"state_dict": {}, "epoch": 0})
    safetensors = _safetensors({"conv1.weight": torch.zeros(4, 3)})
    assert "is not a readable safetensors file" in error("cut.safetensors", safetensors[:-8])
    unknown = error("net.pth", obj={"net": _numbered_state(), "epoch": 3})  # a wrapper not read: named with its type
    assert "its entries are 'net' (dict), 'epoch' (int), none a tensor" in unknown
    assert "under 'state_dict', 'model', 'model_state', 'model_state_dict'" in unknown
    vit = error("vit.pth", obj={"patch_embed.proj.weight": torch.zeros(1), "cls_token": torch.zeros(1)})
    assert "it holds 2 other entries, such as patch_embed.proj.weight, cls_token" in vit
    # Each of these ended in a traceback or an empty message.
    assert "holds a dict keyed by 0 (int), not a state dict" in error("numbered.pth", obj={0: torch.zeros(1)})
    state = _numbered_state()
    sparse = {**state, "conv1.weight": state["conv1.weight"].to_sparse()}
    assert "conv1.weight (sparse_coo layout)" in error("sparse.pth", obj=sparse)
    meta = {**state, "fc.bias": torch.empty(3, device="meta")}
    assert "fc.bias (no data: a meta tensor)" in error("meta.pth", obj=meta)
    complex_ = {**state, "fc.bias": torch.zeros(3, dtype=torch.complex64)}
    assert "fc.bias (complex)" in error("complex.pth", obj=complex_)
    other_zip = tmp_path / "other.zip"
    with zipfile.ZipFile(other_zip, "w") as archive:
        archive.writestr("notes.txt", "not weights")
    assert "a zip archive, but not one torch.save writes (no data.pkl in it: notes.txt)" in error(
        "other.pth", other_zip.read_bytes())


def _narrow_resnet50(width: float) -> dict[str, torch.Tensor]:
    torch.manual_seed(0)
    return backbone_state(resnet50_2d(4, width))


def _alter(key: str, value: torch.Tensor):
    return lambda state: {**state, key: value}


@pytest.mark.parametrize("width, alter, message", [
    # torchvision's ImageNet weights into a model that scale=smoke narrows, or a stand-in of another scale
    (0.25, None, "holds a ResNet-50 with 16 stem channels, but the model's stem has 4 (model.width scales the 64 of "
                 "a full-width one): no layer fits. Give the weights of a ResNet-50 of the model's width ('harness "
                 "models pretrain-2d --out PATH' with this run's scale= or model.width= trains one), or set "
                 "model.width=0.25."),
    (0.0625, _alter("conv1.weight", torch.zeros(4, 3, 3, 3)),
     "holds a layer of another shape than a torchvision ResNet-50's of the model's width: conv1.weight is "
     "(4, 3, 3, 3), which does not fit the model's 3D convolution (4, 3, 5, 7, 7)"),
    (0.0625, _alter("layer2.0.bn1.running_var", torch.ones(7)),  # was a RuntimeError of copy_, with its traceback
     "layer2.0.bn1.running_var is (7,), where the model's BN holds (8,)"),
    (0.0625, _alter("layer1.0.conv2.weight", torch.full((4, 4, 3, 3), float("nan"))),  # saved by a diverged training
     "holds weights that are not finite numbers (NaN or infinity) in 1 entry (layer1.0.conv2.weight)"),
])
def test_weights_that_do_not_fit_the_model_are_named_with_the_file_before_training(tmp_path, width, alter, message):
    state = _narrow_resnet50(width)
    path = tmp_path / "resnet50.pth"
    torch.save(alter(state) if alter else state, path)
    with pytest.raises(SpecError) as err:
        build_model(ModelSpec(name="i3d_r50", width=0.0625, pretrained=str(path)), 4)
    assert str(err.value).startswith(f"'model.pretrained': {path} ") and message in str(err.value)
