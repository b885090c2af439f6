"""`harness data synth | check | bench` (through the `register`ed parser) and the synthetic dataset itself."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import av
import numpy as np
import pytest
import torch

from harness import cli_data
from harness.data import load_annotations, scan_video
from harness.data.synth.classes import class_names
from harness.data.synth.config import PRESETS, preset_config
from harness.data.synth.make import make_synthetic_dataset
from harness.data.synth.render import render_video
from harness.records import DataBenchRecord
from harness.spec import SpecError
from tests.integration.video_files import truncate, write_video

TINY = {"classes": 4, "videos": 8, "val_videos": 4, "frames": 8, "size": (32, 48), "fps": 15}


def harness(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="harness")
    cli_data.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(list(argv))
    return args.func(args)


def frame_difference(a: Path, b: Path) -> float:
    """The share of pixels whose colour differs by more than 60 between two videos' decoded frames: an object
    moved, added or removed, not x264's coding noise, which is not bit-reproducible across processes."""
    def frames(path: Path) -> np.ndarray:
        with av.open(str(path)) as container:
            return np.stack([f.to_ndarray(format="rgb24") for f in container.decode(video=0)]).astype(np.int16)
    return float((np.abs(frames(a) - frames(b)).max(axis=-1) > 60).mean())


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    out = tmp_path_factory.mktemp("synth")
    make_synthetic_dataset(out, "smoke", progress=False, **TINY)
    return out


def test_synthetic_dataset_layout_and_determinism(synth, tmp_path):
    ann = load_annotations("synthetic", synth, "train")
    assert len(ann) == 8 and ann.num_classes == 4 and ann.classes == tuple(class_names(4))
    assert sorted(r.label for r in ann.records) == [0, 0, 1, 1, 2, 2, 3, 3]
    assert len(load_annotations("synthetic", synth, "val")) == 4
    info = scan_video(ann.records[0].path)
    assert (info.frames, info.height, info.width, info.codec) == (8, 32, 48, "h264")
    assert not [p for p in synth.rglob(".*") if p.is_file()]  # no temporary file left behind
    again = tmp_path / "again"
    make_synthetic_dataset(again, "smoke", progress=False, **TINY)
    # The rendered frames are bit-identical; x264's output is not always (one video in a few runs differs in
    # coding noise), so the decoded videos are compared for what they show.
    cfg = preset_config("smoke", **TINY)
    first, second = (render_video((1, 2), cfg, np.random.default_rng([cfg.seed, 0, 3])) for _ in range(2))
    assert np.array_equal(first, second)
    assert frame_difference(ann.records[3].path, again / ann.records[3].path.relative_to(synth)) < 0.005
    assert (synth / "train.csv").read_text() == (again / "train.csv").read_text()


def test_rerun_skips_finished_videos_and_refuses_other_settings(synth):
    video = synth / load_annotations("synthetic", synth).records[0].path
    before = video.stat().st_mtime_ns
    make_synthetic_dataset(synth, "smoke", progress=False, **TINY)
    assert video.stat().st_mtime_ns == before
    with pytest.raises(SpecError, match="other settings"):
        make_synthetic_dataset(synth, "smoke", progress=False, **{**TINY, "seed": 3})


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


def test_cli_synth(tmp_path, capsys):
    assert harness("data", "synth", "--out", str(tmp_path), "--classes", "2", "--videos", "2", "--val-videos", "1",
                   "--frames", "4", "--size", "32x32", "--quiet") == 0
    assert "data.train_videos=2" in capsys.readouterr().out
    assert len(load_annotations("synthetic", tmp_path, "val")) == 1


def test_cli_synth_refuses_a_folder_holding_another_dataset(tmp_path):
    (tmp_path / "train.csv").write_text("videos/a.mp4 0\n")
    (tmp_path / "classes.txt").write_text("jumping\n")
    with pytest.raises(SpecError, match=r"classes.txt, train.csv\) and no synth.json.*empty or new folder"):
        harness("data", "synth", "--out", str(tmp_path), "--classes", "2", "--videos", "2", "--val-videos", "1",
                "--frames", "4", "--size", "32x32", "--quiet")
    assert (tmp_path / "train.csv").read_text() == "videos/a.mp4 0\n"
    assert (tmp_path / "classes.txt").read_text() == "jumping\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["classes.txt", "train.csv"]


# A plan small enough for a few test videos: the checks a test is about are then the only refusals.
SMALL_PLAN = ["num_gpus=1", "solver.batch_size=2", "multigrid.long_cycle=false", "multigrid.short_cycle=false"]


