"""`harness models pretrain-2d`: a 2D ResNet-50 trained on video frames, whose weights inflate into the video models."""

from __future__ import annotations

import json

import pytest
import torch

from harness.cli import main
from harness.models import build_model
from harness.models.inflate import load_resnet50_state
from harness.spec import ModelSpec

from .run_overrides import data_overrides

TINY = ["--iterations", "3", "--batch", "4", "--size", "32", "--quiet"]


def test_command_writes_a_state_dict_that_inflates(synth_root, tmp_path):
    out = tmp_path / "w" / "resnet50.pt"
    assert main(["models", "pretrain-2d", "--out", str(out), *TINY, "--seed", "5", *data_overrides(synth_root)]) == 0
    state = load_resnet50_state(out)
    assert not any(k.startswith("fc.") for k in state)
    assert state["bn1.running_mean"].abs().sum() > 0, "BN statistics of the frames seen are kept"
    for name in ("slowfast_r50_8x8", "i3d_r50"):
        model = build_model(ModelSpec(name=name, width=0.0625, pretrained=str(out)), 4)
    assert torch.allclose(model.stem.conv1.weight.sum(2), state["conv1.weight"], atol=1e-6)
    meta = json.loads((tmp_path / "w" / "resnet50.pt.json").read_text())
    assert meta["settings"] == {"iterations": 3, "batch": 4, "size": 32, "lr": 0.1 * 4 / 256, "seed": 5}
    assert meta["dataset"]["root"] == str(synth_root) and meta["dataset"]["train_videos"] == 32
    assert 0 <= meta["final_train_top1"] <= 100 and meta["provenance"]["commit"]
    assert "not ImageNet" in meta["what"]


@pytest.mark.parametrize(("args", "message"), [
    (["--iterations", "0"], "--iterations must be at least 1"),
    (["--batch", "1"], "--batch must be at least 2"),
    (["--size", "16"], "--size must be at least 32"),
    (["--lr", "-1"], "--lr must be a positive number"),
    ([], "Say which frames to train on: scale=smoke or scale=proxy"),
    (["scale=paper"], "scale=paper has no synthetic data: set data.root=DIR"),
    (["data.name=synthetic", "data.root=/nonexistent/data"], "/nonexistent/data"),
])
def test_bad_input_exits_2_naming_the_setting(tmp_path, capsys, args, message):
    code = main(["models", "pretrain-2d", "--out", str(tmp_path / "w.pt"), *args])
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "w.pt").exists()


def test_out_folder_and_missing_gpu_are_refused(tmp_path, capsys, monkeypatch):
    assert main(["models", "pretrain-2d", "--out", str(tmp_path), "scale=smoke"]) == 2
    assert "is a folder" in capsys.readouterr().err
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert main(["models", "pretrain-2d", "--out", str(tmp_path / "w.pt"), "--device", "cuda", "scale=smoke"]) == 2
    assert "no CUDA GPU is visible" in capsys.readouterr().err


def test_an_existing_weights_file_is_kept_unless_force_is_given(tmp_path, capsys):
    out = tmp_path / "w.pt"
    out.write_bytes(b"someone's weights")
    assert main(["models", "pretrain-2d", "--out", str(out), "data.name=synthetic", "data.root=/nonexistent"]) == 2
    assert f"--out {out} exists; give another path, or add --force" in capsys.readouterr().err
    assert out.read_bytes() == b"someone's weights"
    # --force passes that check: the next refusal is the missing data's
    assert main(["models", "pretrain-2d", "--out", str(out), "--force"]) == 2
    assert "Say which frames to train on" in capsys.readouterr().err


def test_the_learning_rate_follows_imagenet_s_rule_unless_given_and_residual_blocks_start_as_identities():
    from harness.models.resnet2d import resnet50_2d
    from harness.train.pretrain_2d import PretrainSettings, zero_init_residuals

    assert PretrainSettings(batch=64).peak_lr == pytest.approx(0.025)
    assert PretrainSettings(batch=64, lr=0.2).peak_lr == 0.2
    net = resnet50_2d(4, 0.0625)
    zero_init_residuals(net)
    last_bns = [m.bn3.weight for m in net.modules() if hasattr(m, "bn3")]
    assert len(last_bns) == 16 and all(w.abs().sum() == 0 for w in last_bns)
    assert net.bn1.weight.abs().sum() > 0  # the stem and the shortcuts keep their initialisation
