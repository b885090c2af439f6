"""Leaving out the frames a clip does not show: the same clips as decoding every frame, with fewer frames decoded."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
import torch

from harness.data.decode import VideoReader
from harness.data.prepare import PrepareSettings, reencode
from tests.integration.video_files import frames_pattern, write_video

# A fixed GOP of three B-frames between references, none of them a reference (as `harness data prepare` encodes).
FIXED_B_FRAMES = "keyint=16:min-keyint=16:scenecut=0:bframes=3:b-adapt=0:b-pyramid=none"


def _write_timed(path: Path, pts_ms: list[int], params: str = FIXED_B_FRAMES) -> Path:
    """frames_pattern frames at the given times (milliseconds) with x264, in a container that keeps them."""
    with av.open(str(path), "w") as c:
        s = c.add_stream("libx264", rate=25, options={"x264-params": params, "crf": "12"})
        s.width, s.height, s.pix_fmt = 48, 32, "yuv420p"
        s.codec_context.time_base = Fraction(1, 1000)
        for pts, a in zip(pts_ms, frames_pattern(len(pts_ms), 32, 48)):
            frame = av.VideoFrame.from_ndarray(a, format="rgb24")
            frame.pts, frame.time_base = pts, Fraction(1, 1000)
            c.mux(s.encode(frame))
        c.mux(s.encode())
    return path


def _write_hevc(path: Path, n: int) -> Path:
    """`n` 64×64 frames at 25 fps with x265, three non-reference B-frames between references (the x265 that PyAV
    bundles corrupted its heap now and then at 48×32)."""
    with av.open(str(path), "w") as c:
        s = c.add_stream("libx265", rate=25, options={"x265-params": "keyint=16:bframes=3:b-adapt=0:b-pyramid=0"})
        s.width, s.height, s.pix_fmt = 64, 64, "yuv420p"
        for a in frames_pattern(n, 64, 64):
            c.mux(s.encode(av.VideoFrame.from_ndarray(a, format="rgb24")))
        c.mux(s.encode())
    return path


def _random_clips(info, rng: np.random.Generator, n: int = 40) -> list[list[float]]:
    """Clips as training and evaluation ask for them: 4-32 frames, strides 1-8, anywhere (also past either end)."""
    clips = []
    for _ in range(n):
        t, stride = int(rng.choice([4, 8, 16, 32])), int(rng.integers(1, 9))
        start = float(rng.uniform(-0.1, info.duration))
        clips.append([max(0.0, start + i * stride / info.fps + float(rng.normal(0, 0.2 / info.fps)))
                      for i in range(t)])
    return clips


def _same_clips(path: Path, clips: list[list[float]] | None = None, threads: int = 1) -> tuple[int, int]:
    """Assert every clip equals the full decode's, bit for bit; (frames decoded leaving frames out, in full)."""
    with VideoReader(path, threads) as fast, VideoReader(path, threads, skip_frames=False) as full:
        for times in clips or _random_clips(full.info, np.random.default_rng(0)):
            assert torch.equal(fast.frames_at(times), full.frames_at(times)), (path.name, times)
        return fast.frames_decoded, full.frames_decoded


def test_a_prepared_copy_gives_the_same_clips_from_far_fewer_frames(tmp_path):
    source = write_video(tmp_path / "source.mp4", n=96, fps=30)
    for step in (1, 2):
        copy = tmp_path / f"copy{step}.mp4"
        reencode(source, copy, PrepareSettings(short_side=None, frame_step=step))
        fast, full = _same_clips(copy)
        assert fast < 0.8 * full, (step, fast, full)


@pytest.mark.parametrize("threads", [1, 2])
def test_x264_default_b_pyramid_gives_the_same_clips(tmp_path, threads):
    path = _write_timed(tmp_path / "pyramid.mp4", [40 * k for k in range(80)], params="keyint=32")
    fast, full = _same_clips(path, threads=threads)
    assert fast < full  # x264's adaptive B-frames: some are not references


def test_hevc_gives_the_same_clips(tmp_path):
    fast, full = _same_clips(_write_hevc(tmp_path / "hevc.mkv", 48))
    assert fast < 0.8 * full


def test_a_skipped_frame_that_is_nearest_across_a_gap_is_decoded_after_all(tmp_path):
    # Variable rate: 40 ms apart, then a 600 ms gap after frame 11 and sparse frames. In encoding order every frame
    # between two references is a non-reference B-frame, so frames 13-15 (at 1100, 1400 and 1700 ms) would be left
    # out for a time 250 ms from each, farther than SKIP_DISTANCE nominal periods from all, yet the nearest.
    pts = [40 * k for k in range(12)] + [1040, 1100, 1400, 1700, 1760] + [1760 + 40 * k for k in range(1, 12)]
    path = _write_timed(tmp_path / "gap.mkv", pts)
    clips = [[1.35, 1.95], [0.2, 1.4, 1.45], [1.25], [1.55, 1.9]]
    _same_clips(path, clips)
    with VideoReader(path) as reader:
        # frames_pattern's index in the red channel: the frames at 1400 and 1700 ms are the 15th and 16th
        picked = [round(float(f[8:, 8:, 0].float().mean()) / 16) for f in reader.frames_at([1.35, 1.65])]
        assert picked == [14, 15]


def test_a_clip_reaching_past_the_end_repeats_the_last_frame_as_a_full_decode_does(tmp_path):
    path = _write_timed(tmp_path / "end.mp4", [40 * k for k in range(30)])
    _same_clips(path, [[1.0, 1.1, 1.2, 5.0], [1.18], [1.16, 99.0]])