def test_cli_check_names_exactly_the_broken_videos(synth, tmp_path, capsys):
    root = tmp_path / "k"
    lines = []
    for rec in load_annotations("synthetic", synth).records:
        rel = rec.path.relative_to(synth)
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(rec.path.read_bytes())
        lines.append(f"{rel} {rec.label}\n")
    extra = {"other/vp9.webm": write_video(root / "other/vp9.webm", n=20, fps=24, codec="libvpx-vp9"),
             "other/mpeg4.avi": write_video(root / "other/mpeg4.avi", n=20, fps=25, codec="mpeg4", h=40, w=40)}
    (root / "bad").mkdir()
    (root / "bad/zero.mp4").write_bytes(b"")
    truncate(extra["other/vp9.webm"], root / "bad/cut.webm")
    truncate(root / lines[0].split()[0], root / "bad/cut.mp4")
    (root / "bad/text.mp4").write_text("hello")
    write_video(root / "bad/short.mp4", n=1)
    broken = {"bad/zero.mp4", "bad/cut.webm", "bad/cut.mp4", "bad/text.mp4", "bad/short.mp4", "bad/missing.mp4"}
    lines += [f"{p} 1\n" for p in [*extra, *sorted(broken)]]
    (root / "train.csv").write_text("".join(lines))
    (root / "classes.txt").write_text((synth / "classes.txt").read_text())
    val = load_annotations("synthetic", synth, "val").records[:1]
    for rec in val:
        shutil.copytree(rec.path.parent, root / rec.path.parent.relative_to(synth))
    (root / "val.csv").write_text("".join(f"{rec.path.relative_to(synth)} {rec.label}\n" for rec in val))
    overrides = [*SMALL_PLAN, "data.name=synthetic", f"data.root={root}", "data.num_frames=8", "data.crop_size=32",
                 "data.num_classes=4"]
    assert harness("data", "check", "--json", *overrides, f"data.train_videos={len(lines)}") == 1
    report = json.loads(capsys.readouterr().out)
    assert {str(p["path"]).removeprefix(f"{root}/") for p in report["unreadable"]} == broken
    assert report["videos"] == len(lines) + 1 and report["readable"] == len(lines) + 1 - len(broken)
    assert report["annotation_errors"] == []
    # fix the list: the same command passes, and an annotation error is reported with file and line
    (root / "train.csv").write_text("".join(lines[:-len(broken)]) + "x.mp4\n")
    assert harness("data", "check", *overrides) == 1
    text = capsys.readouterr().out
    assert "train.csv, line" in text and "missing label" in text
    (root / "train.csv").write_text("".join(lines[:-len(broken)]))
    assert harness("data", "check", *overrides, f"data.train_videos={len(lines) - len(broken)}") == 0


def test_cli_check_refuses_what_train_refuses(synth, tmp_path, capsys):
    overrides = [*SMALL_PLAN, "data.name=synthetic", "data.num_frames=8", "data.crop_size=32"]
    given = [f"data.root={synth}", *overrides]
    assert harness("data", "check", "--json", *given, "data.num_classes=4", "data.train_videos=8") == 0
    capsys.readouterr()
    for wrong, right, fix in (("data.num_classes=3", "data.train_videos=8", "Set data.num_classes=4."),
                              ("data.train_videos=7", "data.num_classes=4", "Set data.train_videos=8 ")):
        assert harness("data", "check", "--json", *given, wrong, right) == 1
        report = json.loads(capsys.readouterr().out)
        assert len(report["settings_errors"]) == 1 and fix in report["settings_errors"][0]
        assert report["unreadable"] == [] and report["annotation_errors"] == []
    # train reads a validation split: its absence fails the check too
    copy = tmp_path / "copy"
    shutil.copytree(synth, copy)
    (copy / "val.csv").unlink()
    assert harness("data", "check", f"data.root={copy}", *overrides, "data.num_classes=4",
                   "data.train_videos=8") == 1
    assert "no val.csv" in capsys.readouterr().out


def test_cli_check_counts_a_split_it_cannot_read_and_duplicate_lines(synth, tmp_path, capsys):
    copy = tmp_path / "copy"
    shutil.copytree(synth, copy)
    listed = (synth / "train.csv").read_text()
    overrides = [*SMALL_PLAN, "data.name=synthetic", f"data.root={copy}", "data.num_frames=8", "data.crop_size=32",
                 "data.num_classes=4"]
    (copy / "train.csv").write_text(listed + "x.mp4\n")
    assert harness("data", "check", *overrides, "data.train_videos=8") == 1
    assert ": 4 videos (train not read (annotation errors below), val 4)" in capsys.readouterr().out
    (copy / "train.csv").write_text(listed * 3)
    assert harness("data", "check", *overrides, "data.train_videos=24") == 0  # train takes them, with a warning
    out = capsys.readouterr().out
    assert ": 12 videos (train 24 listed, 8 distinct, val 4)" in out
    assert f"{copy / 'train.csv'} lists 16 video(s) again on later lines (duplicate lines)" in out


