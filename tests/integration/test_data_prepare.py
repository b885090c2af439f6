"""`harness data prepare`: a re-encoded copy with short keyframe intervals that the same reader loads."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import av
import pytest

from harness.cli import main
from harness.data import load_annotations
from harness.data.decode import read_clip
from harness.data.prepare import encoded_size, prepare_dataset
from harness.data.scan import scan_video
from harness.records import PrepareRecord
from harness.spec import SpecError
from tests.integration.video_files import truncate, write_kinetics_list


def keyframes(path) -> list[int]:
    """Indices of the key frames of a video, in decoding order."""
    with av.open(str(path)) as container:
        return [i for i, packet in enumerate(p for p in container.demux(video=0) if p.size) if packet.is_keyframe]


@pytest.fixture
def dataset(tmp_path):
    root = write_kinetics_list(tmp_path / "src", videos=5, frames=12)
    write_kinetics_list(root, videos=2, frames=12, split="val")
    truncate(root / "train/c1/v001.mp4", root / "train/c1/v001.mp4", share=0.1)  # unusable: skipped, listed
    return root


def test_prepared_copy_has_short_gops_the_same_frames_and_annotations(dataset, tmp_path):
    out = tmp_path / "prepared"
    summary = prepare_dataset(dataset, out, name="kinetics", num_classes=4, short_side=16, keyframe_interval=4,
                              progress=False)
    assert (summary["videos"], summary["prepared"], summary["reused"]) == (7, 6, 0)
    assert [b["path"] for b in summary["bad"]] == [str(dataset / "train/c1/v001.mp4")]
    assert summary["storage_ratio"] == pytest.approx(summary["bytes"] / summary["source_bytes"])
    for split in ("train", "val"):
        source, copy = load_annotations("kinetics", dataset, split), load_annotations("kinetics", out, split)
        assert [r.label for r in copy.records] == [r.label for r in source.records]
        assert [r.path.relative_to(out) for r in copy.records] == [r.path.relative_to(dataset) for r in source.records]
    video = out / "train/c0/v000.mp4"
    info, before = scan_video(video), scan_video(dataset / "train/c0/v000.mp4")
    assert (info.frames, min(info.height, info.width)) == (before.frames, 16)  # every frame, scaled down
    assert keyframes(video) == [0, 4, 8] and keyframes(dataset / "train/c0/v000.mp4") == [0]
    assert read_clip(video, [0.0, 0.2, 0.4]).shape[:3] == (3, info.height, info.width)  # T×H×W×C
    manifest = json.loads((out / "prepare.json").read_text())
    assert manifest["complete"] is True and manifest["record_version"] == PrepareRecord.VERSION
    assert manifest["provenance"]["commit"]
    assert not list(out.rglob("*.partial"))


def x264_options(path) -> str:
    """The encoder settings x264 writes into every stream it makes (an SEI message that starts "x264 - core")."""
    data = path.read_bytes()
    start = data.index(b"x264 - core")
    return data[start:data.index(b"\x00", start)].decode("ascii", "replace")


@pytest.mark.parametrize("tune, cabac, deblock", [("fastdecode", "cabac=0", "deblock=0"),
                                                  (None, "cabac=1", "deblock=1")])
def test_prepare_tunes_x264_for_fast_decoding_unless_asked_not_to(dataset, tmp_path, tune, cabac, deblock):
    out = tmp_path / "prepared"
    prepare_dataset(dataset, out, name="kinetics", num_classes=4, short_side=16, keyframe_interval=4, tune=tune,
                    progress=False)
    options = x264_options(out / "train/c0/v000.mp4")
    assert cabac in options.split() and any(o.startswith(deblock) for o in options.split())
    assert json.loads((out / "prepare.json").read_text())["settings"]["tune"] == tune
    with pytest.raises(SpecError, match="other settings"):  # a copy is never finished with another tuning
        prepare_dataset(dataset, out, name="kinetics", num_classes=4, short_side=16, keyframe_interval=4,
                        tune=None if tune else "fastdecode", progress=False)
    with pytest.raises(SpecError, match="--tune"):
        prepare_dataset(dataset, tmp_path / "other", name="kinetics", num_classes=4, tune="film", progress=False)


def _frames_left_when_skipping_non_references(path) -> tuple[int, int]:
    """(frames decoded when FFmpeg leaves out every frame no other frame refers to, frames in the video)."""
    counts = []
    for skip in ("NONREF", "DEFAULT"):
        with av.open(str(path)) as container:
            stream = container.streams.video[0]
            stream.codec_context.skip_frame = skip
            counts.append(sum(1 for _ in container.decode(stream)))
    return counts[0], counts[1]


@pytest.mark.parametrize("b_frames, options", [(3, ("bframes=3", "b_pyramid=0", "b_adapt=0")),
                                               (None, ("b_pyramid=2", "b_adapt=1"))])
def test_prepare_codes_b_frames_that_no_frame_refers_to(dataset, tmp_path, b_frames, options):
    out = tmp_path / "prepared"
    prepare_dataset(dataset, out, name="kinetics", num_classes=4, short_side=16, keyframe_interval=8,
                    b_frames=b_frames, progress=False)
    assert set(options) <= set(x264_options(out / "train/c0/v000.mp4").split())
    assert json.loads((out / "prepare.json").read_text())["settings"]["b_frames"] == b_frames
    left, total = _frames_left_when_skipping_non_references(out / "train/c0/v000.mp4")
    if b_frames:  # keyframe, three B-frames, P-frame, three B-frames, ...: here 5 of the 12 are references
        assert total == 12 and left <= 5
    with pytest.raises(SpecError, match="other settings"):  # never finished with another frame structure
        prepare_dataset(dataset, out, name="kinetics", num_classes=4, short_side=16, keyframe_interval=8,
                        b_frames=2 if b_frames else 3, progress=False)


def test_cli_prepare_refuses_b_frames_x264_cannot_code(dataset, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["data", "prepare", "--out", str(tmp_path / "p"), "--b-frames", "17", "data.name=kinetics",
              f"data.root={dataset}", "data.num_classes=4"])
    assert exit_.value.code == 2 and "--b-frames" in capsys.readouterr().err


def test_prepare_resumes_and_refuses_other_settings_and_the_source_folder(dataset, tmp_path):
    out = tmp_path / "prepared"
    prepare_dataset(dataset, out, name="kinetics", num_classes=4, short_side=16, keyframe_interval=4, progress=False)
    (out / "val/c1/v001.mp4").unlink()  # as if the run had stopped before this video
    kept = (out / "train/c0/v000.mp4").stat().st_mtime_ns
    again = prepare_dataset(dataset, out, name="kinetics", num_classes=4, short_side=16, keyframe_interval=4,
                            workers=2, progress=False)
    assert (again["prepared"], again["reused"]) == (1, 5) and (out / "val/c1/v001.mp4").is_file()
    assert (out / "train/c0/v000.mp4").stat().st_mtime_ns == kept
    with pytest.raises(SpecError, match="other settings"):
        prepare_dataset(dataset, out, name="kinetics", num_classes=4, short_side=16, keyframe_interval=8,
                        progress=False)
    with pytest.raises(SpecError, match="inside it"):
        prepare_dataset(dataset, dataset / "copy", name="kinetics", num_classes=4, progress=False)
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(SpecError, match="not a prepared copy"):
        prepare_dataset(dataset, tmp_path / "busy", name="kinetics", num_classes=4, progress=False)


def test_a_video_folder_linked_from_another_disk_is_prepared_under_its_listed_name(dataset, tmp_path):
    # MMAction2's set-up links the video folders into data.root; the copy refused them as lying outside data.root.
    store, root = tmp_path / "store", tmp_path / "linked"
    (dataset / "train").rename(store)
    root.mkdir()
    (root / "train").symlink_to(store, target_is_directory=True)
    (dataset / "train.csv").rename(root / "train.csv")
    out = tmp_path / "prepared"
    summary = prepare_dataset(root, out, name="kinetics", num_classes=4, short_side=16, progress=False)
    assert (summary["videos"], summary["prepared"]) == (5, 4)
    assert (out / "train/c0/v000.mp4").is_file() and not (out / "train").is_symlink()


def test_encoded_size_keeps_the_aspect_and_even_sides():
    assert encoded_size(256, 340, 128) == (128, 170)
    assert encoded_size(33, 47, None) == (32, 46)
    assert encoded_size(100, 60, 320) == (100, 60)  # never upscaled


def test_cli_prepare_reports_bytes_and_how_to_train(dataset, tmp_path, capsys):
    out = tmp_path / "cli"
    assert main(["data", "prepare", "--out", str(out), "--quiet", "--workers", "1", "--keyframe-interval", "6",
                 "data.name=kinetics", f"data.root={dataset}", "data.num_classes=4", "data.crop_size=32",
                 "data.jitter=[36,48]"]) == 0
    text = capsys.readouterr().out
    assert "skipped: " in text and "MiB of source videos" in text and f"data.root={out.resolve()}" in text
    assert min(scan_video(out / "train/c0/v000.mp4").height, scan_video(out / "train/c0/v000.mp4").width) == 32
    assert main(["data", "prepare", "--out", str(out), "--quiet", "--short-side", "1", "--crf", "60",
                 "data.name=kinetics", f"data.root={dataset}"]) == 2
    assert capsys.readouterr().err.endswith("--short-side must be >= 2 (got 1); --crf must be in 0..51 (got 60).\n")


def test_bench_measures_every_loader_path_beside_what_the_trainer_consumes(tmp_path, capsys):
    root = write_kinetics_list(tmp_path / "k", 6, classes=3, frames=16)
    data = ["data.name=kinetics", f"data.root={root}", "data.num_classes=3", "data.num_frames=8",
            "data.crop_size=32", "data.jitter=[36,48]", "data.train_videos=6"]
    prepared, cache = tmp_path / "prepared", tmp_path / "cache"
    assert main(["data", "prepare", "--out", str(prepared), "--quiet", "--workers", "1", *data]) == 0
    assert main(["data", "cache", "--out", str(cache), "--workers", "1", "--quiet", *data]) == 0
    first = tmp_path / "first.json"
    bench = ["data", "bench", "--min-seconds", "0",
             "--clips", "4", "--workers", "0", "--cache", str(cache), "--prepared", str(prepared)]
    assert main([*bench, "--out", str(first), *data]) == 0
    record = json.loads(first.read_text())
    paths = {p["name"]: p for p in record["paths"]}
    assert set(paths) == {"pyav", "pyav_prepared", "cache"}
    assert paths["pyav"]["storage_ratio"] == 1.0
    assert paths["pyav_prepared"]["storage_ratio"] > 0 and paths["cache"]["storage_ratio"] > 1  # raw frames
    shapes = [(r["t"], r["s"]) for r in record["shapes"]]
    assert all([(p["t"], p["s"]) for p in path["shapes"]] == shapes for path in paths.values())
    assert all(p["clips_per_s"] > 0 for path in paths.values() for p in path["shapes"])
    assert "best loader clips/s per path" in capsys.readouterr().out

    profile = tmp_path / "profile.json"  # as `harness profile --out` writes it: per-GPU batch and step time
    profile.write_text(json.dumps({"shapes": [{"t": t, "s": s, "batch": 4, "median_ms": 100.0} for t, s in shapes]}))
    second = tmp_path / "second.json"
    assert main([*bench, "--consumer", str(profile), "--out", str(second), *data]) == 0
    assert all(r["consumer_clips_per_s"] == 40.0 for r in json.loads(second.read_text())["shapes"])
    printed = capsys.readouterr().out
    assert "the trainer consumes" in printed and "pyav_prepared keeps up at" in printed
    (tmp_path / "bad.json").write_text("[]")
    assert main([*bench, "--consumer", str(tmp_path / "bad.json"), *data]) == 2
    assert "not a `harness profile --out` record" in capsys.readouterr().err


def _red(clip) -> list[int]:
    """The frame index frames_pattern wrote into each frame's red channel."""
    return [int(round(v)) for v in (clip[..., 0].float().mean(dim=(1, 2)) / 16).tolist()]


