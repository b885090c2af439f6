"""ImageNet inflation (harness.models.inflate): a constant clip gives the 2D features; weights that misfit are named."""

import pytest
import torch
import torchvision
from torch import nn

from harness.models import build_model
from harness.models.inflate import load_resnet50_state
from harness.spec import ModelSpec, SpecError


@pytest.fixture(scope="module")
def resnet50_file(tmp_path_factory):
    torch.manual_seed(0)
    net = torchvision.models.resnet50()
    for m in net.modules():  # non-trivial BN statistics, so copying them matters
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.normal_(0, 0.1)
            m.running_var.uniform_(0.5, 1.5)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.normal_(0, 0.1)
    path = tmp_path_factory.mktemp("weights") / "resnet50.pth"
    torch.save({"state_dict": {f"module.{k}": v for k, v in net.state_dict().items()}}, path)
    return path, net.eval()


@pytest.mark.parametrize(("name", "frames"), [("i3d_r50", 32), ("i3d_nl_r50", 32), ("slowfast_r50_8x8", 128)])
def test_constant_clip_gives_2d_features(resnet50_file, name, frames):
    path, net2d = resnet50_file
    image = torch.randn(1, 3, 64, 64)
    with torch.no_grad():
        expected = nn.Sequential(*list(net2d.children())[:-2])(image)[:, :, None]  # 1×2048×1×2×2
        model = build_model(ModelSpec(name=name, pretrained=str(path)), 10).eval()
        features = model.features(image.unsqueeze(2).expand(-1, -1, frames, -1, -1).contiguous())[0]
    # Zero temporal padding changes the border frames; the centre frames see only real frames.
    centre = features.shape[2] // 2
    middle = features[:, :, centre - 1: centre + 1]
    error = (middle - expected).abs().max() / expected.abs().max()
    assert error < 1e-5


def test_pretrained_path_errors(tmp_path):
    with pytest.raises(SpecError, match="no file at"):
        load_resnet50_state(tmp_path / "missing.pth")
    junk = tmp_path / "junk.pth"
    junk.write_text("not a checkpoint")
    with pytest.raises(SpecError, match="not a readable PyTorch checkpoint"):
        load_resnet50_state(junk)
    empty = tmp_path / "empty.pth"  # a copy that never started: torch's error says nothing
    empty.write_bytes(b"")
    with pytest.raises(SpecError, match=r"empty.pth is not a readable PyTorch checkpoint: it is empty \(0 bytes\)"):
        load_resnet50_state(empty)
    wrong = tmp_path / "wrong.pth"
    torch.save({"fc.weight": torch.zeros(1)}, wrong)
    with pytest.raises(SpecError, match="does not hold a torchvision ResNet-50"):
        load_resnet50_state(wrong)


def _fake_state(arch: str = "resnet50") -> dict[str, torch.Tensor]:
    """A torchvision ResNet's state dict keys with one-element tensors (the loader's checks read keys only)."""
    with torch.device("meta"):
        keys = list(getattr(torchvision.models, arch)().state_dict())
    return {k: torch.zeros(1) for k in keys}


@pytest.mark.parametrize("wrap", [
    lambda s: {"meta": {"epoch": 100}, "state_dict": {f"backbone.{k}": v for k, v in s.items() if "fc" not in k}
               | {"head.fc.weight": torch.zeros(1)}},  # mmpretrain / mmaction: the backbone under 'backbone.'
    lambda s: {"model_state": s, "epoch": 3},  # pycls / PySlowFast
    lambda s: {"state_dict": {f"model.{k}": v for k, v in s.items()}, "epoch": 1},  # Lightning
], ids=["mmpretrain", "pycls", "lightning"])
def test_pretrained_weights_as_other_tools_save_them(tmp_path, wrap):
    path = tmp_path / "w.pth"
    torch.save(wrap(_fake_state()), path)
    state = load_resnet50_state(path)
    assert "conv1.weight" in state and "layer4.2.bn3.running_var" in state


def test_pretrained_weights_that_do_not_fit_are_named_before_training(tmp_path):
    def error(obj) -> str:
        path = tmp_path / "w.pth"
        torch.save(obj, path)
        with pytest.raises(SpecError) as err:
            load_resnet50_state(path)
        return str(err.value)

    state = _fake_state()
    del state["layer2.0.bn1.running_var"]  # was a KeyError in the middle of inflation
    assert "1 entry missing (layer2.0.bn1.running_var)" in error(state)
    assert "holds ResNet-18 (2, 2, 2, 2 basic blocks per stage)" in error(_fake_state("resnet18"))
    assert "holds ResNet-101 (3, 4, 23, 3 bottleneck blocks" in error(_fake_state("resnet101"))  # was inflated
    assert "holds a list, not a state dict" in error([1, 2])  # was an AttributeError
    moco = {f"module.encoder_{e}.{k}": v for e in ("q", "k") for k, v in _fake_state().items()}
    assert "holds 2 ResNets (under 'module.encoder_k.', 'module.encoder_q.')" in error({"state_dict": moco})
    message = error(nn.Linear(2, 2))  # a pickled module: torch's weights-only refusal, explained
    assert "pickled Python objects (torch.nn.modules.linear.Linear" in message
    assert "torch.save(model.state_dict(), path)" in message
