"""model.pretrained naming a video model's weights: fine-tuning from the same model, as the paper's SSv2 and Charades
recipes start from Kinetics. The harness's own checkpoints and PySlowFast's load as they are (the classifier
afresh where the classes differ); what does not fit is named, with the file, before training."""

from __future__ import annotations

import logging
import os
import pickle
import re

import pytest
import torch

from harness.models import build_model, pytorchvideo_names
from harness.models.pyslowfast_names import module_names
from harness.models.registry import get_entry
from harness.spec import ModelSpec, SpecError

WIDTH = 0.125

# PySlowFast's naming scheme (slowfast/models/video_model_builder.py, resnet_helper.py, stem_helper.py,
# nonlocal_helper.py, head_helper.py), written from its documentation of the layers rather than from our mapping.
PYSLOWFAST_KEY = re.compile(
    r"^(s1\.pathway[01]_stem\.(conv|bn)|s[1-4]_fuse\.(conv_f2s|bn)"
    r"|s[2-5]\.pathway[01]_res\d+\.(branch1|branch1_bn|branch2\.[abc]|branch2\.[abc]_bn)"
    r"|s[34]\.pathway0_nonlocal\d\.(conv_theta|conv_phi|conv_g|conv_out|bn)|head\.projection)"
    r"\.(weight|bias|running_mean|running_var|num_batches_tracked)$")


def _model(name: str, classes: int = 5, width: float = WIDTH) -> torch.nn.Module:
    torch.manual_seed(classes)
    return get_entry(name).factory(num_classes=classes, dropout=0.5, width=width)


