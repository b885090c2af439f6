"""The trainer facing damaged checkpoints, unwritable folders and broken datasets: clear messages, no tracebacks."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from harness.config import compose
from harness.data.check import check_dataset, min_clip_frames
from harness.schedule import build_plan
from harness.spec import SpecError
from harness.train import checkpoint as ckpt
from harness.train.loop import train

from .conftest import smoke_overrides, tiny_synthetic
from .run_overrides import tiny_overrides
from .video_files import write_video


@pytest.fixture(scope="module")
def tiny_root(tmp_path_factory) -> Path:
    """8 train / 4 val synthetic videos of 16 frames: a baseline run of 8 iterations takes about a second."""
    return tiny_synthetic(tmp_path_factory, "tiny", videos=8, val_videos=4)


def test_resume_falls_back_past_damaged_checkpoints_and_matches(tiny_root, tmp_path, caplog):
    out = tmp_path / "run"
    overrides = tiny_overrides(tiny_root, out, "train.checkpoint_every=2", "train.keep_checkpoints=3", "resume=true")
    with caplog.at_level(logging.INFO, logger="harness.train"):
        whole = train(compose(overrides))
    assert "holds no checkpoint: starting from scratch" in caplog.text
    kept = ckpt.list_checkpoints(out / "checkpoints")
    assert len(kept) == 3
    kept[-1].write_bytes(kept[-1].read_bytes()[:1000])  # truncated
    kept[-2].write_bytes(b"")  # empty
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="harness.train"):
        resumed = train(compose(overrides))
    assert kept[-1].name in caplog.text and kept[-2].name in caplog.text and "falling back" in caplog.text
    assert resumed["resumed_from_iteration"] == int(kept[0].stem.split("_")[1])
    assert resumed["epoch_losses"] == whole["epoch_losses"] and resumed["final"] == whole["final"]


def test_a_fresh_run_keeps_an_earlier_runs_checkpoints_aside_so_a_resume_continues_only_itself(tiny_root, tmp_path,
                                                                                               monkeypatch, caplog):
    """resume=false in a folder an earlier run trained in: the earlier run's checkpoints, of later iterations than
    this run reaches before it is stopped, would be what resume=true takes. They are moved to superseded/, whole."""
    out = tmp_path / "run"
    overrides = tiny_overrides(tiny_root, out, "train.checkpoint_every=2", "train.keep_checkpoints=3")
    earlier = train(compose(overrides))
    earlier_files = {p.name: p.read_bytes() for p in ckpt.list_checkpoints(out / "checkpoints")}
    assert max(earlier_files) == "checkpoint_000000008.pt"

    class Stopped(Exception):
        pass

    def save_then_stop(*args, **kwargs):  # the process ends right after its first checkpoint
        save(*args, **kwargs)
        raise Stopped

    save = ckpt.save_checkpoint
    with monkeypatch.context() as m, caplog.at_level(logging.INFO, logger="harness.train"), pytest.raises(Stopped):
        m.setattr(ckpt, "save_checkpoint", save_then_stop)
        train(compose(overrides))  # resume=false, the default
    (aside,) = (out / "superseded").iterdir()
    assert f"were moved to {aside}" in caplog.text
    assert {p.name: p.read_bytes() for p in ckpt.list_checkpoints(aside / "checkpoints")} == earlier_files
    assert (aside / "record.json").is_file() and not (out / "record.json").exists()
    assert [p.name for p in ckpt.list_checkpoints(out / "checkpoints")] == ["checkpoint_000000002.pt"]
    resumed = train(compose([*overrides, "resume=true"]))
    assert resumed["resumed_from_iteration"] == 2  # this run's checkpoint, not the earlier run's of iteration 8
    assert resumed["epoch_losses"] == earlier["epoch_losses"] and resumed["final"] == earlier["final"]


def test_unwritable_output_dir_fails_before_any_work(tmp_path):
    spec = compose(smoke_overrides(tmp_path / "no-data-needed", "/proc/harness-test/out"))
    with pytest.raises(SpecError, match="'output_dir' '/proc/harness-test/out' is not a writable folder"):
        train(spec)


def test_an_unwritable_results_folder_fails_before_any_work(tmp_path, capsys):
    """A suite run's record is also copied to the results folder: found unwritable at the start, not the end."""
    from harness.cli import main

    spec = compose([*smoke_overrides(tmp_path / "no-data-needed", tmp_path / "out"), "suite=smoke",
                    "variant=baseline"])
    with pytest.raises(SpecError, match="'HARNESS_RESULTS_DIR' '/proc/harness-test/results/smoke/smoke' is not a "
                                        "writable folder"):
        train(spec, results=Path("/proc/harness-test/results"))
    code = main(["reproduce", "--suite", "smoke", "--scale", "smoke", "--results", "/proc/harness-test/results"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "'--results' '/proc/harness-test/results/smoke' is not a writable folder" in err


def test_videos_shorter_than_a_clip_are_skipped_as_data_check_says(tiny_root, tmp_path):
    root = tmp_path / "data"
    shutil.copytree(tiny_root, root)
    short = []
    for split in ("train", "val"):  # a 1-frame and a 5-frame video in each split
        videos = [line.split()[0] for line in (root / f"{split}.csv").read_text().splitlines()]
        write_video(root / videos[0], n=1, w=64, h=48)
        write_video(root / videos[1], n=5, w=64, h=48)
        short += [Path(videos[0]).name, Path(videos[1]).name]
    spec = compose(tiny_overrides(root, tmp_path / "run"))
    min_frames = min_clip_frames(build_plan(spec))
    assert min_frames == 8  # the baseline's clips
    report = check_dataset("synthetic", root, 4, min_frames)
    flagged = {Path(u["path"]).name: u["reason"].split(":")[0] for u in report["unreadable"]}
    record = train(spec)
    skipped = {Path(f["path"]).name: f["reason"].split(":")[0] for f in record["bad_videos"]["files"]}
    assert skipped == flagged == dict.fromkeys(short, "too_short")
    assert record["bad_videos"]["by_reason"] == {"too_short": 4} and record["bad_videos"]["failed_reads"] >= 4
    assert (record["final"]["videos"], record["final"]["videos_scored"]) == (4, 2)  # validation skips them too


def test_data_check_applies_the_scale_as_train_does(tiny_root, capsys):
    """`scale=smoke` halves the recipe's frames: data check's too-short threshold follows, as training's does."""
    import json

    from harness import cli_train
    from harness.cli import main

    for scale in ([], ["scale=smoke"]):
        overrides = ["data.name=synthetic", f"data.root={tiny_root}", "data.num_classes=4", "data.train_videos=8",
                     *scale]
        # multigrid's batches need more than 8 videos at either scale: refused, as train refuses it
        assert main(["data", "check", *overrides, "--json"]) == 1
        checked = json.loads(capsys.readouterr().out)["min_frames"]
        # the planned clips do not depend on the data's size (the recipe's batches need more than 8 videos)
        larger = [*cli_train.scaled_overrides(overrides), "data.train_videos=100000"]
        assert checked == min_clip_frames(build_plan(compose(larger)))
        assert checked == (4 if scale else 8)


@pytest.mark.parametrize(("recipe", "frames"), [("k400_slowfast_r50_8x8", 32), ("ssv2_slowfast_r50_16x8", 1)])
def test_the_shortest_usable_video(recipe, frames):
    """The baseline clip for strided windows; any video for SSv2's segment sampling, which repeats frames of
    videos shorter than its 64-frame clips (most SSv2 videos), as the reference does."""
    spec = compose([f"recipe={recipe}", "multigrid.long_cycle=false", "multigrid.short_cycle=false"])
    assert min_clip_frames(build_plan(spec)) == frames


@pytest.mark.parametrize("workers", [0, 1])
def test_a_dataset_of_bad_videos_ends_with_its_message_not_a_traceback(tiny_root, tmp_path, capsys, workers):
    from harness.cli import main

    root = tmp_path / "data"
    shutil.copytree(tiny_root, root)
    for line in (root / "train.csv").read_text().splitlines():
        (root / line.split()[0]).write_text("not a video")
    code = main(["train", *tiny_overrides(root, tmp_path / "run", f"train.num_workers={workers}")])
    err = capsys.readouterr().err
    assert code == 2
    assert "harness train: error: 11 videos in a row could not be read (last: " in err  # after the progress bar
    assert "Run 'harness data check' on the dataset." in err and "Traceback" not in err and "Caught" not in err


def test_a_validation_split_of_bad_videos_ends_with_its_message_not_a_nan_score(tiny_root, tmp_path, capsys):
    from harness.cli import main

    root = tmp_path / "data"
    shutil.copytree(tiny_root, root)
    for line in (root / "val.csv").read_text().splitlines():
        (root / line.split()[0]).write_text("not a video")
    code = main(["train", *tiny_overrides(root, tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    # Before training, not after it: the run would have trained for nothing.
    assert "harness train: error: None of the 4 validation videos could be read (e.g. " in err
    assert "Run 'harness data check' on the dataset." in err
    assert not (tmp_path / "run" / "record.json").exists()  # no record of a NaN accuracy
    assert not list((tmp_path / "run").rglob("*.pt"))  # no checkpoint: not one step was trained


def test_a_run_fine_tunes_from_another_runs_checkpoint(tiny_root, tmp_path, caplog):
    """model.pretrained naming a checkpoint harness train wrote: the next run starts from those weights (as the
    paper's SSv2 and Charades recipes start from Kinetics), and says so in its log."""
    first = tmp_path / "first"
    train(compose(tiny_overrides(tiny_root, first, "train.checkpoint_every=4")))
    checkpoint = ckpt.list_checkpoints(first / "checkpoints")[-1]
    with caplog.at_level(logging.INFO, logger="harness.models"):
        record = train(compose(tiny_overrides(tiny_root, tmp_path / "second", f"model.pretrained={checkpoint}")))
    assert f"started from {checkpoint}: every layer, the classifier included" in caplog.text
    assert record["spec"]["model"]["pretrained"] == str(checkpoint) and record["final"]["top1"] is not None
    # The first run's output_dir stands for its newest checkpoint; a folder without checkpoints is named.
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="harness.models"):
        train(compose(tiny_overrides(tiny_root, tmp_path / "third", f"model.pretrained={first}")))
    assert f"started from {checkpoint}:" in caplog.text
    with pytest.raises(SpecError, match="is a folder without harness train checkpoints"):
        train(compose(tiny_overrides(tiny_root, tmp_path / "fourth", f"model.pretrained={tmp_path}")))
    # A damaged newest checkpoint is passed over for an older one, as a resume passes it over.
    older = ckpt.list_checkpoints(first / "checkpoints")[-2]
    checkpoint.write_bytes(checkpoint.read_bytes()[:1000])
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="harness.models"):
        train(compose(tiny_overrides(tiny_root, tmp_path / "fifth", f"model.pretrained={first}")))
    assert f"checkpoint {checkpoint} cannot be read, trying an older one" in caplog.text
    assert f"started from {older}:" in caplog.text


def test_a_fine_tuning_run_resumes_without_its_pretrained_file(tiny_root, tmp_path):
    """Its checkpoint holds every weight: a resume refused to start because model.pretrained had been moved."""
    first = tmp_path / "first"
    train(compose(tiny_overrides(tiny_root, first, "train.checkpoint_every=4")))
    weights = tmp_path / "weights.pt"
    shutil.copy(ckpt.list_checkpoints(first / "checkpoints")[-1], weights)
    out = tmp_path / "fine_tuned"
    overrides = tiny_overrides(tiny_root, out, f"model.pretrained={weights}", "train.checkpoint_every=2",
                               "train.keep_checkpoints=3", "resume=true")
    whole = train(compose(overrides))
    kept = ckpt.list_checkpoints(out / "checkpoints")
    for later in kept[1:]:  # as if the run had stopped after its first kept checkpoint
        later.unlink()
    weights.rename(tmp_path / "moved.pt")
    resumed = train(compose(overrides))
    assert resumed["resumed_from_iteration"] == int(kept[0].stem.split("_")[1]) > 0
    assert resumed["epoch_losses"] == whole["epoch_losses"] and resumed["final"] == whole["final"]


def test_a_run_refused_for_its_data_root_leaves_nothing_in_output_dir(tmp_path, capsys):
    from harness.cli import main

    made, kept = tmp_path / "new" / "run", tmp_path / "kept"
    kept.mkdir()
    (kept / "notes.txt").write_text("mine\n")
    for out in (made, kept):
        code = main(["train", "data.name=synthetic", f"data.root={tmp_path / 'nonexistent'}", f"output_dir={out}",
                     "scale=smoke"])
        assert code == 2 and "is not a directory" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept"]  # the folders it made are gone
    assert [p.name for p in kept.iterdir()] == ["notes.txt"]  # and no lock file left beside what was there
