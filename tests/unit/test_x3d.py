"""X3D-S and X3D-M: the published architecture, counts and PyTorchVideo's checkpoints; multigrid shapes and BN."""

from __future__ import annotations

import json
import re

import pytest
import torch
from torch import nn

from harness.cli import main
from harness.models import build_model, multigrid_bns, pytorchvideo_names, set_bn_layout
from harness.models.flops import count_flops
from harness.models.x3d import X3D, X3DBlock
from harness.spec import ModelSpec

SMOKE_WIDTH = 0.0625


def _x3d(name: str = "x3d_m", classes: int = 400, width: float = 1.0) -> X3D:
    torch.manual_seed(classes)
    return build_model(ModelSpec(name=name, width=width), classes)


def test_the_published_widths_depths_and_blocks():
    """X3D-S/M (X3D paper §3; PySlowFast configs/Kinetics/X3D_M.yaml: width factor 2.0, depth factor 2.2,
    bottleneck factor 2.25): 24 stem channels; res2..res5 of 3, 5, 11, 7 blocks and 24, 48, 96, 192 channels around
    54, 108, 216, 432; squeeze-excitation in every other block; conv5 to 432, then 2048."""
    model = _x3d()
    assert (model.stem.conv_xy.kernel_size, model.stem.conv_t.kernel_size) == ((1, 3, 3), (5, 1, 1))
    assert model.stem.conv_t.groups == model.stem.conv_t.in_channels == 24
    stages = [model.res2, model.res3, model.res4, model.res5]
    assert [len(s) for s in stages] == [3, 5, 11, 7]
    assert [s[0].conv3.out_channels for s in stages] == [24, 48, 96, 192]
    assert [s[0].conv1.out_channels for s in stages] == [54, 108, 216, 432]
    for stage in stages:
        assert [block.se is not None for block in stage] == [i % 2 == 0 for i in range(len(stage))]
        assert all(b.conv2.groups == b.conv2.in_channels and b.conv2.kernel_size == (3, 3, 3) for b in stage)
        assert stage[0].conv2.stride == (1, 2, 2) and all(b.conv2.stride == (1, 1, 1) for b in stage[1:])
    assert [s[0].se.reduce.out_channels for s in stages] == [8, 8, 16, 32]  # 1/16, rounded to multiples of 8
    assert isinstance(model.res2[0].swish, nn.SiLU)
    assert (model.head.conv5.out_channels, model.head.lin5.out_channels, model.head.fc.in_features) == (432, 2048, 2048)
    assert isinstance(model.head.pool, nn.AdaptiveAvgPool3d)
    assert all(isinstance(m, nn.BatchNorm3d) for m in multigrid_bns(model))
    assert not [m for m in model.modules() if type(m) is nn.BatchNorm3d]


# Published counts (fvcore, one clip, conv multiply-adds, the convention of the model zoos): PySlowFast MODEL_ZOO.md
# lists X3D-M at 4.73 GFLOPs and X3D-S at 1.96, both 3.8M parameters; the X3D paper's 6.2 GFLOPs for X3D-M is the
# count at 16×256², the crop of its 3-crop test (4.73 × (256/224)²), and its 2.0 for X3D-S matches 13×160² (13×182²,
# the S config's 3-crop test crop, counts 2.72). PyTorchVideo's hub models hold 3,794,274 parameters, as these do.
PUBLISHED = [("x3d_m", 16, 224, 4.73), ("x3d_m", 16, 256, 6.2), ("x3d_s", 13, 160, 1.96)]


@pytest.mark.parametrize(("name", "frames", "crop", "gflops"), PUBLISHED)
def test_flops_and_parameters_match_the_published_counts(name, frames, crop, gflops):
    count = count_flops(_x3d(name), frames, crop)
    assert count.params == 3_794_274
    assert count.gflops_conv == pytest.approx(gflops, rel=0.02)
    assert count.gflops > count.gflops_conv  # BN and the classifier on top