def _numbered(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The model's state dict with every entry filled with its own index, so a mapping that mixes entries shows."""
    return {k: torch.full_like(v, float(i)) for i, (k, v) in enumerate(model.state_dict().items())}


def _as_pyslowfast(model: torch.nn.Module, state: dict[str, torch.Tensor],
                   names=module_names) -> dict[str, torch.Tensor]:
    """`state` under another implementation's names (`names`: PySlowFast's by default, else PyTorchVideo's)."""
    ours_to_theirs = {ours: theirs for theirs, ours in names(model).items()}
    out = {}
    for key, value in state.items():
        module, _, leaf = key.rpartition(".")
        out[f"{ours_to_theirs[module]}.{leaf}"] = value
    return out


def _spec(name: str, path, width: float = WIDTH) -> ModelSpec:
    return ModelSpec(name=name, width=width, pretrained=str(path))


@pytest.mark.parametrize("name, entries", [("slowfast_r50_8x8", 662), ("i3d_nl_r50", 385), ("i3d_r50", 320)])
def test_pyslowfast_names_follow_its_scheme_and_cover_every_entry(name, entries):
    with torch.device("meta"):
        model = _model(name, classes=400, width=1.0)
    theirs = _as_pyslowfast(model, model.state_dict())
    assert len(theirs) == entries  # PySlowFast's SlowFast R50 and I3D-NL R50 hold 662 and 385 entries
    assert [k for k in theirs if not PYSLOWFAST_KEY.match(k)] == []
    # Where PySlowFast puts what (its configs: non-local blocks after bottlenecks 1, 3 of res3 and 1, 3, 5 of res4).
    if name == "slowfast_r50_8x8":
        assert theirs["s1_fuse.conv_f2s.weight"].shape == (16, 8, 7, 1, 1)
        assert theirs["s4_fuse.conv_f2s.weight"].shape == (256, 128, 7, 1, 1)
        assert theirs["s1.pathway1_stem.conv.weight"].shape == (8, 3, 5, 7, 7)
        assert theirs["s4.pathway0_res0.branch2.a.weight"].shape == (256, 640, 3, 1, 1)
        assert theirs["head.projection.weight"].shape == (400, 2304)
        assert not any(k.startswith("s5_fuse") for k in theirs)
        assert {k.split(".")[1] for k in theirs if ".branch1." in k} == {"pathway0_res0", "pathway1_res0"}
    if name == "i3d_nl_r50":
        assert sorted({k.split(".")[0] + "." + k.split(".")[1] for k in theirs if "nonlocal" in k}) == [
            "s3.pathway0_nonlocal1", "s3.pathway0_nonlocal3", "s4.pathway0_nonlocal1", "s4.pathway0_nonlocal3",
            "s4.pathway0_nonlocal5"]
        assert theirs["s4.pathway0_nonlocal5.conv_out.weight"].shape == (1024, 512, 1, 1, 1)


@pytest.mark.parametrize("name", ["slowfast_r50_8x8", "i3d_nl_r50"])
def test_a_pyslowfast_checkpoint_starts_the_same_model(tmp_path, name):
    source = _model(name)
    state = _numbered(source)
    path = tmp_path / "checkpoint_epoch_00196.pyth"  # as PySlowFast's save_checkpoint writes it
    torch.save({"epoch": 196, "model_state": _as_pyslowfast(source, state), "optimizer_state": {},
                "cfg": "TRAIN:\n  ENABLE: True\n"}, path)
    loaded = build_model(_spec(name, path), num_classes=5).state_dict()
    assert loaded.keys() == state.keys()
    assert [k for k in state if not torch.equal(loaded[k], state[k])] == []
    # Spot checks written out by hand, one per kind of layer.
    pairs = {"s1.pathway0_stem.conv.weight": "slow_stem.conv1.weight",
             "s3_fuse.bn.running_var": "fusions.1.bn.running_var",
             "s4.pathway1_res0.branch1_bn.bias": "fast_stages.2.0.downsample.1.bias",
             "s5.pathway0_res2.branch2.c.weight": "slow_stages.3.2.conv3.weight",
             "head.projection.bias": "head.fc.bias"} if name.startswith("slowfast") else {
             "s1.pathway0_stem.bn.running_mean": "stem.bn1.running_mean",
             "s3.pathway0_nonlocal1.conv_theta.bias": "res3.2.theta.bias",
             "s4.pathway0_nonlocal5.bn.weight": "res4.8.bn.weight",
             "s4.pathway0_res4.branch2.b.weight": "res4.6.conv2.weight",
             "head.projection.weight": "head.fc.weight"}
    theirs = torch.load(path)["model_state"]
    for their_key, our_key in pairs.items():
        assert torch.equal(theirs[their_key], loaded[our_key]), their_key


def test_a_harness_checkpoint_fine_tunes_with_a_fresh_classifier_for_other_classes(tmp_path, caplog):
    source = _model("slowfast_r50_8x8", classes=5)
    state = _numbered(source)
    path = tmp_path / "checkpoint_000000400.pt"  # as harness train writes them, here from a DDP model
    torch.save({"model": {f"module.{k}": v for k, v in state.items()}, "optimizer": {}, "iteration": 400,
                "run_id": "abc"}, path)
    same = build_model(_spec("slowfast_r50_8x8", path), num_classes=5).state_dict()
    assert all(torch.equal(same[k], state[k]) for k in state)
    with caplog.at_level(logging.INFO, logger="harness.models"):
        other = build_model(_spec("slowfast_r50_8x8", path), num_classes=7).state_dict()
    assert all(torch.equal(other[k], state[k]) for k in state if not k.startswith("head.fc."))
    assert other["head.fc.weight"].shape == (7, state["head.fc.weight"].shape[1])
    assert not (other["head.fc.weight"] == state["head.fc.weight"][0, 0]).all()
    assert "every layer but the classifier (5 classes there, 7 here, initialised afresh)" in caplog.text


def test_a_stem_saved_padded_loads_into_an_unpadded_model(tmp_path):
    source = _model("i3d_r50")
    state = _numbered(source)
    stem = state["stem.conv1.weight"]
    padded = torch.cat([stem, torch.zeros(stem.shape[0], 5, *stem.shape[2:])], dim=1)  # model.pad_stem_channels=8
    torch.save({**state, "stem.conv1.weight": padded}, tmp_path / "w.pt")
    loaded = build_model(_spec("i3d_r50", tmp_path / "w.pt"), num_classes=5).state_dict()
    assert torch.equal(loaded["stem.conv1.weight"], stem)


def _error(tmp_path, name: str, content: dict, width: float = WIDTH) -> str:
    path = tmp_path / "w.pt"
    torch.save(content, path)
    with pytest.raises(SpecError) as err:
        build_model(_spec(name, path, width), num_classes=5)
    message = str(err.value)
    assert "'model.pretrained'" in message and str(path) in message
    return message


def test_video_weights_that_do_not_fit_are_named_before_training(tmp_path):
    slowfast = _numbered(_model("slowfast_r50_8x8"))
    message = _error(tmp_path, "i3d_r50", slowfast)
    assert "another model's weights: none of the I3D's entries is there" in message and "slow_stem" in message
    message = _error(tmp_path, "slowfast_r50_8x8", slowfast, width=0.25)
    assert "of another shape" in message and "slow_stem.conv1.weight (8, 3, 1, 7, 7)" in message
    broken = {**slowfast, "fusions.0.conv.weight": torch.full_like(slowfast["fusions.0.conv.weight"], float("nan"))}
    assert "not finite numbers" in _error(tmp_path, "slowfast_r50_8x8", broken) and "fusions.0.conv.weight" in \
        _error(tmp_path, "slowfast_r50_8x8", broken)
    partial = {k: v for k, v in slowfast.items() if not k.startswith("fast_stages.3.")}
    message = _error(tmp_path, "slowfast_r50_8x8", partial)
    assert "of the model's entries missing (fast_stages.3.0.conv1.weight" in message
    extra = {**slowfast, "head.extra.weight": torch.zeros(3)}
    assert "1 the model does not have (head.extra.weight)" in _error(tmp_path, "slowfast_r50_8x8", extra)
    # Another implementation's names that the harness does not read (MMAction2's): none of the model's entries.
    mmaction = {"backbone.slow_path.conv1.conv.weight": torch.zeros(1, 1, 1, 1, 1)}
    assert "none of the SlowFast's entries" in _error(tmp_path, "slowfast_r50_8x8", mmaction)


def test_pyslowfast_weights_are_read_for_its_models_only(tmp_path):
    theirs = {"s1.pathway0_stem.conv.weight": torch.zeros(64, 3, 3, 7, 7)}
    message = _error(tmp_path, "r3d_18", {"model_state": theirs}, width=1.0)
    assert "holds PySlowFast's weights, which are read for the slowfast_* and i3d_* models" in message


BN_BLOB = {"weight": "s", "bias": "b", "running_mean": "rm", "running_var": "riv"}
R50_BLOCKS = {2: 3, 3: 4, 4: 6, 5: 3}


def _caffe2_blob(theirs: str) -> str | None:
    """The Caffe2 blob name of a PySlowFast entry, from the layout of PySlowFast's Caffe2 model zoo files (written
    here in the other direction from the reader's); None for what Caffe2 does not keep (BN's batch count)."""
    module, _, tensor = theirs.rpartition(".")
    if tensor == "num_batches_tracked":
        return None
    bn = module.endswith("bn")
    suffix = BN_BLOB[tensor] if bn else {"weight": "w", "bias": "b"}[tensor]
    if module == "head.projection":
        return f"pred_{suffix}"
    if stem := re.match(r"s1\.pathway(\d)_stem\.(conv|bn)$", module):
        t = "t_" if stem[1] == "1" else ""
        return f"{t}res_conv1_bn_{suffix}" if stem[2] == "bn" else f"{t}conv1_{suffix}"
    if fuse := re.match(r"s(\d)_fuse\.(conv_f2s|bn)$", module):
        stage = int(fuse[1])
        base = "t_pool1_subsample" if stage == 1 else f"t_res{stage}_{R50_BLOCKS[stage] - 1}_branch2c_bn_subsample"
        return f"{base}_bn_{suffix}" if bn else f"{base}_{suffix}"
    if res := re.match(r"s(\d)\.pathway(\d)_res(\d+)\.(branch1|branch1_bn|branch2\.([abc])(_bn)?)$", module):
        t = "t_" if res[2] == "1" else ""
        part = "branch1" if res[4].startswith("branch1") else f"branch2{res[5]}"
        return f"{t}res{res[1]}_{res[3]}_{part}{'_bn' if bn else ''}_{suffix}"
    if nl := re.match(r"s(\d)\.pathway0_nonlocal(\d+)\.(conv_(theta|phi|g|out)|bn)$", module):
        return f"nonlocal_conv{nl[1]}_{nl[2]}_{nl[4] or 'bn'}_{suffix}"
    raise AssertionError(f"no Caffe2 name for {theirs}")


@pytest.mark.parametrize("name", ["slowfast_r50_8x8", "i3d_nl_r50"])
def test_a_caffe2_model_zoo_file_starts_the_same_model(tmp_path, caplog, name):
    import numpy as np

    source = _model(name, classes=400)
    state = _numbered(source)
    blobs = {_caffe2_blob(k): v.numpy() for k, v in _as_pyslowfast(source, state).items() if _caffe2_blob(k)}
    blobs |= {"res2_0_branch2a_w_momentum": np.zeros(3, np.float32), "lr": np.float32(0.1),
              "model_iter": np.int64(196000)}  # the solver's state, which Caffe2 keeps beside the weights
    blobs["data_mean"] = np.zeros(3, np.float32)  # a blob of no model part: left out, and said
    path = tmp_path / "SLOWFAST_8x8_R50.pkl"
    path.write_bytes(pickle.dumps({"blobs": blobs}, protocol=2))  # Python 2's highest protocol, which Caffe2 used
    with caplog.at_level(logging.INFO, logger="harness.models"):
        loaded = build_model(_spec(name, path), num_classes=7).state_dict()
    assert "1 Caffe2 blob(s) of no model part left out (data_mean)" in caplog.text
    kept = [k for k in state if not k.startswith("head.fc.") and not k.endswith("num_batches_tracked")]
    assert [k for k in kept if not torch.equal(loaded[k], state[k])] == []
    assert loaded["head.fc.weight"].shape[0] == 7  # 400 classes there: the classifier starts afresh
    # Spot checks written out by hand.
    pairs = ({"t_pool1_subsample_w": "fuse_stem.conv.weight", "t_res4_5_branch2c_bn_subsample_bn_rm":
              "fusions.2.bn.running_mean", "t_res3_1_branch2b_bn_riv": "fast_stages.1.1.bn2.running_var",
              "res_conv1_bn_s": "slow_stem.bn1.weight"} if name.startswith("slowfast") else
             {"nonlocal_conv4_5_out_b": "res4.8.out.bias", "res3_0_branch1_w": "res3.0.downsample.0.weight",
              "res_conv1_bn_riv": "stem.bn1.running_var"})
    for blob, ours in pairs.items():
        assert torch.equal(torch.from_numpy(blobs[blob]), loaded[ours]), blob


def test_a_caffe2_file_is_read_without_running_what_it_names(tmp_path):
    class RunsCode:
        def __reduce__(self):
            return (os.mkdir, (str(tmp_path / "code-ran"),))

    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps({"blobs": {"conv1_w": RunsCode()}}, protocol=2))
    with pytest.raises(SpecError) as err:
        build_model(_spec("slowfast_r50_8x8", path), num_classes=5)
    assert "looks like a Caffe2 checkpoint" in str(err.value) and "mkdir, which is not a NumPy array's part" in \
        str(err.value)
    assert not (tmp_path / "code-ran").exists()


