"""harness.reproduce.inputs at work: the scale's synthetic data and the ImageNet rows' stand-in (a 2D ResNet-50
pre-trained on its frames) that `harness reproduce` makes at smoke/proxy scale, each only for a run that needs it."""

from __future__ import annotations

from pathlib import Path

import pytest

import harness.train.pretrain_2d as pretrain_module
from harness.config import compose
from harness.models.inflate import load_resnet50_state
from harness.reproduce import ReproduceOptions, inputs, pool, reproduce
from harness.results import run_id
from harness.spec import SpecError
from harness.suite import Scale, load_scale, load_suite, resolve_suite, suite_scale

from .run_overrides import data_overrides


def test_reproduce_gives_the_stand_in_to_the_imagenet_rows_only(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path))
    smoke = load_scale("smoke")
    path = inputs.suite_pretrained(smoke, [])
    assert path.startswith(inputs.synthetic_paths(smoke)[0]) and path.endswith(".pt")
    assert inputs.suite_pretrained(smoke, ["model.pretrained=/mine.pt"]) is None
    assert inputs.suite_pretrained(smoke, ["data.root=/my/data"]) is None
    assert inputs.suite_pretrained(load_scale("paper"), []) is None  # the user's file, as before
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
    path = inputs.prepare_pretrained(scale, spec)
    assert path == inputs.pretrained_path(scale) and load_resnet50_state(Path(path))
    first = Path(path).stat().st_mtime_ns
    assert inputs.prepare_pretrained(scale, spec) == path and len(built) == 1
    assert Path(path).stat().st_mtime_ns == first
    Path(path).unlink()
    inputs.prepare_pretrained(scale, spec)
    assert len(built) == 2 and Path(path).is_file()
    # Other settings are another file, not the old one reused.
    longer = Scale("smoke", {**scale.settings, "pretrain_2d": {"iterations": 3, "batch": 4, "size": 32}})
    assert inputs.pretrained_path(longer) != path


def test_reproduce_builds_the_stand_in_only_for_a_run_that_needs_it(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(inputs, "prepare_synthetic", lambda scale: inputs.synthetic_paths(scale))  # no video made
    built, started = [], []
    monkeypatch.setattr(inputs, "prepare_pretrained", lambda scale, spec: built.append(spec.variant))
    monkeypatch.setattr(pool, "_run_one",
                        lambda r, *a: started.append(r.spec.model.pretrained) or (r.run.variant, 0, 0))
    kwargs = {"results": tmp_path / "results", "report": False}
    reproduce(ReproduceOptions("kinetics_generalization", "smoke", [], only=["baseline"], **kwargs))
    assert built == [] and started == [None]
    reproduce(ReproduceOptions("kinetics_generalization", "smoke", [], only=["imagenet_baseline", "imagenet_multigrid"],
                               **kwargs))
    assert built == ["imagenet_baseline"]
    # Trained beside the suite's own data (its videos are as long as its longest clip).
    assert started[1:] == [inputs.pretrained_path(suite_scale(load_suite("kinetics_generalization"),
                                                           load_scale("smoke")))] * 2


def test_prepare_only_makes_the_missing_runs_data_and_trains_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)  # where a run's outputs/ would go
    results = tmp_path / "results"
    scale = suite_scale(load_suite("kinetics_ablation"), load_scale("smoke"))
    root, cache = inputs.synthetic_paths(scale)
    assert reproduce(ReproduceOptions("kinetics_ablation", "smoke", [], results=results, report=False,
                                      only=["baseline"], prepare_only=True)) == 0
    assert (Path(root) / "val.csv").is_file()  # the videos and annotations the run will read
    assert cache is None or Path(cache).is_dir()
    assert not list(results.rglob("*.json")) and not (tmp_path / "outputs").exists()
    with pytest.raises(SpecError, match="give one"):
        reproduce(ReproduceOptions("kinetics_ablation", "smoke", [], results=results, dry_run=True, prepare_only=True))