# PyTorchVideo's X3D naming (pytorchvideo/models/x3d.py, resnet.py, fvcore's SqueezeExcitation), written from its
# module tree rather than from our mapping: the key of each entry, and which blocks have which parts.
PYTORCHVIDEO_X3D_KEY = re.compile(
    r"^(blocks\.0\.conv\.conv_(t|xy)|blocks\.0\.norm"
    r"|blocks\.[1-4]\.res_blocks\.\d+\.(branch1_conv|branch1_norm|branch2\.(conv|norm)_[ac]|branch2\.conv_b"
    r"|branch2\.norm_b\.0|branch2\.norm_b\.1\.block\.[02])"
    r"|blocks\.5\.pool\.(pre_conv|pre_norm|post_conv)|blocks\.5\.proj)"
    r"\.(weight|bias|running_mean|running_var|num_batches_tracked)$")


def _pytorchvideo_keys(depths=(3, 5, 11, 7)) -> list[str]:
    """Every module of PyTorchVideo's create_x3d (X3D-S/M) holding weights: a re-statement of its tree."""
    bn = ("weight", "bias", "running_mean", "running_var", "num_batches_tracked")
    keys = ["blocks.0.conv.conv_t.weight", "blocks.0.conv.conv_xy.weight", *(f"blocks.0.norm.{b}" for b in bn)]
    for stage, depth in enumerate(depths, start=1):
        for i in range(depth):
            block = f"blocks.{stage}.res_blocks.{i}"
            if i == 0:  # stride 2: a projection; its BN only where the width changes (not res2's 24 → 24)
                keys.append(f"{block}.branch1_conv.weight")
                keys += [f"{block}.branch1_norm.{b}" for b in bn] if stage > 1 else []
            keys += [f"{block}.branch2.conv_a.weight", *(f"{block}.branch2.norm_a.{b}" for b in bn),
                     f"{block}.branch2.conv_b.weight", *(f"{block}.branch2.norm_b.0.{b}" for b in bn)]
            if (i + 1) % 2:  # PyTorchVideo's rule for the squeeze-excitation
                keys += [f"{block}.branch2.norm_b.1.block.{j}.{p}" for j in (0, 2) for p in ("weight", "bias")]
            keys += [f"{block}.branch2.conv_c.weight", *(f"{block}.branch2.norm_c.{b}" for b in bn)]
    keys += ["blocks.5.pool.pre_conv.weight", *(f"blocks.5.pool.pre_norm.{b}" for b in bn),
             "blocks.5.pool.post_conv.weight", "blocks.5.proj.weight", "blocks.5.proj.bias"]
    return keys


@pytest.mark.parametrize("name", ["x3d_s", "x3d_m"])
def test_a_pytorchvideo_hub_checkpoint_starts_the_same_model(tmp_path, name):
    model = _x3d(name, classes=5)  # the published width: at smoke width some stages keep their width, BN-less
    names = pytorchvideo_names.module_names(model)
    ours_to_theirs = {ours: theirs for theirs, ours in names.items()}
    own = model.state_dict()
    theirs = {}
    for key, value in own.items():
        module, _, leaf = key.rpartition(".")
        theirs[f"{ours_to_theirs[module]}.{leaf}"] = value
    assert len(theirs) == len(_pytorchvideo_keys()) == 563
    assert sorted(theirs) == sorted(_pytorchvideo_keys())  # every entry, none more
    assert [k for k in theirs if not PYTORCHVIDEO_X3D_KEY.match(k)] == []
    # Every tensor its own number, so that an entry landing in another's place shows.
    numbered = {k: torch.full_like(v, float(i)) for i, (k, v) in enumerate(theirs.items())}
    path = tmp_path / f"{name.upper()}.pyth"
    torch.save({"model_state": numbered}, path)
    loaded = build_model(ModelSpec(name=name, pretrained=str(path)), 5).state_dict()
    values = {float(v.flatten()[0]) for v in loaded.values()}
    assert len(values) == len(loaded) == len(numbered)
    pairs = {"blocks.0.conv.conv_t.weight": "stem.conv_xy.weight",  # PyTorchVideo's conv_t is the 1×3×3 one
             "blocks.0.conv.conv_xy.weight": "stem.conv_t.weight", "blocks.0.norm.running_var": "stem.bn.running_var",
             "blocks.1.res_blocks.0.branch1_conv.weight": "res2.0.downsample.0.weight",
             "blocks.3.res_blocks.0.branch1_norm.running_mean": "res4.0.downsample.1.running_mean",
             "blocks.3.res_blocks.4.branch2.norm_b.1.block.0.bias": "res4.4.se.reduce.bias",
             "blocks.4.res_blocks.6.branch2.norm_b.1.block.2.weight": "res5.6.se.expand.weight",
             "blocks.4.res_blocks.5.branch2.norm_b.0.weight": "res5.5.bn2.weight",
             "blocks.2.res_blocks.3.branch2.conv_c.weight": "res3.3.conv3.weight",
             "blocks.5.pool.pre_conv.weight": "head.conv5.weight", "blocks.5.pool.post_conv.weight": "head.lin5.weight",
             "blocks.5.proj.bias": "head.fc.bias"}
    for their_key, our_key in pairs.items():
        assert torch.equal(numbered[their_key], loaded[our_key]), their_key


