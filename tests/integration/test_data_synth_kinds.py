"""The SSv2-like and Charades-like synthetic kinds: their nature (direction classes a flip swaps; several
overlapping actions per video), their annotation layouts read by the dataset readers, a tiny training run of
each dataset's recipe on them, and the scales making the kind of a suite's dataset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from harness import cli_train
from harness.config import compose
from harness.data import load_annotations, scan_video
from harness.data.clip_dataset import VideoClipDataset
from harness.data.synth.config import preset_config
from harness.data.synth.make import make_synthetic_dataset
from harness.reproduce import ReproduceOptions, reproduce
from harness.spec import SpecError
from harness.suite import load_scale, load_suite, resolve_suite, scale_overrides, suite_scale
from harness.train.loop import train

from .data_cli import harness

# The size of conftest's TINY_4_CLASSES without its classes: each kind's test names its own.
TINY_ANY_CLASSES = {"videos": 8, "val_videos": 4, "frames": 8, "size": (32, 48), "fps": 15}


def recipe_at_smoke(recipe: str, root: Path, out: Path, *extra: str):
    """`recipe` shrunk as the smoke scale shrinks it, its baseline (multigrid's long cycle would need more videos
    than a tiny set has) trained for 2 epochs on 8-frame clips of the synthetic set at `root`."""
    base = compose([f"recipe={recipe}"])
    overrides = [f"recipe={recipe}", *scale_overrides(base, load_scale("smoke"), None, None),
                 f"data.root={root}", "data.train_videos=8", "solver.steps=[0,1]", "solver.max_epoch=2",
                 "data.num_frames=8", "solver.warmup_epochs=0.5", "multigrid.long_cycle=false",
                 "multigrid.short_cycle=false", f"output_dir={out}", *extra]
    return compose(overrides)


@pytest.fixture
def one_thread():
    """Tiny models train many times faster on one thread than on two that wait for each other (and for whatever
    else runs on a small machine)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# ---------------------------------------------------------------- SSv2-like
@pytest.fixture(scope="module")
def ssv2(tmp_path_factory):
    out = tmp_path_factory.mktemp("ssv2")
    make_synthetic_dataset(out, "smoke", kind="ssv2", classes=4, progress=False, **TINY_ANY_CLASSES)
    return out


def test_ssv2_layout_is_read_by_the_ssv2_reader(ssv2):
    ann = load_annotations("ssv2", ssv2, "train")
    assert len(ann) == 8 and ann.num_classes == 4 and not ann.multilabel
    assert ann.classes == ("Moving something from right to left", "Moving something from left to right",
                           "Turning something clockwise", "Turning something anticlockwise")
    assert [r.label for r in ann.records] == [0, 1, 2, 3] * 2
    val = load_annotations("ssv2", ssv2, "val")
    assert len(val) == 4 and not {r.path for r in val.records} & {r.path for r in ann.records}
    info = scan_video(ann.records[0].path)
    assert (info.frames, info.height, info.width, info.codec) == (8, 32, 48, "vp9")
    assert json.loads((ssv2 / "synth.json").read_text())["kind"] == "ssv2"
    with pytest.raises(SpecError, match="--classes 15"):
        preset_config("smoke", kind="ssv2", classes=15)


def test_ssv2_recipe_trains_without_flip(ssv2, tmp_path, one_thread):
    spec = recipe_at_smoke("ssv2_slowfast_r50_16x8", ssv2, tmp_path, "data.num_classes=4")
    assert spec.data.name == "ssv2"
    assert not VideoClipDataset.from_spec(spec).sampling.flip  # a flip would swap left and right
    record = train(spec)
    assert record["final"]["videos_scored"] == 4 and 0 <= record["final"]["top1"] <= 100


# ---------------------------------------------------------------- Charades-like
@pytest.fixture(scope="module")
def charades(tmp_path_factory):
    out = tmp_path_factory.mktemp("charades")
    make_synthetic_dataset(out, "smoke", kind="charades", classes=5, progress=False,
                           **{**TINY_ANY_CLASSES, "frames": 24})
    return out


def test_charades_videos_hold_several_overlapping_actions(charades):
    ann = load_annotations("charades", charades, "train")
    assert len(ann) == 8 and ann.multilabel and ann.num_classes == 157
    assert all(set(r.label) <= set(range(5)) and r.label for r in ann.records)
    several = [r for r in ann.records if len(r.label) >= 2]
    assert several

    def overlap(a, b) -> bool:
        return a.start <= b.end and b.start <= a.end

    assert any(overlap(a, b) for r in several for a in r.actions for b in r.actions if a is not b)
    assert all(0 <= a.start < a.end <= 24 / 15 for r in ann.records for a in r.actions)
    assert len(load_annotations("charades", charades, "val")) == 4
    assert scan_video(ann.records[0].path).frames == 24
    # a clip's target: the actions overlapping its window
    data = VideoClipDataset(ann)
    record = several[0]
    first = min(record.actions, key=lambda a: a.end)
    window = [first.start, first.start + 0.01]
    expected = sorted(a.label for a in record.actions if a.start <= window[1] and a.end >= window[0])
    assert data._target(record, window).nonzero().flatten().tolist() == expected
    assert data._target(record, None).nonzero().flatten().tolist() == sorted(record.label)


