"""The clip plan (harness.data.clip_plan) and the device-agnostic batch transform (transforms.batch_resize_crop).

The plan must be exactly the draws the PyAV path made before it was factored out (restated here), and the batch
transform, run on the CPU, must give the PyAV path's clip within the tolerance below.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from harness.data.clip_plan import (
    ClipSampling,
    VideoGeometry,
    attempt_index,
    nearest_frame_indices,
    train_clip_plan,
)
from harness.data.sampler import ClipRequest
from harness.data.transforms import (
    KINETICS_STD,
    CropBox,
    batch_resize_crop,
    normalize,
    random_stride,
    resize_crop,
    segment_indices,
    train_clip_times,
    train_crop_box,
)

# About one grey level: the PyAV path's clip is uint8 from torchvision's uint8 bilinear kernel, which computes with
# fixed-point weights and rounds its result to an integer, so each pixel lies within one grey level of the exact
# bilinear value plus the weights' own rounding (measured on these cases: at most 1.004 grey levels, on average
# 0.3-0.5); the batch transform keeps the exact value in float. Normalised, one grey level is 1 / 255 / std. The
# bound allows 1.1 grey levels anywhere and half a grey level on average.
GREY = 1.0 / 255.0 / KINETICS_STD[0]
TOLERANCE = 1.1 * GREY


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


@pytest.mark.parametrize(("h", "w", "boxes", "s"), [
    (32, 48, [CropBox(0, 0, 32), CropBox(4, 10, 20)], 16),  # downscale
    (64, 86, [CropBox(3, 7, 40), CropBox(0, 40, 46)], 112),  # upscale
    (256, 340, [CropBox(30, 100, 181), CropBox(0, 0, 256)], 112),  # kinetics-like, the proxy's crop
    (120, 90, [CropBox(11, 5, 37), CropBox(20, 0, 90)], 7),  # portrait, odd sizes
])
def test_the_batch_transform_on_cpu_is_the_pyav_paths_clip(h, w, boxes, s):
    g = torch.Generator().manual_seed(h * w + s)
    frames = [torch.randint(0, 256, (5, h, w, 3), dtype=torch.uint8, generator=g) for _ in boxes]
    flips = [False, True]
    ours = batch_resize_crop(frames, boxes, s, flips)
    theirs = normalize(torch.stack([resize_crop(f, b, s, flip) for f, b, flip in zip(frames, boxes, flips)]))
    assert ours.shape == theirs.shape == (2, 3, 5, s, s) and ours.dtype == torch.float32
    diff = (ours - theirs).abs()
    assert diff.max() <= TOLERANCE, diff.max() / GREY
    assert diff.mean() < 0.5 * GREY, diff.mean() / GREY


def test_the_batch_transform_flips_and_crops_exactly_at_scale_one():
    frames = torch.arange(2 * 6 * 8 * 3, dtype=torch.uint8).view(2, 6, 8, 3)
    out = batch_resize_crop([frames, frames], [CropBox(1, 2, 4), CropBox(1, 2, 4)], 4, [False, True], mean=(0, 0, 0),
                            std=(1 / 255, 1 / 255, 1 / 255))
    crop = frames[:, 1:5, 2:6].permute(3, 0, 1, 2).float()
    assert torch.allclose(out[0], crop, atol=1e-3) and torch.allclose(out[1], crop.flip(-1), atol=1e-3)
    with pytest.raises(ValueError, match="one box and one flip per clip"):
        batch_resize_crop([frames], [], 4, [False])
