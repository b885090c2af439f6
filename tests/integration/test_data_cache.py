"""The decoded-frame cache: frames equal PyAV decoding, bad videos recorded, the dataset's clips unchanged with
`data.cache`, mismatched caches refused, resumable atomic builds, and `harness data cache` / `bench --cache`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from torchvision.transforms.v2 import functional as TF

from harness.cli import main
from harness.data import VideoReader, load_annotations
from harness.data.cache_build import _assemble, _build_chunk, _prepare_build, build_frame_cache
from harness.data.cache_read import FrameCache
from harness.data.check import check_dataset
from harness.data.clip_dataset import VideoClipDataset
from harness.data.sampler import ClipRequest
from harness.spec import SpecError, spec_from_dict
from tests.integration.data_cli import harness
from tests.integration.video_files import small_spec, truncate, write_kinetics_list, write_video

# Sources unlike the synthetic data: other codecs, containers, frame rates, sizes, a rotated phone video.
GOOD = {"odd/vp9.webm": {"n": 20, "fps": 24, "codec": "libvpx-vp9"},
        "odd/mpeg4.avi": {"n": 18, "fps": 25, "codec": "mpeg4", "h": 40, "w": 40},
        "odd/rotated.mp4": {"n": 10, "rotation": 90}}
BAD = ("bad/zero.mp4", "bad/text.mp4", "bad/cut.mp4", "bad/cut.webm", "bad/missing.mp4", "bad/folder.mp4")


def _add_videos(root: Path) -> list[str]:
    """The GOOD and BAD videos under `root`; returns their annotation lines."""
    for rel, kw in GOOD.items():
        write_video(root / rel, **kw)
    (root / "bad").mkdir()
    (root / "bad/zero.mp4").write_bytes(b"")
    (root / "bad/text.mp4").write_text("hello")
    (root / "bad/folder.mp4").mkdir()
    truncate(root / "train/c0/v000.mp4", root / "bad/cut.mp4")
    truncate(root / "odd/vp9.webm", root / "bad/cut.webm")
    return [f"{rel} 1\n" for rel in [*GOOD, *BAD]]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> Path:
    """8 train videos (+ the odd and bad ones) and a val split of 3; each split in its own list."""
    root = write_kinetics_list(tmp_path_factory.mktemp("mixed"), 8, classes=4, frames=16)
    lines = (root / "train.csv").read_text().splitlines(keepends=True) + _add_videos(root)
    (root / "train.csv").write_text("".join(lines))
    for i in range(3):
        write_video(root / f"val/v{i}.mp4", n=14, seed=100 + i)
    (root / "val.csv").write_text("".join(f"val/v{i}.mp4 {i}\n" for i in range(3)))
    return root


@pytest.fixture(scope="module")
def mixed_cache(mixed, tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("caches") / "mixed"
    summary = build_frame_cache(mixed, out, name="kinetics", num_classes=4, workers=2, progress=False, chunk_videos=4)
    return out, summary


def _probe_times(duration: float, fps: float, rng: np.random.Generator) -> list[list[float]]:
    """Windows like the loader asks for, plus the edge cases: before the start, past the end, repeated frames."""
    windows = [[-0.2, 0.0], [duration + 1.0, duration + 2.0], [0.0, 0.0, 0.0], [duration - 0.01] * 3]
    for _ in range(6):
        start, stride, t = rng.uniform(0, duration), int(rng.integers(1, 4)), int(rng.integers(1, 9))
        windows.append([start + i * stride / 30.0 for i in range(t)])
        windows.append([start + i * stride / fps for i in range(t)])  # exactly on frame times: ties
    return windows


def test_cached_frames_equal_decoded_frames(mixed, mixed_cache):
    out, summary = mixed_cache
    assert summary["videos"] == 8 + len(GOOD) + len(BAD) + 3 and summary["cached"] == 8 + len(GOOD) + 3
    assert not list(out.parent.glob(".*"))  # no staging or .partial left behind
    cache = FrameCache(out, mixed)
    rng = np.random.default_rng(0)
    paths = [*sorted(mixed.glob("train/c*/*.mp4")), *(mixed / p for p in GOOD), *sorted(mixed.glob("val/*.mp4"))]
    for path in paths:
        with VideoReader(path) as video, cache.reader(path) as cached:
            i, c = video.info, cached.info
            assert (c.fps, c.duration, c.frames) == (i.fps, i.duration, i.frames)  # clip times depend on them
            assert cached.frame_times([0, 3]) == video.frame_times([0, 3])
            for times in _probe_times(i.duration, i.fps, rng):
                a, b = video.frames_at(times), cached.frames_at(times)
                assert a.dtype == b.dtype == torch.uint8 and torch.equal(a, b), (path, times)
    rotated = cache.reader(mixed / "odd/rotated.mp4")
    assert (rotated.info.height, rotated.info.width, rotated.info.rotation) == (48, 32, 90)


def test_strided_picks_are_views_of_the_map_only_when_asked(mixed, mixed_cache):
    times = [i * 2 / 15 for i in range(4)]  # every other frame of a 15 fps video
    view = FrameCache(mixed_cache[0], mixed, views=True).reader(mixed / "train/c0/v000.mp4")
    clip = view.frames_at(times)
    assert np.shares_memory(clip.numpy(), view._frames) and not view._frames.flags.writeable
    assert not np.shares_memory(view.frames_at([*times, times[-1]]).numpy(), view._frames)  # repeats: a gather
    copy = FrameCache(mixed_cache[0], mixed).reader(mixed / "train/c0/v000.mp4")
    fresh = copy.frames_at(times)
    assert torch.equal(fresh, clip) and not np.shares_memory(fresh.numpy(), copy._frames)
    fresh[:] = 0  # the default: a writable copy, as VideoReader returns
    assert copy.frames_at(times).float().mean() > 0


def test_bad_videos_are_recorded_with_the_checks_reasons(mixed, mixed_cache):
    out, summary = mixed_cache
    index = json.loads((out / "index.json").read_text())
    assert set(index["bad"]) == set(BAD) and {b["path"] for b in summary["bad"]} == set(BAD)
    assert index["bad"]["bad/zero.mp4"]["reason"] == "empty"
    assert index["bad"]["bad/missing.mp4"]["reason"] == "missing"
    assert index["bad"]["bad/folder.mp4"]["reason"] == "not_a_video"
    (mixed / "bad/folder.mp4").rmdir()  # `harness data check` cannot open a folder; compare the files only
    try:
        report = check_dataset("kinetics", mixed, num_classes=4)
    finally:
        (mixed / "bad/folder.mp4").mkdir()
    checked = {Path(u["path"]).relative_to(mixed).as_posix(): u["reason"].split(":")[0] for u in report["unreadable"]}
    assert checked == {**{k: v["reason"] for k, v in index["bad"].items()}, "bad/folder.mp4": "missing"}
    # the dataset raises the recorded kind, so the loader replaces the video as it does without a cache
    with pytest.raises(Exception, match="^empty: ") as err:
        FrameCache(out, mixed).reader(mixed / "bad/zero.mp4")
    assert err.type.__name__ == "VideoError" and err.value.kind == "empty"


def _spec(root: Path, cache: Path | None = None, name: str = "kinetics"):
    return spec_from_dict(small_spec(name=name, root=str(root), cache=str(cache) if cache else None))


def test_dataset_clips_are_the_same_with_the_cache(tmp_path):
    root = write_kinetics_list(tmp_path / "k", 6, classes=3, frames=20)
    write_kinetics_list(root, 2, classes=2, frames=20, split="val")
    out = tmp_path / "cache"
    build_frame_cache(root, out, name="kinetics", num_classes=4, workers=1, progress=False)
    for split in ("train", "val"):
        plain = VideoClipDataset.from_spec(_spec(root), split, eval_clips=2)
        cached = VideoClipDataset.from_spec(_spec(root, out), split, eval_clips=2)
        assert plain.cache is None and cached.cache is not None
        if split == "train":
            items = [ClipRequest(i % 6, t, s, (1, 3), (36, 48), (7, i)) for i, (t, s) in
                     enumerate([(8, 32), (4, 16), (2, 24), (16, 32), (8, 16), (1, 32)] * 2)]
            items.append(3)  # a bare index: the baseline shape
        else:
            items = list(range(len(plain)))
        for item in items:
            a, b = plain[item], cached[item]
            assert a.keys() == b.keys()
            for key in a:
                same = torch.equal(a[key], b[key]) if isinstance(a[key], torch.Tensor) else a[key] == b[key]
                assert same, (split, item, key)


def test_dataset_refuses_a_cache_that_does_not_match(tmp_path, mixed, mixed_cache):
    out = mixed_cache[0]
    with pytest.raises(SpecError, match=r"data.cache=.*holds no frame cache.*harness data cache"):
        VideoClipDataset.from_spec(_spec(mixed, tmp_path / "nothing"))
    with pytest.raises(SpecError, match=r"data.cache=.*built for data.name=kinetics.*harness data cache"):
        VideoClipDataset.from_spec(_spec(mixed, out, name="synthetic"))
    other = tmp_path / "other"  # the cached train videos (copied: x264 output is not always byte-identical)
    shutil.copytree(mixed / "train", other / "train")
    lines = [f"train/c{i % 4}/v{i:03d}.mp4 {i % 4}\n" for i in range(8)]
    (other / "train.csv").write_text("".join(lines) + "new/a.mp4 0\nnew/b.mp4 1\n")  # 2 videos the cache lacks
    with pytest.raises(SpecError, match=r"data.cache=.* does not hold 2 of the 10 videos.*harness data cache"):
        VideoClipDataset.from_spec(_spec(other, out))
    # same file names, other videos (another synthetic seed, say): caught by the file sizes
    (other / "train.csv").write_text("".join(lines))
    VideoClipDataset.from_spec(_spec(other, out))
    write_video(other / "train/c1/v001.mp4", n=30, seed=9)
    with pytest.raises(SpecError, match=r"holds other versions of 1 of the 8 videos.*harness data cache"):
        VideoClipDataset.from_spec(_spec(other, out))
    # the same dataset copied elsewhere keeps its cache (keys are relative to data.root)
    copy = tmp_path / "copy"
    shutil.copytree(mixed, copy, symlinks=True)
    ds = VideoClipDataset.from_spec(_spec(copy, out))
    assert ds[ClipRequest(0, 4, 16, (1, 2), (36, 48), (0,))]["clip"].shape == (3, 4, 16, 16)
    # a video recorded as bad is replaced by another, with its recorded reason, as without the cache
    zero = next(i for i, r in enumerate(ds.records) if r.path.name == "zero.mp4")
    item = ds[ClipRequest(zero, 4, 16, (1, 2), (36, 48), (0,))]
    assert item["index"] != zero and item["failures"][0][1].startswith("empty: ")


def test_short_side_downscales_once(tmp_path):
    root = write_kinetics_list(tmp_path / "k", 2, classes=2, frames=12)
    build_frame_cache(root, tmp_path / "c", name="kinetics", num_classes=2, short_side=16, workers=1, progress=False)
    cache = FrameCache(tmp_path / "c", root)
    path = root / "train/c1/v001.mp4"
    reader = cache.reader(path)
    assert (reader.info.height, reader.info.width) == (16, 24) and cache.short_side == 16
    decoded = VideoReader(path).frames_at([0.0, 0.2])
    expected = TF.resize(decoded.permute(0, 3, 1, 2), [16, 24], antialias=True).permute(0, 2, 3, 1)
    assert torch.equal(reader.frames_at([0.0, 0.2]), expected)


def test_interrupted_build_resumes_and_replaces_atomically(tmp_path):
    root = write_kinetics_list(tmp_path / "k", 6, classes=2, frames=12)
    out = tmp_path / "cache"
    # An interrupted build: staging prepared, chunk 0 finished, chunk 1 half-written.
    chunks, staging = _prepare_build("kinetics", root, out, 2, ("train", "val"), None, 2)[2:4]
    _build_chunk((str(staging), 0, chunks[0], None))
    (staging / "frames-00001.u8.partial").write_bytes(b"half")
    summary = build_frame_cache(root, out, name="kinetics", num_classes=2, workers=1, progress=False, chunk_videos=2)
    assert summary["resumed_chunks"] == 1 and summary["cached"] == 6 and not staging.exists()
    assert sorted(p.name for p in out.iterdir()) == ["frames-00000.u8", "frames-00001.u8", "frames-00002.u8",
                                                     "index.json", "times.npy"]
    fresh = tmp_path / "fresh"
    build_frame_cache(root, fresh, name="kinetics", num_classes=2, workers=1, progress=False, chunk_videos=2)
    for name in ("frames-00000.u8", "frames-00001.u8", "frames-00002.u8", "times.npy"):
        assert (out / name).read_bytes() == (fresh / name).read_bytes()
    # The same build again keeps the cache; other settings (or other videos) rebuild it in place.
    same = build_frame_cache(root, out, name="kinetics", num_classes=2, workers=1, progress=False, chunk_videos=2)
    assert same["reused"] and same["cached"] == 6 and not staging.exists()
    again = build_frame_cache(root, out, name="kinetics", num_classes=2, short_side=8, workers=1, progress=False)
    assert not again["reused"] and again["resumed_chunks"] == 0 and FrameCache(out).short_side == 8
    # A folder holding anything else is refused.
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine/notes.txt").write_text("keep")
    with pytest.raises(SpecError, match="not a frame cache"):
        build_frame_cache(root, tmp_path / "mine", name="kinetics", num_classes=2, progress=False)


@pytest.fixture(scope="module")
def twenty(tmp_path_factory) -> Path:
    """20 videos: two chunks of `harness data cache` (16 videos each at most)."""
    return write_kinetics_list(tmp_path_factory.mktemp("twenty"), 20, classes=2, frames=8)


def _cache(root: Path, out: Path, capsys, *flags: str) -> dict:
    """`harness data cache` of `root` into `out`; its JSON summary."""
    capsys.readouterr()
    assert main(["data", "cache", "--out", str(out), "--workers", "1", "--quiet", "--json", *flags,
                 "data.name=kinetics", f"data.root={root}", "data.num_classes=2"]) == 0
    return json.loads(capsys.readouterr().out)


def _assembled_not_moved(root: Path, out: Path, short_side: int | None = None) -> Path:
    """What a build stopped between assembling its cache and moving it into place leaves: the staging folder."""
    _, counts, chunks, staging, settings = _prepare_build("kinetics", root, out, 2, ("train", "val"), short_side,
                                                          None)
    markers = {k: _build_chunk((str(staging), k, chunk, short_side)) for k, chunk in enumerate(chunks)}
    _assemble(staging, markers, len(chunks), "kinetics", root, 2, counts, settings, 0.0)
    return staging


def _inodes(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_ino for p in folder.iterdir()}


def test_a_build_stopped_before_it_moved_the_cache_into_place_moves_it_on_the_next_run(twenty, tmp_path, capsys):
    out = tmp_path / "cache"
    staging = _assembled_not_moved(twenty, out)
    built = _inodes(staging)
    summary = _cache(twenty, out, capsys)
    assert summary["cached"] == 20 and summary["resumed_chunks"] == 2 and not summary["reused"]
    assert _inodes(out) == built and not staging.exists()  # the finished files, moved: nothing decoded again
    # Stopped while it replaced a cache of other settings: the new one half-way in place, the old one aside.
    staging = _assembled_not_moved(twenty, out, short_side=8)
    old = out.rename(out.with_name(f".{out.name}.old"))
    built = _inodes(staging)
    summary = _cache(twenty, out, capsys, "--short-side", "8")
    assert summary["resumed_chunks"] == 2 and FrameCache(out).short_side == 8 and _inodes(out) == built
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"]  # the old cache deleted, as the swap would have
    # Stopped after the new cache was in place, before the old one was deleted: the next run deletes it.
    old.mkdir()
    (old / "frames-00000.u8").write_bytes(b"an earlier cache")
    assert _cache(twenty, out, capsys, "--short-side", "8")["reused"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"]


def test_a_finished_chunk_whose_shard_is_short_is_decoded_again(twenty, tmp_path, capsys):
    """Its marker is written after its files are renamed, but a crash can lose data the disk had not written yet."""
    out, fresh = tmp_path / "cache", tmp_path / "fresh"
    _, _, chunks, staging, _ = _prepare_build("kinetics", twenty, out, 2, ("train", "val"), None, None)
    for k, chunk in enumerate(chunks):
        _build_chunk((str(staging), k, chunk, None))
    shard = staging / "frames-00001.u8"
    shard.write_bytes(shard.read_bytes()[:1000])
    summary = _cache(twenty, out, capsys)
    assert summary["resumed_chunks"] == 1 and summary["cached"] == 20
    _cache(twenty, fresh, capsys)
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in fresh.iterdir())
    for name in ("frames-00000.u8", "frames-00001.u8", "times.npy"):
        assert (out / name).read_bytes() == (fresh / name).read_bytes()


def test_cli_cache_and_bench_with_the_cache(tmp_path, capsys):
    root = write_kinetics_list(tmp_path / "k", 8, classes=4, frames=16)
    out = tmp_path / "cache"
    data = ["data.name=kinetics", f"data.root={root}", "data.num_classes=4", "data.num_frames=8",
            "data.crop_size=32", "data.jitter=[36,48]", "data.train_videos=8"]
    assert harness("data", "cache", "--out", str(out), "--workers", "2", "--quiet", *data) == 0
    assert "cached 8 of 8 videos" in capsys.readouterr().out and (out / "index.json").is_file()
    assert len(load_annotations("kinetics", root, num_classes=4)) == len(FrameCache(out).videos)
    record = tmp_path / "bench.json"
    assert harness("data", "bench", "--min-seconds", "0",
                   "--clips", "4", "--workers", "0", "--cache", str(out), "--out", str(record),
                   *data) == 0
    rec = json.loads(record.read_text())
    assert rec["cache"]["folder"] == str(out) and rec["cache"]["bytes"] > 0
    assert all(r["cache_read_clips_per_s"] > 0 and r["cache_loader_clips_per_s"]["0"] > 0 and
               r["decode_clips_per_s"] > 0 for r in rec["shapes"])
    assert "c w=0" in capsys.readouterr().out