def test_charades_recipe_trains_and_is_scored_by_map(charades, tmp_path, one_thread):
    spec = recipe_at_smoke("charades_slowfast_r50_16x8", charades, tmp_path)
    assert spec.data.name == "charades" and spec.data.num_classes == 157
    record = train(spec)
    final = record["final"]
    assert final["videos_scored"] == 4 and 0 <= final["map"] <= 100 and "top1" not in final


def test_cli_synth_kinds(tmp_path, capsys):
    for kind, name in (("ssv2", "ssv2"), ("charades", "charades")):
        out = tmp_path / kind
        assert harness("data", "synth", "--out", str(out), "--kind", kind, "--classes", "2", "--videos", "2",
                       "--val-videos", "1", "--frames", "4", "--size", "32x32", "--quiet") == 0
        assert f"data.name={name} " in capsys.readouterr().out
        assert len(load_annotations(name, out, "val")) == 1
        assert json.loads((out / "synth.json").read_text())["kind"] == kind


# ---------------------------------------------------------------- scales
def test_scales_make_synthetic_data_of_the_suites_dataset():
    for scale_name in ("smoke", "proxy"):
        scale = load_scale(scale_name)
        assert suite_scale(load_suite("kinetics_main"), scale) == scale  # Kinetics: the scale's data as it is
        ssv2 = suite_scale(load_suite("ssv2"), scale).synthetic
        assert ssv2 == {**scale.synthetic, "kind": "ssv2"}
        charades = suite_scale(load_suite("charades"), scale).synthetic
        assert charades["kind"] == "charades" and charades["frames"] == 3 * scale.synthetic["frames"]
        assert "hidden" not in charades and charades["videos"] == scale.synthetic["videos"]
        preset_config(**charades)  # settings the generator accepts
    smoke = load_scale("smoke")
    for name, data_name, classes in (("ssv2", "ssv2", 4), ("charades", "charades", 157)):
        suite = load_suite(name)
        runs = resolve_suite(suite, suite_scale(suite, smoke), [], "/data/synthetic")
        assert {(r.spec.data.name, r.spec.data.num_classes) for r in runs} == {(data_name, classes)}


@pytest.mark.parametrize("scale_name", ["smoke", "proxy"])
def test_every_suite_run_finds_videos_long_enough_for_its_clips(scale_name):
    """A run whose shortest clip is longer than the scale's videos finds every video too short; the suite's data
    grows to its longest clip (Table 2b's 64 frames against the proxy's 48), other suites keep theirs."""
    from harness.data.check import min_clip_frames
    from harness.schedule import build_plan
    from harness.suite import list_suites

    scale = load_scale(scale_name)
    for name in list_suites():
        suite = load_suite(name)
        scaled = suite_scale(suite, scale)
        for run in resolve_suite(suite, scaled, [], "/data/synthetic"):
            if run.spec is not None:
                assert min_clip_frames(build_plan(run.spec)) <= scaled.synthetic["frames"], (name, run.run.variant)
    assert suite_scale(load_suite("kinetics_generalization"), load_scale("proxy")).synthetic["frames"] == 64
    assert suite_scale(load_suite("kinetics_models"), load_scale("proxy")) == load_scale("proxy")


def test_train_at_a_scale_makes_the_recipes_kind(tmp_path):
    seen = []

    def prepare(scale):
        seen.append(scale.synthetic.get("kind"))
        return "/data/synthetic", None

    overrides = cli_train.scaled_overrides(["recipe=ssv2_slowfast_r50_16x8", "scale=smoke"], prepare)
    assert seen == ["ssv2"] and compose(overrides).data.name == "ssv2"
    cli_train.scaled_overrides(["scale=smoke"], prepare)
    assert seen == ["ssv2", None]  # the default Kinetics recipe: the scale's settings as they are


def test_reproduce_dry_run_uses_the_suites_kind(tmp_path, capsys):
    assert reproduce(ReproduceOptions("ssv2", "smoke", dry_run=True, results=tmp_path, report=False)) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if " train " in line]
    assert lines and all("data.name=ssv2" in line and "data.num_classes=4" in line for line in lines)