@pytest.mark.parametrize("suffix", [".mp4", ".mkv", ".mov"])
def test_a_copy_keeping_every_other_frame_reads_the_sources_frames_at_their_times(tmp_path, suffix):
    from harness.data.decode import VideoReader
    from harness.data.prepare import PrepareSettings, reencode
    from tests.integration.video_files import write_video

    source = write_video(tmp_path / "src.mp4", n=16, fps=15)
    copy = tmp_path / f"copy{suffix}"
    assert reencode(source, copy, PrepareSettings(None, keyframe_interval=2, frame_step=2)) == 8
    with VideoReader(source) as src, VideoReader(copy) as half:
        # The source's rate and frame count, so strides keep counting source frames (Matroska stores no count:
        # estimated from the duration, which ends where the last kept frame does, one source frame early).
        assert (half.info.fps, half.info.frame_step) == (src.info.fps, 2)
        assert src.info.frames - half.info.frames in ((0,) if suffix != ".mkv" else (1,))
        even = [k / 15 for k in (4, 6, 8, 10)]
        assert _red(half.frames_at(even)) == _red(src.frames_at(even)) == [4, 6, 8, 10]
        # odd frames were dropped: the nearest kept frame instead, ties to the earlier (as a plan's frame indices)
        assert _red(half.frames_at([5 / 15, 9 / 15])) == [4, 8]


