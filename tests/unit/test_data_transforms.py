"""Grid resampling and evaluation views on uint8 frames (paper §3; the reference's test views)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from harness.data.transforms import (
    CropBox,
    eval_clip_times,
    eval_crop_boxes,
    normalize,
    random_stride,
    resize_crop,
    segment_indices,
    train_clip_times,
    train_crop_box,
)


def test_stride_is_an_integer_in_the_planned_range():
    rng = np.random.default_rng(0)
    draws = {random_stride((2, 8), rng) for _ in range(300)}
    assert draws == set(range(2, 9))


def test_train_window_inside_video_and_strided():
    rng = np.random.default_rng(0)
    for _ in range(50):
        times = train_clip_times(duration=4.0, t=8, stride=3, fps=30, rng=rng)
        assert len(times) == 8 and times[0] >= 0 and times[-1] <= 4.0
        assert np.allclose(np.diff(times), 3 / 30)
    assert train_clip_times(0.2, 8, 4, 30, rng)[0] == 0.0  # shorter than the window: start at 0


def test_eval_clips_uniformly_spaced_cover_the_video():
    clips = eval_clip_times(duration=10.0, t=4, stride=2, fps=30, clips=10)
    starts = [c[0] for c in clips]
    assert starts[0] == 0 and np.allclose(np.diff(starts), np.diff(starts)[0])
    assert clips[-1][-1] <= 10.0 and clips[-1][-1] > 9.5
    assert len(eval_clip_times(10.0, 4, 2, 30, 1)) == 1


def test_segment_sampling_one_frame_per_segment():
    rng = np.random.default_rng(0)
    for _ in range(20):
        idx = segment_indices(40, 8, rng)
        assert all(5 * k - 1 <= i <= 5 * k + 5 for k, i in enumerate(idx))
    assert segment_indices(40, 8, None) == [2, 7, 12, 17, 22, 27, 32, 37]
    assert segment_indices(3, 8, None) == sorted(segment_indices(3, 8, None)) and max(segment_indices(3, 8, None)) < 3


@pytest.mark.parametrize("s,jitter", [(32, (36, 48)), (16, (18, 48)), (23, (26, 48))])
def test_train_crop_scales_short_side_into_the_jitter_range(s, jitter):
    rng = np.random.default_rng(0)
    h, w = 60, 80
    for _ in range(50):
        box = train_crop_box(h, w, s, jitter, rng)
        assert 0 <= box.top <= h - box.size and 0 <= box.left <= w - box.size
        short_after = min(h, w) * s / box.size  # the short side the crop implies
        assert jitter[0] - 2 <= short_after <= jitter[1] + 2


def test_eval_crops_centre_and_three_along_long_side():
    (c,) = eval_crop_boxes(60, 80, 32, 32, 1)
    assert c == CropBox(0, 10, 60)
    three = eval_crop_boxes(60, 80, 32, 32, 3)
    assert [b.left for b in three] == [0, 10, 20] and {b.top for b in three} == {0}
    assert [b.top for b in eval_crop_boxes(80, 60, 32, 32, 3)] == [0, 10, 20]
    with pytest.raises(ValueError):
        eval_crop_boxes(60, 80, 32, 32, 2)


def test_resize_crop_uint8_ctHW_and_flip():
    frames = torch.randint(0, 255, (5, 40, 60, 3), dtype=torch.uint8)
    out = resize_crop(frames, CropBox(0, 0, 40), 20)
    assert out.shape == (3, 5, 20, 20) and out.dtype == torch.uint8
    assert out.stride()[0] == 1  # channels innermost, as resized: batches stack it without a transpose
    same = resize_crop(frames, CropBox(0, 10, 40), 40)
    assert torch.equal(same, frames[:, :, 10:50].permute(3, 0, 1, 2))  # no resize when sizes match
    assert torch.equal(resize_crop(frames, CropBox(0, 10, 40), 40, flip=True), same.flip(-1))


@pytest.mark.parametrize("antialias", [False, True])
def test_resize_crop_gives_torchvisions_resized_crop_pixels(antialias):
    from torchvision.transforms.v2 import functional as TF

    frames = torch.randint(0, 256, (4, 48, 64, 3), dtype=torch.uint8, generator=torch.Generator().manual_seed(0))
    for box, s in [(CropBox(3, 5, 30), 40), (CropBox(0, 16, 48), 20), (CropBox(7, 1, 33), 33)]:  # up, down, same
        theirs = TF.resized_crop(frames.permute(0, 3, 1, 2), box.top, box.left, box.size, box.size, [s, s],
                                 antialias=antialias).permute(1, 0, 2, 3)
        assert torch.equal(resize_crop(frames, box, s, antialias=antialias), theirs)


def test_normalize_floats():
    clips = torch.full((2, 3, 1, 2, 2), 255, dtype=torch.uint8)
    out = normalize(clips)
    assert out.dtype == torch.float32 and torch.allclose(out, torch.full_like(out, (1 - 0.45) / 0.225))
