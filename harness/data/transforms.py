"""Grid resampling (paper §3) and evaluation views (the reference's test protocol), on uint8 frames.

A clip is sampled on a grid: in time, `t` points `stride` frames apart inside a random window; in space, a
random crop whose side, after scaling the short side to a random size in the jitter range, is `s` pixels.
Each crop is resized exactly once, from the decoded frames straight to `s`×`s` (bilinear, no antialiasing:
sampling the grid points, as the reference's `interpolate(mode="bilinear")` does), and stays uint8; the
trainer converts to float on the device with :func:`normalize`.

Times are in seconds; strides count frames at `fps` (the reference's target frame rate, 30 for Kinetics), so
a clip spans the same time whatever the source's frame rate. Output clips are uint8 C×T×H×W.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from harness.spec import EVAL_CROPS

KINETICS_MEAN = (0.45, 0.45, 0.45)  # PySlowFast's DATA.MEAN / DATA.STD
KINETICS_STD = (0.225, 0.225, 0.225)


# ---------------------------------------------------------------- time
def random_stride(stride_range: tuple[int, int], rng: np.random.Generator) -> int:
    """An integer stride drawn uniformly from [lo, hi] (the Plan's `stride_range(t)`)."""
    lo, hi = stride_range
    return int(rng.integers(lo, hi + 1))


def _span(t: int, stride: int, fps: float) -> float:
    """Seconds from the first to the last grid point of a clip."""
    return (t - 1) * stride / fps


def train_clip_times(duration: float, t: int, stride: int, fps: float, rng: np.random.Generator) -> list[float]:
    """`t` times `stride/fps` apart in a window placed uniformly at random inside the video.

    A video shorter than the window starts at 0; later points are clamped to its last frame by the decoder
    (the reference repeats the last frame the same way).
    """
    slack = max(0.0, duration - _span(t, stride, fps) - 1.0 / fps)
    start = float(rng.uniform(0.0, slack)) if slack > 0 else 0.0
    return [start + i * stride / fps for i in range(t)]


def eval_clip_times(duration: float, t: int, stride: int, fps: float, clips: int) -> list[list[float]]:
    """`clips` windows uniformly spaced from the start to the end of the video (as PySlowFast's test sampling)."""
    slack = max(0.0, duration - _span(t, stride, fps) - 1.0 / fps)
    starts = [slack / 2] if clips == 1 else [slack * k / (clips - 1) for k in range(clips)]
    return [[s + i * stride / fps for i in range(t)] for s in starts]


def segment_indices(num_frames: int, t: int, rng: np.random.Generator | None) -> list[int]:
    """SSv2 segment sampling: one frame from each of `t` equal segments; random in training (`rng`), centre
    in evaluation (`rng=None`). Videos with fewer than `t` frames repeat frames."""
    n = max(1, num_frames)
    bounds = np.linspace(0, n, t + 1)
    picks = []
    for a, b in itertools.pairwise(bounds):
        lo, hi = int(np.floor(a)), max(int(np.floor(a)), int(np.ceil(b)) - 1)
        picks.append(int(rng.integers(lo, hi + 1)) if rng is not None else (lo + hi) // 2)
    return [min(p, n - 1) for p in picks]


# ---------------------------------------------------------------- space
@dataclass(frozen=True)
class CropBox:
    """A square region of a decoded frame, in its pixels."""

    top: int
    left: int
    size: int


def _crop_side(h: int, w: int, s: int, short_side: float) -> int:
    """Side, in frame pixels, of the region that becomes `s` pixels once the short side is `short_side`."""
    return int(min(min(h, w), max(1, round(s * min(h, w) / short_side))))


def train_crop_draw(h: int, w: int, s: int, jitter_range: tuple[int, int],
                    rng: np.random.Generator) -> tuple[int, CropBox]:
    """Random short-side scale in `jitter_range` (the Plan's `jitter_range(s)`), then a random `s`×`s` crop:
    (the short side drawn, the crop's box in frame pixels)."""
    lo, hi = jitter_range
    short = int(rng.integers(lo, hi + 1))
    c = _crop_side(h, w, s, short)
    return short, CropBox(int(rng.integers(0, h - c + 1)), int(rng.integers(0, w - c + 1)), c)


def train_crop_box(h: int, w: int, s: int, jitter_range: tuple[int, int], rng: np.random.Generator) -> CropBox:
    """The box of :func:`train_crop_draw` (the same draws)."""
    return train_crop_draw(h, w, s, jitter_range, rng)[1]


def eval_crop_boxes(h: int, w: int, s: int, short_side: int, crops: int) -> list[CropBox]:
    """The short side scaled to `short_side`; 1 centre crop, or 3 crops along the long side (start, centre, end)."""
    if crops not in EVAL_CROPS:
        raise ValueError(f"eval crops must be one of {EVAL_CROPS}, got {crops}")
    c = _crop_side(h, w, s, short_side)
    top, left = (h - c) // 2, (w - c) // 2
    if crops == 1:
        return [CropBox(top, left, c)]
    if w >= h:
        return [CropBox(top, x, c) for x in (0, left, w - c)]
    return [CropBox(y, left, c) for y in (0, top, h - c)]


def resize_crop(frames: torch.Tensor, box: CropBox, s: int, flip: bool = False,
                antialias: bool = False) -> torch.Tensor:
    """Crop `box` out of uint8 T×H×W×C `frames`, resize it once to `s`×`s`, flip if asked → uint8 C×T×s×s.

    The result is a C×T×s×s view of the resized frames' memory, not a contiguous copy: the collate functions
    stack clips into one contiguous batch anyway, and a copy here would cost a loader worker time on every clip."""
    x = frames.permute(0, 3, 1, 2)  # T×C×H×W view; channels-last memory, which the uint8 kernels want
    x = x[:, :, box.top:box.top + box.size, box.left:box.left + box.size]
    # interpolate straight on the crop's view: the same pixels as torchvision's resized_crop, and faster
    x = torch.nn.functional.interpolate(x, size=(s, s), mode="bilinear", align_corners=False, antialias=antialias)
    if flip:
        x = x.flip(-1)
    return x.permute(1, 0, 2, 3)


def normalize(clips: torch.Tensor, mean: Sequence[float] = KINETICS_MEAN, std: Sequence[float] = KINETICS_STD,
              dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """uint8 N×C×T×H×W (or C×T×H×W) → float, (x/255 − mean)/std per channel; run it on the device."""
    m, d = _channel_constants(tuple(mean), tuple(std), dtype, clips.device)
    return (clips.to(dtype) / 255.0 - m) / d


@functools.lru_cache(maxsize=16)
def _channel_constants(mean: tuple[float, ...], std: tuple[float, ...], dtype: torch.dtype,
                       device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and std as C×1×1×1 tensors on `device`, made once: building them from Python lists every batch would
    copy from pageable host memory, which synchronises a CUDA stream."""
    shape = (-1, 1, 1, 1)
    return (torch.tensor(mean, dtype=dtype).view(shape).to(device),
            torch.tensor(std, dtype=dtype).view(shape).to(device))
