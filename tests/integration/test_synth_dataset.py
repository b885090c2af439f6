"""The synthetic dataset itself: layout and determinism, reruns, presets, label noise, hidden objects, and a
generation stopped midway finished on the next call."""

from __future__ import annotations

import json
from pathlib import Path

import av
import numpy as np
import pytest

from harness.data import load_annotations, scan_video
from harness.data.synth.classes import class_names
from harness.data.synth.config import PRESETS, preset_config
from harness.data.synth.make import make_synthetic_dataset
from harness.data.synth.render import render_video
from harness.spec import SpecError

from .conftest import TINY_4_CLASSES
from .data_cli import harness


def frame_difference(a: Path, b: Path) -> float:
    """The share of pixels whose colour differs by more than 60 between two videos' decoded frames: an object
    moved, added or removed, not x264's coding noise, which is not bit-reproducible across processes."""
    def frames(path: Path) -> np.ndarray:
        with av.open(str(path)) as container:
            return np.stack([f.to_ndarray(format="rgb24") for f in container.decode(video=0)]).astype(np.int16)
    return float((np.abs(frames(a) - frames(b)).max(axis=-1) > 60).mean())


def test_synthetic_dataset_layout_and_determinism(synth, tmp_path):
    ann = load_annotations("synthetic", synth, "train")
    assert len(ann) == 8 and ann.num_classes == 4 and ann.classes == tuple(class_names(4))
    assert sorted(r.label for r in ann.records) == [0, 0, 1, 1, 2, 2, 3, 3]
    assert len(load_annotations("synthetic", synth, "val")) == 4
    info = scan_video(ann.records[0].path)
    assert (info.frames, info.height, info.width, info.codec) == (8, 32, 48, "h264")
    assert not [p for p in synth.rglob(".*") if p.is_file()]  # no temporary file left behind
    again = tmp_path / "again"
    make_synthetic_dataset(again, "smoke", progress=False, **TINY_4_CLASSES)
    # The rendered frames are bit-identical; x264's output is not always (one video in a few runs differs in
    # coding noise), so the decoded videos are compared for what they show.
    cfg = preset_config("smoke", **TINY_4_CLASSES)
    first, second = (render_video((1, 2), cfg, np.random.default_rng([cfg.seed, 0, 3])) for _ in range(2))
    assert np.array_equal(first, second)
    assert frame_difference(ann.records[3].path, again / ann.records[3].path.relative_to(synth)) < 0.005
    assert (synth / "train.csv").read_text() == (again / "train.csv").read_text()


def test_rerun_skips_finished_videos_and_refuses_other_settings(synth):
    video = synth / load_annotations("synthetic", synth).records[0].path
    before = video.stat().st_mtime_ns
    make_synthetic_dataset(synth, "smoke", progress=False, **TINY_4_CLASSES)
    assert video.stat().st_mtime_ns == before
    with pytest.raises(SpecError, match="other settings"):
        make_synthetic_dataset(synth, "smoke", progress=False, **{**TINY_4_CLASSES, "seed": 3})


def test_presets_exist_and_a_tiny_proxy_override_works(tmp_path):
    assert PRESETS["proxy"].videos == 10_000 and PRESETS["proxy"].frames == 64
    assert min(PRESETS["kinetics-like"].size) == 256 and PRESETS["kinetics-like"].frames == 300
    make_synthetic_dataset(tmp_path, "proxy", classes=2, videos=2, val_videos=0, frames=4, size=(32, 34),
                           progress=False)
    assert len(load_annotations("synthetic", tmp_path)) == 2
    with pytest.raises(SpecError, match="even"):
        preset_config("smoke", size=(33, 48))
    with pytest.raises(SpecError, match="Did you mean 'proxy'"):
        preset_config("proxi")


