"""Every registered model, driven by the registry; the registry's rules; user models; speed options."""

import pytest
import torch
from torch import nn

from harness.cli import main
from harness.models import MultigridBatchNorm3d, build_model, get_entry, list_models, multigrid_bns, register_model
from harness.spec import ModelSpec, SpecError

TINY = 1 / 16  # widths of the harness's own models in CPU tests


def _tiny(name: str, classes: int = 5) -> nn.Module:
    width = TINY if ModelSpec(name=name).takes_width else 1.0  # the harness's own models narrow, torchvision's not
    return build_model(ModelSpec(name=name, width=width, dropout=0.5), classes)


def _shapes(name: str) -> list[tuple[int, int]]:
    t = max(get_entry(name).min_frames, 4)
    return [(t, 32), (2 * t, 48)]


@pytest.mark.parametrize("name", list_models())
def test_every_model_trains_at_two_shapes(name):
    torch.manual_seed(0)
    model = _tiny(name).train()
    for t, s in _shapes(name):
        logits = model(torch.randn(2, 3, t, s, s))
        assert logits.shape == (2, 5)
        logits.sum().backward()
        grads = [p.grad for p in model.parameters() if p.requires_grad]
        assert all(g is not None and torch.isfinite(g).all() for g in grads)
        model.zero_grad()
    if not name.startswith(("swin", "mvit")):  # LayerNorm models
        assert multigrid_bns(model), "BatchNorm3d must be multigrid-aware"
        assert not [m for m in model.modules() if type(m) is nn.BatchNorm3d]


def test_every_model_trains_where_multigrid_shrinks_its_feature_maps_to_a_pixel():
    """Small crops at a coarse long-cycle shape (smoke scale: 11 px) leave the last stages 1 pixel wide; the
    non-local blocks' 2×2 pooling has no window there and keeps every position instead."""
    for name in ("i3d_nl_r50", "i3d_r50", "slowfast_r50_8x8"):
        model = _tiny(name).train()
        t = max(get_entry(name).min_frames, 4)
        model(torch.randn(2, 3, t, 11, 11)).sum().backward()


def test_paper_models_are_registered():
    for name in ("slowfast_r50_4x16", "slowfast_r50_8x8", "slowfast_r50_16x8", "slowfast_r50_16f", "i3d_r50",
                 "i3d_nl_r50"):
        assert get_entry(name).paper
    assert {"r3d_18", "mc3_18", "r2plus1d_18", "s3d"} <= set(list_models())


def test_registry_is_strict():
    with pytest.raises(ValueError, match="registered twice"):
        register_model("i3d_r50")(lambda **kw: nn.Identity())
    with pytest.raises(SpecError, match="Did you mean 'slowfast_r50_8x8'"):
        get_entry("slowfast_r50_8x4")


def test_user_model_by_import_path():
    model = build_model(ModelSpec(target="tests.unit.user_models:tiny_c3d"), 7)
    assert model(torch.randn(2, 3, 4, 16, 16)).shape == (2, 7)
    assert isinstance(model[1], MultigridBatchNorm3d)  # its BN was converted
    with pytest.raises(SpecError, match="no attribute 'tiny_c3'.*Did you mean 'tiny_c3d'"):
        build_model(ModelSpec(target="tests.unit.user_models:tiny_c3"), 7)
    with pytest.raises(SpecError, match="cannot import module"):
        build_model(ModelSpec(target="no_such_pkg.models:f"), 7)
    with pytest.raises(SpecError, match="pkg.module:factory"):
        build_model(ModelSpec(target="tests.unit.user_models"), 7)
    with pytest.raises(SpecError, match="not a torch nn.Module"):
        build_model(ModelSpec(target="tests.unit.user_models:not_a_model"), 7)


@pytest.mark.parametrize(("factory", "message"), [
    ("without_num_classes", "cannot be called as without_num_classes(num_classes=4, dropout=0.5, width=0.0625): "
                            "got an unexpected keyword argument 'num_classes'"),
    ("needs_depth", "missing a required argument: 'depth'"),
    ("NOT_A_FACTORY", "is not callable (a int)"),
])
def test_models_check_names_a_user_factory_the_harness_cannot_call(factory, message, capsys):
    code = main(["models", "check", f"tests.unit.user_models:{factory}", "scale=smoke"])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
    assert "must accept the keyword arguments num_classes, dropout and width" in err or "not callable" in err


def test_models_check_names_a_target_without_its_factory(capsys):
    assert main(["models", "check", "tests.unit.user_models:", "scale=smoke"]) == 2
    err = capsys.readouterr().err  # was read as the YAML mapping {'tests.unit.user_models': None}
    assert "'model.target' must look like 'pkg.module:factory', got 'tests.unit.user_models:'" in err


def test_width_only_for_own_models():
    with pytest.raises(SpecError, match="model.width"):
        build_model(ModelSpec(name="r3d_18", width=0.5), 5)


def test_slowfast_slow_pathway_frames():
    model = _tiny("slowfast_r50_8x8")
    clip = torch.arange(32.0).view(1, 1, 32, 1, 1).expand(1, 3, 32, 2, 2)
    slow, fast = model.pathways(clip)
    assert slow[0, 0, :, 0, 0].tolist() == torch.linspace(0, 31, 8).long().float().tolist()
    assert fast.shape[2] == 32
    with pytest.raises(ValueError, match="at least 4 frames"):
        model.pathways(clip[:, :, :3])