def test_a_copy_keeping_every_fourth_frame_gives_the_kept_frame_nearest_each_time(tmp_path):
    from harness.data.clip_plan import nearest_frame_indices
    from harness.data.decode import VideoReader
    from harness.data.prepare import PrepareSettings, reencode
    from tests.integration.video_files import write_video

    copy = tmp_path / "copy.mp4"
    reencode(write_video(tmp_path / "src.mp4", n=16, fps=15), copy, PrepareSettings(None, 2, frame_step=4))
    times = [k / 15 for k in (5, 7, 9, 13)]  # frame 5 lies 1 after kept frame 4 and 3 before kept frame 8
    with VideoReader(copy) as reader:
        assert _red(reader.frames_at(times)) == [4, 8, 8, 12]
    assert [4 * i for i in nearest_frame_indices(times, 15 / 4)] == [4, 8, 8, 12]


def test_windows_between_kept_frames_seek_instead_of_decoding_from_the_start(tmp_path, monkeypatch):
    from harness.data.decode import VideoReader
    from harness.data.prepare import PrepareSettings, reencode
    from tests.integration.video_files import write_video

    copy = tmp_path / "copy.mp4"
    reencode(write_video(tmp_path / "src.mp4", n=16, fps=15), copy, PrepareSettings(None, 2, frame_step=2))
    seeks = []
    seek = VideoReader._seek
    monkeypatch.setattr(VideoReader, "_seek", lambda self, target: seeks.append(target) or seek(self, target))
    with VideoReader(copy) as reader:
        for first in (5, 7, 9):  # odd source frames: the first frame of the window lies one source frame later
            assert _red(reader.frames_at([first / 15, (first + 2) / 15]))[0] in (first - 1, first + 1)
    assert 0.0 not in seeks  # none overshot its window and fell back to decoding from the beginning