# PyTorchVideo's naming (pytorchvideo/models/slowfast.py, resnet.py), written from its description of the blocks.
PYTORCHVIDEO_KEY = re.compile(
    r"^(blocks\.0\.multipathway_blocks\.[01]\.(conv|norm)|blocks\.[0-3]\.multipathway_fusion\.(conv_fast_to_slow|norm)"
    r"|blocks\.[1-4]\.multipathway_blocks\.[01]\.res_blocks\.\d+\.(branch1_conv|branch1_norm|branch2\.(conv|norm)_[abc])"
    r"|blocks\.0\.(conv|norm)|blocks\.[1345]\.res_blocks\.\d+\.(branch1_conv|branch1_norm|branch2\.(conv|norm)_[abc])"
    r"|blocks\.6\.proj)\.(weight|bias|running_mean|running_var|num_batches_tracked)$")


@pytest.mark.parametrize("name, entries", [("slowfast_r50_8x8", 662), ("i3d_r50", 320)])
def test_a_pytorchvideo_hub_checkpoint_starts_the_same_model(tmp_path, name, entries):
    with torch.device("meta"):
        full = _model(name, classes=400, width=1.0)
    theirs = _as_pyslowfast(full, full.state_dict(), pytorchvideo_names.module_names)
    assert len(theirs) == entries and [k for k in theirs if not PYTORCHVIDEO_KEY.match(k)] == []
    shapes = ({"blocks.0.multipathway_blocks.1.conv.weight": (8, 3, 5, 7, 7),
               "blocks.0.multipathway_fusion.conv_fast_to_slow.weight": (16, 8, 7, 1, 1),
               "blocks.3.multipathway_blocks.0.res_blocks.0.branch2.conv_a.weight": (256, 640, 3, 1, 1),
               "blocks.6.proj.weight": (400, 2304)} if name.startswith("slowfast") else
              {"blocks.0.conv.weight": (64, 3, 5, 7, 7),
               "blocks.4.res_blocks.1.branch2.conv_a.weight": (256, 1024, 1, 1, 1),
               "blocks.5.res_blocks.0.branch1_conv.weight": (2048, 1024, 1, 1, 1), "blocks.6.proj.weight": (400, 2048)})
    assert {k: tuple(theirs[k].shape) for k in shapes} == shapes
    source = _model(name)
    state = _numbered(source)
    path = tmp_path / ("SLOWFAST_8x8_R50.pyth" if name.startswith("slowfast") else "I3D_8x8_R50.pyth")
    torch.save({"model_state": _as_pyslowfast(source, state, pytorchvideo_names.module_names)}, path)
    loaded = build_model(_spec(name, path), num_classes=5).state_dict()
    assert [k for k in state if not torch.equal(loaded[k], state[k])] == []
    pairs = ({"blocks.3.multipathway_fusion.norm.running_var": "fusions.2.bn.running_var",
              "blocks.4.multipathway_blocks.0.res_blocks.2.branch2.conv_c.weight": "slow_stages.3.2.conv3.weight",
              "blocks.0.multipathway_blocks.1.norm.bias": "fast_stem.bn1.bias"} if name.startswith("slowfast") else
             {"blocks.3.res_blocks.0.branch1_norm.running_mean": "res3.0.downsample.1.running_mean",
              "blocks.5.res_blocks.2.branch2.conv_b.weight": "res5.2.conv2.weight",
              "blocks.0.norm.weight": "stem.bn1.weight"})
    saved = torch.load(path)["model_state"]
    for their_key, our_key in pairs.items():
        assert torch.equal(saved[their_key], loaded[our_key]), their_key


