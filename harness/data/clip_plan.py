"""The clip plan: which video, which frames, which crop, which output size and whether to flip, for one training clip.

A plan is a pure function of the clip's :class:`~harness.data.sampler.ClipRequest` (its key seeds every draw),
the attempt (a replacement video after a failure is drawn from the same key) and what the video's header says
(duration, frame rate, frame count, frame size). Every reader executes the same plan in the DataLoader workers
(:class:`~harness.data.clip_dataset.VideoClipDataset`): PyAV on the videos or a prepared copy, a frame cache, the
extracted frames of a frame list. So the same seed gives the same frames, crop boxes, scale-jitter sizes and flips
whichever reader serves them. The draws, in order: the replacement index (attempts after the first), the stride (or
SSv2's segment picks), the window start, the short side, the crop's top and left, the flip.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from harness.data.sampler import ClipRequest
from harness.data.transforms import CropBox, random_stride, segment_indices, train_clip_times, train_crop_draw


@dataclass(frozen=True)
class VideoGeometry:
    """What a plan needs to know about a video: the header's length and rate, the decoded frames' size."""

    duration: float  # seconds
    fps: float  # the stream's average frame rate
    frames: int  # frame count (claimed by the container, or estimated)
    height: int
    width: int
    frame_step: int = 1  # a prepared copy keeping every frame_step-th frame (fps and frames are the source's)

    def with_size(self, height: int, width: int) -> VideoGeometry:
        """The same video with frames of another size (a display rotation PyAV applies once frames are decoded)."""
        return replace(self, height=height, width=width)


def geometry(info) -> VideoGeometry:
    """What a clip plan needs from a video's header (a harness.data.video_info.VideoInfo; frame size as the header
    states it, before any rotation)."""
    return VideoGeometry(info.duration, info.fps, info.frames, info.height, info.width, info.frame_step)


@dataclass(frozen=True)
class ClipSampling:
    """The dataset's part of a training plan (the fields of clip_dataset.Sampling that training uses)."""

    fps: float | None = 30.0  # strides count frames at this rate; None = the video's own rate
    segment: bool = False  # SSv2: one frame per uniform segment
    flip: bool = True  # random horizontal flip


@dataclass(frozen=True)
class ClipPlan:
    """One training clip, ready to execute: decode `times` of video `index`, crop `box`, resize to `size`×`size`,
    flip if `flip`. `frame_indices` are the frames nearest to `times` at the video's average rate (for readers
    that fetch by index); `short_side` is the scale-jitter draw the box was cut for."""

    index: int
    attempt: int
    times: tuple[float, ...]
    frame_indices: tuple[int, ...]
    short_side: int
    box: CropBox
    size: int
    flip: bool
    height: int  # the frame size the box was drawn for
    width: int


def attempt_rng(req: ClipRequest, attempt: int) -> np.random.Generator:
    """The generator of attempt `attempt` of a request (a function of its key only, not of process state)."""
    return np.random.default_rng([*req.key, attempt])


def attempt_index(req: ClipRequest, attempt: int, num_videos: int) -> int:
    """The video attempt `attempt` reads: the requested one first, then replacements drawn from the key."""
    if not attempt:
        return req.index
    return int(attempt_rng(req, attempt).integers(num_videos))


def nearest_frame_indices(times: Sequence[float], fps: float) -> tuple[int, ...]:
    """The frame nearest to each time at a constant `fps` (ties to the earlier frame, as VideoReader.frames_at),
    not below 0; the decoder clamps the top to its last frame."""
    return tuple(max(0, math.ceil(t * fps - 0.5 - 1e-9)) for t in times)


def train_clip_plan(req: ClipRequest, attempt: int, num_videos: int, video: VideoGeometry,
                    sampling: ClipSampling) -> ClipPlan:
    """The plan of attempt `attempt` of `req`, on a video of geometry `video` (see the module docs).

    Pure: the same arguments give the same plan. The times do not depend on the frame size, so a plan redone
    with another size (`video.with_size`) keeps its times and changes only the box.
    """
    rng = attempt_rng(req, attempt)
    index = int(rng.integers(num_videos)) if attempt else req.index
    if sampling.segment:
        picks = segment_indices(video.frames, req.t, rng)
        times = [i / video.fps for i in picks]
    else:
        stride = random_stride(req.stride_range, rng)
        times = train_clip_times(video.duration, req.t, stride, sampling.fps or video.fps, rng)
    short, box = train_crop_draw(video.height, video.width, req.s, req.jitter_range, rng)
    flip = sampling.flip and bool(rng.random() < 0.5)
    # Indices count the file's frames: a copy keeping every k-th frame holds them at fps / k.
    return ClipPlan(index, attempt, tuple(times), nearest_frame_indices(times, video.fps / video.frame_step), short,
                    box, req.s, flip, video.height, video.width)
