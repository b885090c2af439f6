"""Decoded frames as RGB arrays: whole frames, or only a crop box's pixels (what a training clip keeps), and the
quarter turns that show a rotated video upright."""

from __future__ import annotations

from collections.abc import Sequence

import av
import numpy as np

from harness.data.transforms import CropBox


def _converts_on_one_thread() -> dict[str, int]:
    """to_ndarray's keyword that keeps the RGB conversion on the calling thread, where PyAV has it (12 and later)."""
    try:
        av.VideoFrame(16, 16, "yuv420p").to_ndarray(format="rgb24", threads=1)
    except TypeError:
        return {}
    return {"threads": 1}


# PyAV's converter defaults to a thread per CPU for every frame it converts (threads=0, 'auto'). Loader workers
# already run one per core, so each would start all cores' threads and the processes would stop scaling
# (benchmarks/pyav_scaling.py measures it per host: results/loader/pyav_scaling_*.json).
_ONE_THREAD = _converts_on_one_thread()


def to_rgb(frame: av.VideoFrame) -> np.ndarray:
    """A decoded frame as uint8 H×W×3 RGB, converted on the calling thread alone."""
    return frame.to_ndarray(format="rgb24", **_ONE_THREAD)


def to_rgb_box(frame: av.VideoFrame, top: int, left: int, size: int) -> np.ndarray:
    """The `size`-square box at (`top`, `left`) of `frame` as uint8 RGB: the pixels of to_rgb(frame) there
    (:func:`to_rgb_boxes` of the one frame)."""
    return to_rgb_boxes([frame], top, left, size)[0]


def to_rgb_boxes(frames: Sequence[av.VideoFrame], top: int, left: int, size: int) -> np.ndarray:
    """The `size`-square box at (`top`, `left`) of each of `frames` as uint8 N×size×size×3 RGB: the pixels of
    to_rgb(frame) there, from the box's planes alone. A 4:2:0 frame's chroma rows and columns are shared by pixel
    pairs, so the box is widened to even edges; the boxes of all frames are stacked into one tall frame, converted
    at once, and cut. Frames of other formats or odd sizes, or of sizes or colour settings that differ, convert
    one by one and whole.

    Converting the boxes alone takes a loader worker less time than converting whole frames, whose fresh RGB arrays
    are what costs; converting them in one call spares the converter's setup per frame."""
    first = frames[0]
    kind = (first.format.name, first.width, first.height, first.colorspace, first.color_range)
    if (first.format.name != "yuv420p" or first.width % 2 or first.height % 2
            or any((f.format.name, f.width, f.height, f.colorspace, f.color_range) != kind for f in frames)):
        return np.stack([to_rgb(f)[top:top + size, left:left + size] for f in frames])
    t0, l0 = top & ~1, left & ~1
    h = min((top + size - t0 + 1) & ~1, first.height - t0)
    w = min((left + size - l0 + 1) & ~1, first.width - l0)
    n, q = len(frames), (h // 2) * (w // 2)
    packed = np.empty(n * h * w * 3 // 2, np.uint8)
    luma = packed[:n * h * w].reshape(n, h, w)
    chroma = [packed[n * h * w + k * n * q:n * h * w + (k + 1) * n * q].reshape(n, h // 2, w // 2) for k in (0, 1)]
    for i, frame in enumerate(frames):
        planes = [np.frombuffer(p, np.uint8).reshape(p.height, p.line_size) for p in frame.planes]
        luma[i] = planes[0][t0:t0 + h, l0:l0 + w]
        for k in (0, 1):
            chroma[k][i] = planes[k + 1][t0 // 2:(t0 + h) // 2, l0 // 2:(l0 + w) // 2]
    tall = av.VideoFrame.from_ndarray(packed.reshape(n * h * 3 // 2, w), format="yuv420p")
    tall.colorspace, tall.color_range = first.colorspace, first.color_range
    return to_rgb(tall).reshape(n, h, w, 3)[:, top - t0:top - t0 + size, left - l0:left - l0 + size]


def rotation_steps(degrees: float) -> int:
    """Quarter turns counter-clockwise for a display rotation; other angles are rounded to the nearest quarter."""
    return int(round(degrees / 90.0)) % 4


def clip_pixels(frames: Sequence[av.VideoFrame], picks: list[int], crop: CropBox | None, k: int) -> np.ndarray:
    """The RGB pixels of `frames[j]` for each j of `picks` (each converted once), turned `k` quarter turns
    counter-clockwise and cut to `crop`; only the box converted where there is one and no turn."""
    unique = list(dict.fromkeys(picks))
    if crop is not None and not k:
        boxes = to_rgb_boxes([frames[j] for j in unique], crop.top, crop.left, crop.size)
        if unique != picks:  # a frame picked twice, or picks out of order
            boxes = boxes[[unique.index(j) for j in picks]]
        return boxes
    whole = {j: to_rgb(frames[j]) for j in unique}
    array = np.stack([whole[j] for j in picks])
    if k:  # display matrix: turn counter-clockwise by `rotation` degrees to show the video upright
        array = np.rot90(array, k=k, axes=(1, 2))
    if crop is not None:
        array = array[:, crop.top:crop.top + crop.size, crop.left:crop.left + crop.size]
    return array