def test_channels_last_and_bf16_autocast():
    torch.manual_seed(0)
    model = _tiny("slowfast_r50_8x8").eval()
    clip = torch.randn(2, 3, 8, 32, 32)
    reference = model(clip)
    model_cl = model.to(memory_format=torch.channels_last_3d)
    out = model_cl(clip.to(memory_format=torch.channels_last_3d))
    torch.testing.assert_close(out, reference, rtol=1e-4, atol=1e-4)
    model.train()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(clip)
    assert logits.dtype == torch.bfloat16
    assert torch.isfinite(logits).all()
    # Backward runs; its finiteness is checked on the GPU (test_gpu_models.py): torch 2.14's CPU bf16
    # conv3d weight gradient is non-finite for 3×1×1 kernels on 2-frame inputs, in plain torch too.
    logits.float().sum().backward()


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_bf16_channels_last_training_step_on_gpu():
    torch.manual_seed(0)
    model = build_model(ModelSpec(name="slowfast_r50_8x8"), 5).cuda().to(memory_format=torch.channels_last_3d)
    clip = torch.randn(4, 3, 16, 112, 112, device="cuda").to(memory_format=torch.channels_last_3d)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(clip)
    logits.float().sum().backward()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)


@pytest.mark.parametrize("layout", [torch.contiguous_format, torch.channels_last_3d])
def test_a_padded_stem_convolution_is_the_same_convolution_and_gradient(layout):
    """model.pad_stem_channels: zero channels added to input and weight change no sum, and the weight's real
    channels get the same gradient (the padding is rebuilt from them every call)."""
    from harness.models.resnet3d import padded_conv3d

    torch.manual_seed(0)
    conv = nn.Conv3d(3, 8, (5, 7, 7), stride=(1, 2, 2), padding=(2, 3, 3), bias=False)
    x = torch.randn(2, 3, 4, 20, 20).contiguous(memory_format=layout)
    plain = conv(x)
    plain.square().sum().backward()
    grad, conv.weight.grad = conv.weight.grad.clone(), None
    padded = padded_conv3d(x, conv, 8)
    padded.square().sum().backward()
    assert torch.allclose(padded, plain, atol=1e-5) and padded.is_contiguous(memory_format=layout)
    assert conv.weight.grad.shape == (8, 3, 5, 7, 7) and torch.allclose(conv.weight.grad, grad, rtol=1e-4, atol=1e-4)


def test_stem_padding_is_set_on_every_stem_and_leaves_the_parameters_alone():
    from harness.models.resnet3d import StemConv3d

    plain = build_model(ModelSpec(name="slowfast_r50_8x8", width=TINY), 5)
    padded = build_model(ModelSpec(name="slowfast_r50_8x8", width=TINY, pad_stem_channels=8), 5)
    stems = [m for m in padded.modules() if isinstance(m, StemConv3d)]
    assert len(stems) == 2 and {m.pad_channels for m in stems} == {8}  # the slow and the fast pathway's
    assert {m.pad_channels for m in plain.modules() if isinstance(m, StemConv3d)} == {0}
    assert {k: v.shape for k, v in plain.state_dict().items()} == {k: v.shape for k, v in padded.state_dict().items()}


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_a_padded_stem_trains_as_the_unpadded_one_on_gpu():
    torch.manual_seed(0)
    # no dropout: the two forward passes would draw different masks
    models = [build_model(ModelSpec(name="i3d_r50", pad_stem_channels=pad, dropout=0.0), 5) for pad in (0, 8)]
    models[1].load_state_dict(models[0].state_dict())
    clip = torch.randn(2, 3, 8, 112, 112, device="cuda").to(memory_format=torch.channels_last_3d)
    grads = []
    # In fp32 without TF32 the padded convolution is the same arithmetic up to summation order. (Under bf16 the
    # two models' stem gradients differed by 10% on an H100: rounding differences grow through 50 random layers.)
    with torch.backends.cudnn.flags(enabled=True, benchmark=False, deterministic=False, allow_tf32=False):
        for model in models:
            model = model.cuda().to(memory_format=torch.channels_last_3d).train()
            loss = model(clip).square().sum()
            loss.backward()
            grads.append(model.stem.conv1.weight.grad)
    assert (grads[1] - grads[0]).norm() < 1e-3 * grads[0].norm()


@pytest.mark.parametrize(("overrides", "refused"), [
    (["multigrid.bn_base_size=1"], True),  # one-clip BN groups at the smoke plan's smallest shapes
    (["multigrid.bn_base_size=2"], False),
])
def test_bn_over_one_clip_that_a_model_reduces_to_one_value_is_refused_before_training(overrides, refused):
    # It passed the settings' checks, then the step failed with a traceback a few iterations in.
    from harness import cli_train
    from harness.config import compose
    from harness.models.check import require_bn_statistics
    from harness.schedule import build_plan

    plan = build_plan(compose(cli_train.scaled_overrides(["scale=smoke", *overrides])))
    if not refused:
        require_bn_statistics(plan)
        return
    with pytest.raises(SpecError, match=r"BN statistics over one clip \(multigrid.bn_base_size=1.*"
                                        r"multigrid.bn_base_size=2 or more"):
        require_bn_statistics(plan)