def test_outputs_equal_pytorchvideos_own_x3d_with_its_weights(tmp_path):
    """Where PyTorchVideo is installed (not a dependency): its x3d_m with random weights and BN statistics, saved as
    its hub checkpoints are, gives the logits of the harness's x3d_m started from that file at 16×224², the clip
    size its head's fixed pooling window is made for."""
    hub = pytest.importorskip("pytorchvideo.models.hub.x3d")
    torch.manual_seed(0)
    reference = hub.x3d_m(pretrained=False).eval()
    reference.blocks[5].activation = None  # its hub head may end in a softmax: compare logits
    for m in reference.modules():
        if isinstance(m, nn.BatchNorm3d):
            m.running_mean.normal_(0, 0.1)
            m.running_var.uniform_(0.5, 1.5)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.normal_(0, 0.1)
    path = tmp_path / "X3D_M.pyth"
    torch.save({"model_state": reference.state_dict()}, path)
    ours = build_model(ModelSpec(name="x3d_m", pretrained=str(path)), 400).eval()
    clip = torch.randn(1, 3, 16, 224, 224)
    with torch.no_grad():
        assert torch.allclose(ours(clip), reference(clip), atol=1e-5)


def test_a_training_step_at_two_multigrid_shapes_with_sub_batch_bn():
    """Two shapes of a multigrid cycle (fewer frames and pixels at a larger batch, then the base shape), BN over
    sub-batches of 2 clips: one model, no rebuild, finite gradients everywhere, running statistics moved."""
    torch.manual_seed(0)
    model = _x3d("x3d_m", classes=4, width=SMOKE_WIDTH).train()
    bns = multigrid_bns(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    before = model.stem.bn.running_mean.clone()
    for batch, splits, t, s in [(8, 4, 4, 32), (4, 2, 8, 64)]:
        set_bn_layout(bns, splits=splits, sync=1)
        loss = nn.functional.cross_entropy(model(torch.randn(batch, 3, t, s, s)), torch.randint(0, 4, (batch,)))
        optimizer.zero_grad()
        loss.backward()
        assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
        optimizer.step()
    assert not torch.equal(before, model.stem.bn.running_mean)
    assert all(isinstance(b, X3DBlock) for b in model.res3)


@pytest.mark.parametrize("name", ["x3d_s", "x3d_m"])
def test_models_check_passes_at_every_planned_shape_of_its_recipe(capsys, name):
    assert main(["models", "check", name, f"recipe=k400_{name}", "scale=smoke", "--device", "cpu", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["failed"] == 0
    # the long cycle's frame counts and the short cycle's sizes
    assert len({shape["t"] for shape in result["shapes"]}) >= 2 and len({shape["s"] for shape in result["shapes"]}) >= 3