def test_label_noise_shows_other_classes_and_leaves_the_rest_unchanged(synth, tmp_path):
    noisy = tmp_path / "noisy"
    make_synthetic_dataset(noisy, "smoke", progress=False, label_noise=0.5, **TINY_4_CLASSES)
    lines = [line.split() for line in (noisy / "noisy_labels.csv").read_text().splitlines()]
    assert 0 < len(lines) < 12  # about half of the 8 + 4 videos
    for path, label, shown in lines:
        assert label != shown and path.split("/")[1] == class_names(4)[int(label)]
    listed = {path for path, _, _ in lines}
    ann = load_annotations("synthetic", noisy, "train")
    assert [r.label for r in ann.records] == [r.label for r in load_annotations("synthetic", synth).records]
    for record in ann.records:  # a video keeps its frames unless it is listed as showing another class
        rel = record.path.relative_to(noisy)
        same = frame_difference(record.path, synth / rel) < 0.005
        assert same != (str(rel) in listed)
    assert json.loads((noisy / "synth.json").read_text())["label_noise"] == 0.5
    assert "label_noise" not in json.loads((synth / "synth.json").read_text())
    assert not (synth / "noisy_labels.csv").exists()
    with pytest.raises(SpecError, match="label-noise"):
        preset_config("smoke", label_noise=1.0)
    assert harness("data", "synth", "--out", str(tmp_path / "cli"), "--quiet", "--classes", "2", "--videos", "2",
                   "--val-videos", "2", "--frames", "4", "--size", "32x34", "--label-noise", "0.9") == 0
    assert json.loads((tmp_path / "cli" / "synth.json").read_text())["label_noise"] == 0.9


def test_hidden_videos_lose_only_their_object_and_are_listed(synth, tmp_path):
    hidden = tmp_path / "hidden"
    make_synthetic_dataset(hidden, "smoke", progress=False, hidden=0.5, **TINY_4_CLASSES)
    listed = {line.split()[0] for line in (hidden / "hidden_videos.csv").read_text().splitlines()}
    assert 0 < len(listed) < 12  # about half of the 8 + 4 videos
    for split in ("train", "val"):
        ann = load_annotations("synthetic", hidden, split)
        assert [r.label for r in ann.records] == [r.label for r in load_annotations("synthetic", synth, split).records]
        for record in ann.records:  # a video keeps its bytes unless it is listed as hiding its object
            rel = record.path.relative_to(hidden)
            assert (frame_difference(record.path, synth / rel) < 0.005) != (str(rel) in listed)
    cfg = preset_config("smoke", hidden=0.5, **TINY_4_CLASSES)
    rng = lambda: np.random.default_rng(0)  # noqa: E731
    shown, blank = render_video((0, 0), cfg, rng()), render_video((0, 0), cfg, rng(), show_target=False)
    changed = (np.abs(shown.astype(int) - blank.astype(int)).max(axis=-1) > 30).mean(axis=(1, 2))
    assert (changed > 0.03).all()  # every frame loses the object (a few % of these tiny frames), nothing else
    assert json.loads((hidden / "synth.json").read_text())["hidden"] == 0.5
    assert "hidden" not in json.loads((synth / "synth.json").read_text())
    with pytest.raises(SpecError, match="--hidden"):
        preset_config("smoke", hidden=1.0)


def test_a_suite_dataset_whose_generation_stopped_midway_through_its_annotations_is_finished_not_used(
        tmp_path, monkeypatch):
    """`harness reproduce` generates a scale's synthetic data once and takes a val.csv as the sign that it is done:
    a generation stopped (Ctrl-C, a kill) after any annotation file is taken up again on the next call, which then
    leaves the same files as one that was never stopped."""
    import harness.data.synth.annotation_files as annotation_files
    from harness.reproduce import inputs
    from harness.suite import Scale

    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path))
    scale = Scale("tiny", {"synthetic": {"preset": "smoke", "classes": 2, "videos": 2, "val_videos": 2, "frames": 4,
                                         "size": [32, 48], "hidden": 0.5, "label_noise": 0.5}})
    root = Path(inputs.prepare_synthetic(scale)[0])
    whole = {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()}
    assert {"train.csv", "val.csv", "classes.txt", "hidden_videos.csv", "noisy_labels.csv"} < set(whole)
    write = annotation_files.write_text_atomic
    for stop_at in range(len(whole) - 1):  # before each annotation file (synth.json is written before them)
        for name in whole:
            if name != "synth.json":
                (root / name).unlink()
        calls: list[Path] = []

        def stopped(path, text, calls=calls, stop_at=stop_at):
            calls.append(path)
            if len(calls) > stop_at:
                raise KeyboardInterrupt
            return write(path, text)

        monkeypatch.setattr(annotation_files, "write_text_atomic", stopped)
        with pytest.raises(KeyboardInterrupt):
            inputs.prepare_synthetic(scale)
        monkeypatch.setattr(annotation_files, "write_text_atomic", write)
        inputs.prepare_synthetic(scale)
        assert {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()} == whole, calls[-1].name
