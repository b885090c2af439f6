"""Scanning a video whole: every frame decoded (without colour conversion) to find what opening alone misses, as
`harness data check` and the training set's checks do."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import av
import av.logging

from harness.data.decode import VideoReader
from harness.data.errors import VideoError
from harness.data.rgb import rotation_steps
from harness.data.video_info import VideoInfo, require_whole, size_change


def scan_video(path: str | Path, min_frames: int = 1, threads: int = 1) -> VideoInfo:
    """Decode every frame of `path` (without colour conversion) and raise VideoError if it is not usable.

    Catches what opening alone misses: undecodable packets, truncation (fewer seconds decoded than the
    container claims) and videos shorter than `min_frames` frames. Returns the info with the decoded count.
    """
    with VideoReader(path, threads) as reader, _logged_errors() as logged:
        info, count, last, rotation, size = reader.info, 0, 0.0, 0, (0, 0)
        stated = reader.stated_frames
        try:
            for t, frame in reader.timed_frames():
                if count == 0:
                    rotation = getattr(frame, "rotation", 0) or 0
                    size = (frame.height, frame.width)
                if count and (frame.height, frame.width) != size:  # training could not stack them into a clip
                    raise VideoError("undecodable", size_change(path, size, (frame.height, frame.width), t))
                count += 1
                last = max(last, t)
        except av.error.FFmpegError as err:
            raise VideoError("undecodable", f"{path}: decoding failed after {count} frame(s) ({err})") from None
    if count == 0:
        raise VideoError("undecodable", f"{path}: no frame could be decoded")
    require_whole(path, info, count, last, stated)
    if info.container == "avi":  # a dropped frame's null entry shows the frame before: clips count it as a frame
        count = max(count, round(last * info.fps) + 1)
    count *= info.frame_step  # in source frames, as the header reports them
    if count < min_frames:
        raise VideoError("too_short", f"{path}: {count} frame(s), fewer than the {min_frames} a clip needs")
    w, h = (info.height, info.width) if rotation_steps(rotation) % 2 else (info.width, info.height)
    return VideoInfo(info.path, w, h, info.fps, info.duration, count, rotation, info.codec, info.container,
                     info.frame_step, len(logged), logged[0] if logged else "")


@contextlib.contextmanager
def _logged_errors() -> Iterator[list[str]]:
    """The error messages FFmpeg logs meanwhile (from any thread): a decoder that conceals damaged data (zeroed
    bytes in a frame) returns frames and raises nothing, and says so only in its log."""
    previous, repeated = av.logging.get_level(), av.logging.get_skip_repeated()
    messages: list[str] = []
    av.logging.set_level(av.logging.ERROR)
    av.logging.set_skip_repeated(False)  # each error counted, also where the video before logged the same
    try:
        with av.logging.Capture(local=False) as logs:
            yield messages
            messages += [message.strip() for level, _, message in logs if level <= av.logging.ERROR]
    finally:
        av.logging.set_level(previous)
        av.logging.set_skip_repeated(repeated)
