"""Timing an AVI file's frames: AVI stores no presentation times, so each frame is placed by its decoding order."""

from __future__ import annotations

from collections.abc import Iterator

import av
import av.container
import av.video.stream


def avi_delay(container: av.container.InputContainer, stream: av.video.stream.VideoStream) -> int:
    """How many frame periods after its place an AVI file's decoder returns each frame, measured on its first
    frame (shown at its own place); the next decode rewinds.

    Why: AVI stores each frame's place in decoding order (its decoding time), not when it is shown, and FFmpeg's
    guess at the latter misdates streams with B-frames (one frame late for MPEG-4 part 2 as Xvid and DivX write
    it, out of order for H.264). Frames come out of the decoder in the order they are shown, each with the
    decoding time of the packet that let it out: a constant delay (the decoder's reordering) after its place.
    """
    first = None
    try:
        for packet in container.demux(stream):
            first = packet.dts if first is None else first
            for frame in packet.decode():
                return frame.dts - first if frame.dts is not None and first is not None else 0
    except av.error.FFmpegError:
        pass  # decoding the clip says what is wrong
    return 0


def avi_timed_frames(container: av.container.InputContainer, stream: av.video.stream.VideoStream, delay: int,
                     start: float) -> Iterator[tuple[float, av.VideoFrame]]:
    """The frames of an AVI file from where the demuxer stands, each at its place (see avi_delay) in seconds from
    `start`; frames flushed at the end, which carry no decoding time, one frame period after the frame before."""
    tb, place = stream.time_base, None
    for frame in container.decode(stream):
        if frame.dts is not None:
            place = frame.dts - delay
        else:
            place = place + 1 if place is not None else (frame.pts or 0) - delay
        yield float(place * tb) - start, frame