def test_prepare_with_a_frame_step_says_which_strides_get_nearest_frames_and_refuses_avi(dataset, tmp_path, capsys):
    out = tmp_path / "half"
    assert main(["data", "prepare", "--out", str(out), "--quiet", "--workers", "1", "--frame-step", "2",
                 "data.name=kinetics", f"data.root={dataset}", "data.num_classes=4", "data.num_frames=8",
                 "data.crop_size=32", "data.jitter=[36,48]"]) == 0
    text = capsys.readouterr().out
    assert "every 2 frames kept" in text and "not multiples of --frame-step 2" in text
    assert json.loads((out / "prepare.json").read_text())["settings"]["frame_step"] == 2
    assert scan_video(out / "train/c0/v000.mp4").frames == scan_video(dataset / "train/c0/v000.mp4").frames
    avi = write_kinetics_list(tmp_path / "avi", videos=2, frames=12)
    for path in avi.rglob("*.mp4"):
        path.rename(path.with_suffix(".avi"))
    (avi / "train.csv").write_text((avi / "train.csv").read_text().replace(".mp4", ".avi"))
    with pytest.raises(SpecError, match="AVI cannot store"):
        prepare_dataset(avi, tmp_path / "avi-half", name="kinetics", num_classes=4, frame_step=2, progress=False)


