"""data.low_res_copies: training clips of a small scale-jitter draw decode a copy at a smaller short side."""

from __future__ import annotations

import json
from pathlib import Path

import av
import numpy as np
import pytest
import torch

from harness.config import compose
from harness.data.clip_dataset import VideoClipDataset
from harness.data.low_res import LowResCopy, open_low_res_copies, pick_copy, same_clip_moved, scale_box
from harness.data.prepare import prepare_dataset
from harness.data.sampler import ClipRequest
from harness.data.transforms import CropBox
from harness.spec import SpecError


def smooth_video(path, n=12, h=64, w=96, fps=15, seed=0):
    """Gradients that survive scaling (a resampled copy looks the same) and the frame index in the red channel."""
    rng = np.random.default_rng(seed)
    gy, gx = rng.uniform(0.5, 1.5, 2)
    ys, xs = np.mgrid[0:h, 0:w]
    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w") as c:
        s = c.add_stream("libx264", rate=fps)
        s.width, s.height, s.pix_fmt = w, h, "yuv420p"
        s.bit_rate = 2_000_000
        for i in range(n):
            frame = np.empty((h, w, 3), np.uint8)
            frame[..., 0] = 20 * i
            frame[..., 1] = 30 + gy * ys * 1.5 + i  # at most 30 + 1.5 * 1.5 * 63 + 11 < 255: no edge
            frame[..., 2] = 30 + gx * xs
            c.mux(s.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")))
        c.mux(s.encode())


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    """A Kinetics-style list of 4 videos at 64×96 and a copy of it at short side 32."""
    base = tmp_path_factory.mktemp("low_res")
    root = base / "src"
    lines = []
    for i in range(4):
        rel = f"train/c{i % 2}/v{i}.mp4"
        smooth_video(root / rel, seed=i)
        lines.append(f"{rel} {i % 2}\n")
    (root / "train.csv").write_text("".join(lines))
    small = base / "small"
    prepare_dataset(root, small, name="kinetics", num_classes=2, short_side=32, keyframe_interval=4, progress=False)
    return root, small


def dataset(root, small=None):
    overrides = ["data.name=kinetics", f"data.root={root}", "data.num_classes=2", "data.num_frames=4",
                 "data.sampling_rate=2", "data.crop_size=16", "data.jitter=[20,40]"]
    if small is not None:
        overrides.append(f"data.low_res_copies=[{small}]")
    return VideoClipDataset.from_spec(compose(overrides), "train")


def request(i, jitter):
    return ClipRequest(i % 4, 4, 16, (2, 2), jitter, (0, 0, i))


def test_a_clip_of_a_small_draw_decodes_the_smaller_copy_and_shows_the_same(copies):
    root, small = copies
    full, mixed = dataset(root), dataset(root, small)
    assert mixed.low_res == (LowResCopy(small, 32),)
    for i in range(6):
        req = request(i, (20, 32))  # every draw at most 32: the copy at 32 serves it
        a, b = full[req]["clip"], mixed[req]["clip"]
        assert a.shape == b.shape == (3, 4, 16, 16)
        assert not torch.equal(a, b)  # resampled from other pixels ...
        diff = (a.float() - b.float()).abs()
        assert diff.mean() < 4 and diff[0].max() < 12  # ... of the same frames (red: the frame index) and crop
    for i in range(3):  # draws above 32 pixels: the full copy, exactly as without the smaller one
        req = request(i, (33, 40))
        assert torch.equal(full[req]["clip"], mixed[req]["clip"])


def test_a_smaller_copys_clip_is_the_scaled_box_of_its_whole_frames(copies):
    from harness.data.decode import VideoReader
    from harness.data.transforms import resize_crop

    root, small = copies
    mixed = dataset(root, small)
    for i in range(4):  # the reader stacks only the scaled box's pixels: the clip of cropping whole frames
        req = request(i, (20, 32))
        item = mixed[req]
        plan = mixed.plan_clip(req, 0)
        with VideoReader(small / mixed.records[item["index"]].path.relative_to(root)) as reader:
            whole = reader.frames_at(plan.times)
        box = scale_box(plan.box, (plan.height, plan.width), tuple(whole.shape[1:3]))
        assert box is not None and box.size < 32
        assert torch.equal(item["clip"], resize_crop(whole, box, plan.size, plan.flip))


def test_a_video_missing_from_the_smaller_copy_is_read_from_the_full_one(copies, tmp_path):
    import shutil

    root, small = copies
    partial = tmp_path / "partial"
    shutil.copytree(small, partial)
    (partial / "train/c0/v0.mp4").unlink()
    full, mixed = dataset(root), dataset(root, partial)
    req = request(0, (20, 32))
    assert torch.equal(full[req]["clip"], mixed[req]["clip"])


def test_a_root_named_through_a_link_still_finds_its_videos_in_the_smaller_copy(copies, tmp_path):
    root, small = copies
    link = tmp_path / "linked"
    link.symlink_to(root, target_is_directory=True)
    req = request(1, (20, 32))
    assert torch.equal(dataset(root, small)[req]["clip"], dataset(link, small)[req]["clip"])
    assert not torch.equal(dataset(link)[req]["clip"], dataset(link, small)[req]["clip"])


def test_low_res_copies_are_checked_before_work_starts(copies, tmp_path):
    root, small = copies
    with pytest.raises(SpecError, match="no readable prepare.json"):
        dataset(root, tmp_path / "nowhere")
    unfinished = tmp_path / "unfinished"
    unfinished.mkdir()
    (unfinished / "prepare.json").write_text(json.dumps({"settings": {"short_side": 24}, "complete": False}))
    with pytest.raises(SpecError, match="not finished"):
        dataset(root, unfinished)
    full_size = tmp_path / "full_size"
    full_size.mkdir()
    (full_size / "prepare.json").write_text(json.dumps({"settings": {"short_side": None}, "complete": True}))
    with pytest.raises(SpecError, match="without --short-side"):
        dataset(root, full_size)
    with pytest.raises(SpecError, match="same short side"):
        open_low_res_copies([str(small), str(small)], root)
    with pytest.raises(SpecError, match="data.cache serves decoded frames"):
        compose([f"data.low_res_copies=[{small}]", "data.cache=/tmp/cache"])


def test_the_smallest_copy_that_has_the_drawn_short_side_is_picked():
    levels = (LowResCopy(Path("/a"), 128), LowResCopy(Path("/b"), 160))
    assert pick_copy(levels, 100) == levels[0] and pick_copy(levels, 128) == levels[0]
    assert pick_copy(levels, 129) == levels[1] and pick_copy(levels, 161) is None


def test_a_copy_keeping_fewer_frames_serves_the_clips_it_only_moves():
    fps = 30.0
    stride8 = [(3 + 8 * k) / fps for k in range(8)]  # the coarse shapes' 8 frames, 8 source frames apart
    stride2 = [(3 + 2 * k) / fps for k in range(8)]
    assert same_clip_moved(stride8, fps, 2, 4) and same_clip_moved(stride8, fps, 1, 8)
    assert not same_clip_moved(stride2, fps, 2, 4)  # every other kept frame twice: another clip
    assert same_clip_moved(stride2, fps, 2, 2)
    levels = (LowResCopy(Path("/every_4th"), 160, 4), LowResCopy(Path("/every_2nd"), 160, 2))
    assert pick_copy(levels, 150, stride8, fps, 2) == levels[0]
    assert pick_copy(levels, 150, stride2, fps, 2) == levels[1]
    assert pick_copy(levels[:1], 150, stride2, fps, 2) is None  # the full copy decodes it


def red_frames(clip):
    """The frame index each frame of a clip shows (smooth_video's red channel is 20 × the index)."""
    return (clip[0].float().mean(dim=(1, 2)) / 20).round().long().tolist()


def test_a_copy_keeping_every_other_frame_moves_a_clip_whole_or_leaves_it_to_the_full_copy(copies, tmp_path):
    root, _ = copies
    coarse = tmp_path / "every_2nd"
    prepare_dataset(root, coarse, name="kinetics", num_classes=2, short_side=32, keyframe_interval=4, frame_step=2,
                    progress=False)
    full, mixed = dataset(root), dataset(root, coarse)
    assert mixed.low_res == (LowResCopy(coarse, 32, 2),)
    for i in range(6):
        # strides count frames at 30 fps, the videos have 15: stride 4 takes every other frame, the copy's frames
        # (moved by at most one)
        req = ClipRequest(i % 4, 4, 16, (4, 4), (20, 32), (0, 1, i))
        a, b = red_frames(full[req]["clip"]), red_frames(mixed[req]["clip"])
        assert all(x % 2 == 0 for x in b) and len({y - x for x, y in zip(a, b)}) == 1 and abs(b[0] - a[0]) <= 1
        req = ClipRequest(i % 4, 4, 16, (2, 2), (20, 32), (0, 2, i))  # every frame: not the copy's, the full one
        assert torch.equal(full[req]["clip"], mixed[req]["clip"])


def test_a_clip_the_smaller_copy_serves_never_opens_the_full_copy_whose_headers_prepare_kept(copies, tmp_path,
                                                                                          monkeypatch):
    from harness.data.clip_plan import geometry
    from harness.data.decode import VideoReader
    from harness.data.headers import HEADERS

    root, small = copies
    full_copy = tmp_path / "full"
    prepare_dataset(root, full_copy, name="kinetics", num_classes=2, short_side=None, keyframe_interval=4,
                    progress=False)
    headers = json.loads((full_copy / HEADERS).read_text())
    assert len(headers["videos"]) == 4
    for rel, entry in headers["videos"].items():
        with VideoReader(full_copy / rel) as reader:
            g = geometry(reader.info)
        assert entry == [g.duration, g.fps, g.frames, g.height, g.width, g.frame_step, (full_copy / rel).stat().st_size]

    opened = []
    open_video = VideoClipDataset._open
    monkeypatch.setattr(VideoClipDataset, "_open", lambda self, i: opened.append(i) or open_video(self, i))
    with_headers = dataset(full_copy, small)
    without = dataset(full_copy, small)
    without.headers = None  # as for a copy made before headers.json existed: the full copy is opened for the plan
    small_draw = request(0, (20, 32))
    assert torch.equal(with_headers[small_draw]["clip"], without[small_draw]["clip"])
    assert opened == [0]  # only the dataset without headers opened video 0
    opened.clear()
    assert torch.equal(with_headers[request(1, (33, 40))]["clip"], without[request(1, (33, 40))]["clip"])
    assert opened == [1, 1]  # a large draw decodes the full copy either way

    opened.clear()
    video = full_copy / "train/c0/v0.mp4"
    video.write_bytes(video.read_bytes() + b"\0")  # changed since prepare: its header is read again
    with_headers[small_draw]
    assert opened == [0]


def test_a_box_scales_onto_the_smaller_frames_and_stays_inside_them():
    assert scale_box(CropBox(10, 20, 40), (64, 96), (32, 48)) == CropBox(5, 10, 20)
    assert scale_box(CropBox(23, 55, 41), (64, 96), (32, 48)) == CropBox(12, 28, 20)
    edge = scale_box(CropBox(0, 55, 41), (64, 96), (33, 49))  # rounding up would leave the frame
    assert edge.left + edge.size <= 49 and edge.top + edge.size <= 33
    assert scale_box(CropBox(0, 0, 40), (64, 96), (48, 32)) is None  # another picture (e.g. turned)


def test_data_bench_measures_the_prepared_copy_with_its_smaller_copies(copies, tmp_path, capsys):
    from harness.cli import main

    root, small = copies
    prepared = tmp_path / "prepared"
    prepare_dataset(root, prepared, name="kinetics", num_classes=2, keyframe_interval=4, progress=False)
    data = ["data.name=kinetics", f"data.root={root}", "data.num_classes=2", "data.num_frames=4",
            "data.crop_size=16", "data.jitter=[20,40]"]
    out = tmp_path / "bench.json"
    assert main(["data", "bench", "--min-seconds", "0.2", "--clips", "4", "--workers", "0", "--prepared",
                 str(prepared), "--low-res", str(small), "--out", str(out), *data]) == 0
    record = json.loads(out.read_text())
    assert {r["min_timed_s"] for r in record["shapes"]} == {0.2}
    paths = {p["name"]: p for p in record["paths"]}
    source = sum(p.stat().st_size for p in root.rglob("*.mp4"))
    both = sum(p.stat().st_size for p in [*prepared.rglob("*.mp4"), *small.rglob("*.mp4")])
    assert paths["pyav_prepared_low_res"]["storage_ratio"] == pytest.approx(both / source)
    assert paths["pyav"]["storage_ratio"] == 1.0
    assert all(s["clips_per_s"] > 0 for s in paths["pyav_prepared_low_res"]["shapes"])
    assert all(r["prepared_item_clips_per_s"] > 0 for r in record["shapes"])  # one worker's work, in process
    assert main(["data", "bench", "--min-seconds", "0",
                 "--clips", "4", "--workers", "0", "--low-res", str(small), *data]) == 2
    assert "give the prepared copy with --prepared" in capsys.readouterr().err
