"""Decoded frames as RGB: converted on the calling thread alone, with the default conversion's pixels."""

from __future__ import annotations

import av
import numpy as np

from harness.data import rgb


def test_frames_convert_to_rgb_on_one_thread_with_the_same_pixels():
    """PyAV converts on a thread per CPU by default, which loader workers (one per core) must not do; the pixels
    are the default conversion's."""
    frame = av.VideoFrame.from_ndarray(np.random.default_rng(0).integers(0, 256, (32, 48, 3), dtype=np.uint8),
                                       format="rgb24").reformat(format="yuv420p")
    assert rgb._ONE_THREAD == {"threads": 1}  # the installed PyAV takes the keyword
    assert np.array_equal(rgb.to_rgb(frame), frame.to_ndarray(format="rgb24"))
