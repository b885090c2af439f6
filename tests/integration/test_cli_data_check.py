"""`harness data check`: the broken videos and annotation lines it names, and the settings train refuses."""

from __future__ import annotations

import json
import shutil

import pytest

from harness.data import load_annotations
from harness.spec import SpecError
from tests.integration.video_files import truncate, write_video

from .data_cli import harness

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
