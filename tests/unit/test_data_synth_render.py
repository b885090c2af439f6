"""The frames of synthetic video: an SSv2-like class's mirror image is its partner class, its direction on screen."""

from __future__ import annotations

import numpy as np

from harness.data.synth.classes import SSV2_CLASSES, ssv2_mirror
from harness.data.synth.config import preset_config
from harness.data.synth.render import render_ssv2_video

TINY = {"videos": 8, "val_videos": 4, "frames": 8, "size": (32, 48), "fps": 15}


def horizontal_travel(frames: np.ndarray, blank: np.ndarray) -> float:
    """How far (pixels, + = rightwards) the object moves from the first frame to the last: the circular mean
    column of the pixels where the frames differ from the same video without its object (it wraps around)."""
    w = frames.shape[2]
    angles = []
    for f, b in zip(frames, blank, strict=True):
        cols = np.nonzero((np.abs(f.astype(int) - b.astype(int)).max(axis=-1) > 30).any(axis=0))[0]
        angles.append(np.angle(np.exp(2j * np.pi * cols / w).mean()))
    step = (angles[-1] - angles[0] + np.pi) % (2 * np.pi) - np.pi
    return float(step * w / (2 * np.pi))


def test_ssv2_flip_turns_each_direction_into_its_partner():
    cfg = preset_config("smoke", kind="ssv2", classes=len(SSV2_CLASSES), **TINY)
    names = [name for name, _, _ in SSV2_CLASSES]
    assert names[ssv2_mirror(names.index("left"))] == "right"
    assert names[ssv2_mirror(names.index("anticlockwise"))] == "clockwise"
    assert ssv2_mirror(names.index("up")) == names.index("up")
    rng = lambda: np.random.default_rng(7)  # noqa: E731
    pairs = [label for label in range(len(names)) if ssv2_mirror(label) != label]
    assert len(pairs) == 10
    for label in pairs:  # the same draws: the flipped video is the partner class's
        flipped = render_ssv2_video(label, cfg, rng())[:, :, ::-1]
        assert np.array_equal(flipped, render_ssv2_video(ssv2_mirror(label), cfg, rng()))
    # and the direction is on screen: the object of "left" travels left, that of "right" right
    left, right = names.index("left"), names.index("right")
    for seed in range(3):
        rng = lambda: np.random.default_rng(seed)  # noqa: E731, B023
        travel_left = horizontal_travel(render_ssv2_video(left, cfg, rng()),
                                        render_ssv2_video(left, cfg, rng(), show_target=False))
        travel_right = horizontal_travel(render_ssv2_video(right, cfg, rng()),
                                         render_ssv2_video(right, cfg, rng(), show_target=False))
        assert travel_left < -3 and travel_right > 3
