"""The clip plan (harness.data.clip_plan): exactly the draws of the PyAV path's transforms (restated here)."""

from __future__ import annotations

import numpy as np
import pytest

from harness.data.clip_plan import (
    ClipSampling,
    VideoGeometry,
    attempt_index,
    nearest_frame_indices,
    train_clip_plan,
)
from harness.data.sampler import ClipRequest
from harness.data.transforms import (
    random_stride,
    segment_indices,
    train_clip_times,
    train_crop_box,
)


def _old_draws(req: ClipRequest, attempt: int, n: int, video: VideoGeometry, sampling: ClipSampling):
    """The draws of VideoClipDataset._train_item/_train_clip before the plan was factored out (commit 6b9bd79)."""
    rng = np.random.default_rng([*req.key, attempt])
    index = int(rng.integers(n)) if attempt else req.index
    if sampling.segment:
        times = [i / video.fps for i in segment_indices(video.frames, req.t, rng)]
    else:
        stride = random_stride(req.stride_range, rng)
        times = train_clip_times(video.duration, req.t, stride, sampling.fps or video.fps, rng)
    box = train_crop_box(video.height, video.width, req.s, req.jitter_range, rng)
    flip = sampling.flip and bool(rng.random() < 0.5)
    return index, times, box, flip


@pytest.mark.parametrize("sampling", [ClipSampling(), ClipSampling(fps=None), ClipSampling(segment=True, flip=False)])
def test_the_plan_is_the_pyav_paths_draws(sampling):
    rng = np.random.default_rng(7)
    for k in range(200):
        video = VideoGeometry(float(rng.uniform(0.3, 12)), float(rng.choice([15, 24, 29.97, 30])),
                              int(rng.integers(5, 400)), int(rng.integers(32, 300)), int(rng.integers(32, 400)))
        s = int(rng.integers(8, 33))
        req = ClipRequest(int(rng.integers(50)), int(rng.integers(1, 17)), s, (1, int(rng.integers(1, 5))),
                          (s, s + int(rng.integers(0, 40))), (3, k, 1, 0, k % 5))
        attempt = k % 3
        plan = train_clip_plan(req, attempt, 50, video, sampling)
        index, times, box, flip = _old_draws(req, attempt, 50, video, sampling)
        assert (plan.index, list(plan.times), plan.box, plan.flip) == (index, times, box, flip)
        assert plan.index == attempt_index(req, attempt, 50)
        assert plan.size == s and (plan.height, plan.width) == (video.height, video.width)
        assert s <= plan.box.size * plan.short_side / min(video.height, video.width) + 1 or plan.box.size == min(
            video.height, video.width)
        assert train_clip_plan(req, attempt, 50, video, sampling) == plan  # pure


def test_a_plan_redone_for_another_frame_size_keeps_its_times():
    req = ClipRequest(3, 8, 16, (1, 4), (16, 24), (0, 1, 2, 0, 3))
    video = VideoGeometry(4.0, 30.0, 120, 48, 64)
    a = train_clip_plan(req, 1, 10, video, ClipSampling())
    b = train_clip_plan(req, 1, 10, video.with_size(64, 48), ClipSampling())
    assert (a.index, a.times, a.frame_indices, a.short_side) == (b.index, b.times, b.frame_indices, b.short_side)
    assert (b.height, b.width) == (64, 48)


def test_on_a_copy_keeping_every_other_frame_indices_count_the_files_frames():
    req = ClipRequest(3, 8, 16, (2, 2), (16, 24), (0, 1, 2, 0, 3))
    source = VideoGeometry(4.0, 30.0, 120, 48, 64)
    full = train_clip_plan(req, 0, 10, source, ClipSampling())
    half = train_clip_plan(req, 0, 10, VideoGeometry(4.0, 30.0, 120, 48, 64, frame_step=2), ClipSampling())
    assert half.times == full.times  # the same draws: strides count source frames
    assert half.frame_indices == nearest_frame_indices(full.times, 15.0)  # the copy holds them at 15 fps


def test_frame_indices_are_the_nearest_frames_with_ties_to_the_earlier():
    fps = 15.0
    assert nearest_frame_indices([0.0, 3 / fps, 4.4 / fps, 4.5 / fps, 4.6 / fps, 13 / fps, -1.0], fps) == (
        0, 3, 4, 4, 5, 13, 0)
    times = [0.1 + i * 2 / 30 for i in range(32)]
    assert nearest_frame_indices(times, 30.0) == tuple(3 + 2 * i for i in range(32))
