"""ImageNet inflation's defining property, and FLOP/parameter counts against the published ones."""

import json
import subprocess

import pytest
import torch
import torchvision
from torch import nn

from harness.models import build_model
from harness.models.flops import count_flops
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


# Official model-zoo counts (SlowFast model zoo; fvcore, 1 clip, eval, conv only, 256² crop).
PUBLISHED = [("slowfast_r50_8x8", 32, 34.57e6, 65.7), ("slowfast_r50_4x16", 32, 34.48e6, 36.1)]


@pytest.mark.parametrize(("name", "frames", "params", "gflops"), PUBLISHED)
def test_flops_match_published_counts(name, frames, params, gflops):
    count = count_flops(build_model(ModelSpec(name=name), 400), frames, 256)
    assert count.params == pytest.approx(params, rel=0.01)
    assert count.gflops_conv == pytest.approx(gflops, rel=0.01)
    assert count.gflops > count.gflops_conv



# I3D-NL R50 (5 non-local blocks): PySlowFast's MODEL_ZOO lists I3D NLN R50 8×8 (Kinetics/c2/I3D_NLN_8x8_R50) with
# accuracy but no FLOP count, so these are our own fvcore counts at 256² (8 frames, the model's default; 16, the
# recipe's). Parameters equal the reference model's (35.40M). A non-local block of width C over P positions costs
# θ and the output conv C·C/2·P each and, with φ and g after the 1×2×2 max-pool as in the reference, C·C/2·P/4
# each: 1.25·C²·P conv FLOPs, 6.71 GFLOPs for the five blocks at 8×256², so conv-only is I3D R50's 37.10 + 6.71 =
# 43.81. (With φ and g convolving before the pool, as this block once did, it was 2·C²·P a block: 47.84, 9% more.)
# Conv-only is the convention of the zoo counts above; the total adds the two attention einsums (5.10 GFLOPs at
# 8 frames, 20.40 at 16: quadratic in T·H·W), which is why it grows faster than the frames.
NONLOCAL = [(8, 35.40e6, 43.81, 49.10), (16, 35.40e6, 87.63, 108.40)]


@pytest.mark.parametrize(("frames", "params", "gflops_conv", "gflops"), NONLOCAL)
def test_i3d_nl_flops(frames, params, gflops_conv, gflops):
    count = count_flops(build_model(ModelSpec(name="i3d_nl_r50"), 400), frames, 256)
    assert count.params == pytest.approx(params, rel=1e-3)
    assert count.gflops_conv == pytest.approx(gflops_conv, rel=1e-3)
    assert count.gflops == pytest.approx(gflops, rel=1e-3)
    # The blocks' conv FLOPs in the reference's order: res3 (C=512, 2 blocks) and res4 (C=1024, 3 blocks),
    # after the temporal pool halves T; 1.25·C²·P a block.
    t = frames // 2
    by_hand = 1.25 * (2 * 512**2 * t * (256 // 8) ** 2 + 3 * 1024**2 * t * (256 // 16) ** 2) / 1e9
    plain = count_flops(build_model(ModelSpec(name="i3d_r50"), 400), frames, 256)
    assert count.gflops_conv - plain.gflops_conv == pytest.approx(by_hand, rel=1e-6)


def test_flops_cli_json():
    out = subprocess.run(["harness", "flops", "i3d_r50", "--frames", "8", "--crop", "224", "--json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert {"params", "gflops", "gflops_conv"} <= set(result)
    assert result["params"] == pytest.approx(28.04e6, rel=0.01)
    # Conv FLOPs scale with pixels (the feature maps divide evenly at 224 and 256).
    assert result["gflops_conv"] == pytest.approx(37.1 * (224 / 256) ** 2, rel=0.01)


def test_mvit_v2_s_counts():
    """MViTv2-S 16×4 at 16×224²: 34.5M parameters and 64 GFLOPs published (the MViTv2 paper's Kinetics-400
    results, PySlowFast's MODEL_ZOO.md).
    fvcore's total also counts LayerNorm (0.233 GFLOPs); without it the count is torchvision's 64.224 (its
    MViT_V2_S_Weights '_ops'), and the attention's own matmuls are 14.4 of the 64."""
    count = count_flops(build_model(ModelSpec(name="mvit_v2_s"), 400), 16, 224)
    assert count.params == 34_537_744  # torchvision's num_params
    assert count.gflops == pytest.approx(64.457, abs=1e-3)
    assert count.gflops - count.by_operator["layer_norm"] == pytest.approx(64.224, abs=1e-3)
    assert count.by_operator["matmul"] == pytest.approx(14.430, abs=1e-3)