def test_cli_check_warns_of_a_validation_list_that_shares_training_videos(synth, tmp_path, capsys):
    copy = tmp_path / "copy"
    shutil.copytree(synth, copy)
    train = (copy / "train.csv").read_text()
    overrides = [*SMALL_PLAN, "data.name=synthetic", f"data.root={copy}", "data.num_frames=8", "data.crop_size=32",
                 "data.num_classes=4", "data.train_videos=8"]
    for val, shared in ((train, "every one of its 8"), (train.splitlines(keepends=True)[0] + (copy / "val.csv")
                                                        .read_text(), "1 of its 5")):
        (copy / "val.csv").write_text(val)
        assert harness("data", "check", *overrides) == 0
        out = capsys.readouterr().out
        assert f"{copy / 'val.csv'} lists {shared} video(s) in {copy / 'train.csv'} too" in out


def test_cli_check_needs_a_root():
    with pytest.raises(SpecError, match="data.root"):
        harness("data", "check", "data.name=synthetic")


def test_cli_bench_writes_a_record(synth, tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert harness("data", "bench", "--min-seconds", "0",
                   "--clips", "4", "--workers", "0", "--out", str(out), "data.name=synthetic",
                   f"data.root={synth}", "data.num_frames=8", "data.crop_size=32", "data.jitter=[36,48]",
                   "data.num_classes=4", "data.train_videos=8") == 0
    record = json.loads(out.read_text())
    assert record["record_version"] == DataBenchRecord.VERSION and "shapes" in record
    assert {"hardware", "versions", "commit", "date"} <= record["provenance"].keys()
    shapes = {(r["t"], r["s"]) for r in record["shapes"]}
    assert (8, 32) in shapes and (2, 16) in shapes
    assert all(r["decode_clips_per_s"] > 0 and r["loader_clips_per_s"]["0"] > 0 for r in record["shapes"])
    assert record["planned_shapes"] == len(record["shapes"])
    assert "clips/s" in capsys.readouterr().out


def test_a_loader_path_whose_workers_time_out_is_recorded_as_failed_and_the_bench_goes_on(synth, tmp_path,
                                                                                          monkeypatch, capsys):
    import harness.measure.data_bench as data_bench

    monkeypatch.setattr(data_bench, "WORKER_TIMEOUT_S", 0.001)  # no worker delivers its first batch that fast
    out = tmp_path / "bench.json"
    assert harness("data", "bench", "--min-seconds", "0",
                   "--clips", "4", "--workers", "0,1", "--out", str(out), "data.name=synthetic",
                   f"data.root={synth}", "data.num_frames=8", "data.crop_size=32", "data.jitter=[36,48]",
                   "data.num_classes=4", "data.train_videos=8") == 0
    record = json.loads(out.read_text())
    for row in record["shapes"]:
        assert row["loader_clips_per_s"]["1"] is None and row["loader_clips_per_s"]["0"] > 0  # in-process: no timeout
        assert "timed out" in row["errors"]["loader_clips_per_s w=1"]
    assert all(s["workers"] == 0 for s in record["paths"][0]["shapes"])
    printed = capsys.readouterr()
    assert "w=1: failed" in printed.out + printed.err and "timed out" in printed.out


def test_a_bench_cut_off_keeps_the_shapes_it_measured_baseline_first(synth, tmp_path, monkeypatch):
    import harness.measure.data_bench as data_bench

    measure, calls = data_bench._bench_shape, []

    def cut_off_at_the_second_shape(*args, **kwargs):
        calls.append(args[0])
        if len(calls) == 2:
            raise KeyboardInterrupt  # the call's time limit, or Ctrl-C
        return measure(*args, **kwargs)

    monkeypatch.setattr(data_bench, "_bench_shape", cut_off_at_the_second_shape)
    out = tmp_path / "bench.json"
    with pytest.raises(KeyboardInterrupt):
        harness("data", "bench", "--min-seconds", "0",
                "--clips", "4", "--workers", "0", "--out", str(out), "data.name=synthetic",
                f"data.root={synth}", "data.num_frames=8", "data.crop_size=32", "data.jitter=[36,48]",
                "data.num_classes=4", "data.train_videos=8")
    record = json.loads(out.read_text())
    DataBenchRecord(**{k: v for k, v in record.items() if k not in ("record_version", "kind", "provenance")})
    assert [(r["t"], r["s"]) for r in record["shapes"]] == [(8, 32)]  # the baseline's shape comes first
    assert record["planned_shapes"] > 1 and [p["name"] for p in record["paths"]] == ["pyav"]
    assert not list(tmp_path.glob(".*partial"))


def test_label_noise_shows_other_classes_and_leaves_the_rest_unchanged(synth, tmp_path):
    noisy = tmp_path / "noisy"
    make_synthetic_dataset(noisy, "smoke", progress=False, label_noise=0.5, **TINY)
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
    make_synthetic_dataset(hidden, "smoke", progress=False, hidden=0.5, **TINY)
    listed = {line.split()[0] for line in (hidden / "hidden_videos.csv").read_text().splitlines()}
    assert 0 < len(listed) < 12  # about half of the 8 + 4 videos
    for split in ("train", "val"):
        ann = load_annotations("synthetic", hidden, split)
        assert [r.label for r in ann.records] == [r.label for r in load_annotations("synthetic", synth, split).records]
        for record in ann.records:  # a video keeps its bytes unless it is listed as hiding its object
            rel = record.path.relative_to(hidden)
            assert (frame_difference(record.path, synth / rel) < 0.005) != (str(rel) in listed)
    cfg = preset_config("smoke", hidden=0.5, **TINY)
    rng = lambda: np.random.default_rng(0)  # noqa: E731
    shown, blank = render_video((0, 0), cfg, rng()), render_video((0, 0), cfg, rng(), show_target=False)
    changed = (np.abs(shown.astype(int) - blank.astype(int)).max(axis=-1) > 30).mean(axis=(1, 2))
    assert (changed > 0.03).all()  # every frame loses the object (a few % of these tiny frames), nothing else
    assert json.loads((hidden / "synth.json").read_text())["hidden"] == 0.5
    assert "hidden" not in json.loads((synth / "synth.json").read_text())
    with pytest.raises(SpecError, match="--hidden"):
        preset_config("smoke", hidden=1.0)


class _Counted(torch.utils.data.Dataset):
    """A dataset that notes each clip asked of it (in this process)."""

    def __init__(self, dataset):
        self.dataset, self.served = dataset, []

    def __getitem__(self, req):
        self.served.append(req)
        return self.dataset[req]


def _counted_dataset(synth) -> _Counted:
    from harness.cli_data import _compose
    from harness.data.clip_dataset import VideoClipDataset

    spec = _compose(["data.name=synthetic", f"data.root={synth}", "data.num_frames=8", "data.crop_size=32",
                     "data.jitter=[36,48]", "data.num_classes=4", "data.train_videos=8"])
    return _Counted(VideoClipDataset.from_spec(spec, "train"))


def _small_requests(ds: _Counted, n: int) -> list:
    from harness.measure.data_bench import _requests

    return _requests({"t": 4, "s": 32, "stride_range": (1, 2), "jitter_range": (36, 48)}, n,
                     len(ds.dataset.records), 0)


def test_the_loader_is_timed_as_one_stream_of_batches_cycling_through_the_clips(synth):
    from harness.measure.data_bench import _loader_rate

    ds = _counted_dataset(synth)
    reqs = _small_requests(ds, 6)
    rate = _loader_rate(ds, reqs, batch=2, workers=0, min_seconds=0.0)
    # two warm-up batches, then every batch of the clips once: the stream wraps around to the first clips
    assert rate > 0 and ds.served == reqs + reqs[:4]
    ds.served.clear()
    _loader_rate(ds, reqs, batch=2, workers=0, min_seconds=0.3)
    assert len(ds.served) > 12 and ds.served[:6] == ds.served[6:12] == reqs


def test_whole_items_in_process_are_timed_over_passes_until_the_seconds_have_passed(synth):
    from harness.measure.data_bench import _item_rate

    ds = _counted_dataset(synth)
    reqs = _small_requests(ds, 3)
    assert _item_rate(ds, reqs) > 0 and ds.served == reqs  # no seconds asked: one pass
    ds.served.clear()
    _item_rate(ds, reqs, min_seconds=0.2)
    assert len(ds.served) > 3 and len(ds.served) % 3 == 0 and ds.served[:3] == ds.served[3:6] == reqs


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


def test_cli_check_takes_the_counts_train_takes_from_the_data(synth, capsys):
    """Left unset, data.num_classes and data.train_videos come from the data, as train takes them; a multigrid plan
    too large for the data is refused as train refuses it."""
    given = [f"data.root={synth}", "data.name=synthetic", "data.num_frames=8", "data.crop_size=32"]
    assert harness("data", "check", "--json", *given, *SMALL_PLAN) == 0
    captured = capsys.readouterr()
    assert "data.train_videos=8 from" in captured.err and json.loads(captured.out)["settings_errors"] == []
    assert harness("data", "check", "--json", *given) == 1  # the recipe's batch of 64 over 8 GPUs: 8 videos are few
    report = json.loads(capsys.readouterr().out)
    assert any("clips per GPU" in e or "Phase" in e for e in report["settings_errors"]), report["settings_errors"]