def test_a_copy_prepared_before_frame_steps_existed_resumes(dataset, tmp_path):
    out = tmp_path / "prepared"
    prepare_dataset(dataset, out, name="kinetics", num_classes=4, short_side=16, keyframe_interval=4, progress=False)
    manifest = json.loads((out / "prepare.json").read_text())
    del manifest["settings"]["frame_step"]  # as written by earlier versions
    (out / "prepare.json").write_text(json.dumps(manifest))
    again = prepare_dataset(dataset, out, name="kinetics", num_classes=4, short_side=16, keyframe_interval=4,
                            progress=False)
    assert again["prepared"] == 0 and again["reused"] == 6


@pytest.mark.parametrize("suffix, codec", [("webm", "libvpx"), ("avi", "mpeg4")])
def test_prepare_skips_a_cut_source_that_would_re_encode_into_a_copy_that_looks_whole(tmp_path, suffix, codec):
    # A cut WebM or AVI decodes without an error up to the cut; re-encoded, the copy would be a shorter video that
    # passes every check. It is skipped and listed, as `harness data check` names the source truncated.
    from tests.integration.video_files import write_video

    root = tmp_path / "src"
    whole = write_video(root / f"whole.{suffix}", n=30, codec=codec)
    truncate(write_video(tmp_path / f"v.{suffix}", n=30, codec=codec), root / f"cut.{suffix}", share=0.5)
    (root / "train.csv").write_text(f"whole.{suffix} 0\ncut.{suffix} 1\n")
    summary = prepare_dataset(root, tmp_path / "out", name="kinetics", num_classes=2, short_side=16,
                              progress=False)
    assert summary["prepared"] == 1 and [b["path"] for b in summary["bad"]] == [str(root / f"cut.{suffix}")]
    assert "truncated" in summary["bad"][0]["error"] and not (tmp_path / "out" / f"cut.{suffix}").exists()
    assert scan_video(tmp_path / "out" / f"whole.{suffix}").frames == scan_video(whole).frames


def _children(pid: int) -> set[int]:
    """The processes whose parent is `pid` (Linux's /proc)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def _running(pid: int) -> bool:
    """Whether process `pid` exists and has not ended (a zombie has ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel ends the workers on Linux only")
def test_workers_end_when_prepare_is_killed(tmp_path):
    root = write_kinetics_list(tmp_path / "src", videos=24, frames=64)
    out = tmp_path / "prepared"
    command = [sys.executable, "-m", "harness", "data", "prepare", "data.name=kinetics", f"data.root={root}",
               "data.num_classes=4", "--out", str(out), "--workers", "2", "--quiet"]
    prepare = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: set[int] = set()
    deadline = time.monotonic() + 120
    while len(workers) < 2 and prepare.poll() is None and time.monotonic() < deadline:
        workers = _children(prepare.pid)
        time.sleep(0.01)
    prepare.kill()
    prepare.wait()
    assert len(workers) == 2 and not json.loads((out / "prepare.json").read_text())["complete"]  # killed mid-work
    deadline = time.monotonic() + 5
    while any(map(_running, workers)) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in workers if _running(pid)]
    for pid in left:  # not to leave them to the machine
        os.kill(pid, signal.SIGKILL)
    assert not left, "the workers outlived the killed prepare"