def test_the_classifier_starts_afresh_when_asked_or_when_the_file_has_none(tmp_path, caplog):
    state = _numbered(_model("i3d_r50", classes=5))
    path = tmp_path / "w.pt"
    torch.save(state, path)
    spec = ModelSpec(name="i3d_r50", width=WIDTH, pretrained=str(path), fresh_classifier=True)
    with caplog.at_level(logging.INFO, logger="harness.models"):
        loaded = build_model(spec, num_classes=5).state_dict()  # as many classes: kept unless asked
    assert not torch.equal(loaded["head.fc.weight"], state["head.fc.weight"])
    assert torch.equal(loaded["res5.2.conv3.weight"], state["res5.2.conv3.weight"])
    assert "(5 classes there, 5 here, initialised afresh as model.fresh_classifier asks)" in caplog.text
    backbone = tmp_path / "backbone.pt"
    torch.save({k: v for k, v in state.items() if not k.startswith("head.")}, backbone)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="harness.models"):
        build_model(_spec("i3d_r50", backbone), num_classes=5)
    assert "every layer but the classifier (none there, 5 here, initialised afresh)" in caplog.text


def test_fresh_classifier_needs_pretrained_weights_and_changes_the_run_id_only_when_set(tmp_path):
    from harness.config import compose
    from harness.results import run_id

    with pytest.raises(SpecError, match="'model.fresh_classifier' starts the classifier of pre-trained weights"):
        compose(["model.fresh_classifier=true"])
    given = [f"model.pretrained={tmp_path / 'w.pt'}"]
    assert run_id(compose([*given, "model.fresh_classifier=false"])) == run_id(compose(given))
    assert run_id(compose([*given, "model.fresh_classifier=true"])) != run_id(compose(given))
