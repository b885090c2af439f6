"""`harness models pretrain-2d` and the ImageNet rows' stand-in that `harness reproduce` builds at smoke/proxy scale."""

from __future__ import annotations

import json

import pytest
import torch

import harness.train.pretrain_2d as pretrain_module
from harness import reproduce as rep
from harness.cli import main
from harness.config import compose
from harness.models import build_model
from harness.models.inflate import load_resnet50_state
from harness.results import run_id
from harness.spec import ModelSpec, SpecError
from harness.suite import Scale, load_scale, load_suite, resolve_suite, suite_scale

TINY = ["--iterations", "3", "--batch", "4", "--size", "32", "--quiet"]


def data_overrides(root) -> list[str]:
    return ["data.name=synthetic", f"data.root={root}", "data.num_classes=4", "model.width=0.0625",
            "train.num_workers=0"]


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


def test_reproduce_gives_the_stand_in_to_the_imagenet_rows_only(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path))
    smoke = load_scale("smoke")
    path = rep.suite_pretrained(smoke, [])
    assert path.startswith(rep.synthetic_paths(smoke)[0]) and path.endswith(".pt")
    assert rep.suite_pretrained(smoke, ["model.pretrained=/mine.pt"]) is None
    assert rep.suite_pretrained(smoke, ["data.root=/my/data"]) is None
    assert rep.suite_pretrained(load_scale("paper"), []) is None  # the user's file, as before
    suite = load_suite("kinetics_generalization")
    without = {r.run.variant: r for r in resolve_suite(suite, smoke, [], "/data/synthetic")}
    with_it = {r.run.variant: r for r in resolve_suite(suite, smoke, [], "/data/synthetic", pretrained=path)}
    for variant, r in with_it.items():
        if "model.pretrained" in r.run.requires:
            assert without[variant].spec is None and r.spec.model.pretrained == path
        else:  # the other rows keep their settings, so their records keep their run ids
            assert r.spec.model.pretrained is None and run_id(r.spec) == run_id(without[variant].spec)
    mine = resolve_suite(suite, smoke, ["model.pretrained=/mine.pt"], "/data/synthetic", pretrained=path)
    assert {r.spec.model.pretrained for r in mine if r.run.requires} == {"/mine.pt"}


def test_the_stand_in_is_built_once_and_rebuilt_only_when_missing(synth_root, tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path))
    smoke = load_scale("smoke")
    scale = Scale("smoke", {**smoke.settings, "pretrain_2d": {"iterations": 2, "batch": 4, "size": 32}})
    spec = compose(["scale=smoke", *data_overrides(synth_root)])
    built = []
    original = pretrain_module.pretrain_2d
    monkeypatch.setattr(pretrain_module, "pretrain_2d", lambda *a, **k: built.append(a[1]) or original(*a, **k))
    path = rep.prepare_pretrained(scale, spec)
    assert path == rep.pretrained_path(scale) and load_resnet50_state(rep.Path(path))
    first = rep.Path(path).stat().st_mtime_ns
    assert rep.prepare_pretrained(scale, spec) == path and len(built) == 1
    assert rep.Path(path).stat().st_mtime_ns == first
    rep.Path(path).unlink()
    rep.prepare_pretrained(scale, spec)
    assert len(built) == 2 and rep.Path(path).is_file()
    # Other settings are another file, not the old one reused.
    longer = Scale("smoke", {**scale.settings, "pretrain_2d": {"iterations": 3, "batch": 4, "size": 32}})
    assert rep.pretrained_path(longer) != path


def test_reproduce_builds_the_stand_in_only_for_a_run_that_needs_it(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(rep, "prepare_synthetic", lambda scale: rep.synthetic_paths(scale))  # no video made
    built, started = [], []
    monkeypatch.setattr(rep, "prepare_pretrained", lambda scale, spec: built.append(spec.variant))
    monkeypatch.setattr(rep, "_run_one", lambda r, *a: started.append(r.spec.model.pretrained) or (r.run.variant, 0, 0))
    kwargs = {"results": tmp_path / "results", "report": False}
    rep.reproduce("kinetics_generalization", "smoke", [], only=["baseline"], **kwargs)
    assert built == [] and started == [None]
    rep.reproduce("kinetics_generalization", "smoke", [], only=["imagenet_baseline", "imagenet_multigrid"], **kwargs)
    assert built == ["imagenet_baseline"]
    # Trained beside the suite's own data (its videos are as long as its longest clip).
    assert started[1:] == [rep.pretrained_path(suite_scale(load_suite("kinetics_generalization"),
                                                           load_scale("smoke")))] * 2


def test_prepare_only_makes_the_missing_runs_data_and_trains_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)  # where a run's outputs/ would go
    results = tmp_path / "results"
    scale = suite_scale(load_suite("kinetics_ablation"), load_scale("smoke"))
    root, cache = rep.synthetic_paths(scale)
    assert rep.reproduce("kinetics_ablation", "smoke", [], results=results, report=False, only=["baseline"],
                         prepare_only=True) == 0
    assert (rep.Path(root) / "val.csv").is_file()  # the videos and annotations the run will read
    assert cache is None or rep.Path(cache).is_dir()
    assert not list(results.rglob("*.json")) and not (tmp_path / "outputs").exists()
    with pytest.raises(SpecError, match="give one"):
        rep.reproduce("kinetics_ablation", "smoke", [], results=results, dry_run=True, prepare_only=True)


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
