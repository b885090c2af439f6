"""What a video's header says (:class:`VideoInfo`, read from an open stream) and the checks its decoded frames
must pass against it: frames that end well before the length it claims (cut off), frames that change size."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import av.container
import av.video.stream

from harness.data.errors import VideoError
from harness.data.video_file import OPEN_ERRORS

# A decoded span shorter than this share of the duration the container claims means data is missing (a
# truncated Matroska/WebM file decodes without any error up to the cut).
TRUNCATION_SHARE = 0.75


@dataclass(frozen=True)
class VideoInfo:
    """What the container says about a video's video stream, the one FFmpeg picks (sizes after rotation)."""

    path: str
    width: int
    height: int
    fps: float
    duration: float  # seconds (claimed by the container; truncated files may claim more than they hold)
    frames: int  # claimed, or estimated as duration × fps where the container does not say
    rotation: int  # degrees counter-clockwise the frames are turned to display upright (known after decoding)
    codec: str
    container: str
    # A copy made by `harness data prepare --frame-step K` keeps every K-th frame at its source time; `fps` and
    # `frames` are then the source's (strides count source frames), the file holds frames/K at fps/K.
    frame_step: int = 1
    # Errors the decoder logged and concealed (damaged data it painted over), and the first of them: scan_video's.
    decode_errors: int = 0
    first_decode_error: str = ""


# How a prepared copy that keeps every K-th frame says so, with the source's frame rate (containers differ in the
# rate they report for such a file): the container's comment, which mp4, mov and Matroska keep; written by
# harness.data.prepare.
FRAME_STEP_TAG = "harness frame_step="


def frame_step_tag(step: int, fps: Fraction) -> str:
    return f"{FRAME_STEP_TAG}{step} fps={fps}"


def frame_step_of(metadata: dict[str, str]) -> tuple[int, float | None]:
    """(frame step, source fps) a container's metadata declares; (1, None) where it declares none (Matroska
    upper-cases the key)."""
    comment = str(next((v for k, v in metadata.items() if k.lower() == "comment"), ""))
    if not comment.startswith(FRAME_STEP_TAG):
        return 1, None
    fields = dict(part.split("=", 1) for part in comment[len("harness "):].split() if "=" in part)
    try:
        step, fps = max(1, int(fields["frame_step"])), float(Fraction(fields["fps"]))
    except (KeyError, ValueError, ZeroDivisionError):
        return 1, None
    return (step, fps) if fps > 0 else (1, None)



def read_info(path: Path, container: av.container.InputContainer, stream: av.video.stream.VideoStream,
              start: float) -> VideoInfo:
    """The VideoInfo of `stream` of `container` (opened from `path`), whose first frame is at `start` seconds."""
    s, c = stream, container
    fps = float(s.average_rate or s.guessed_rate or s.base_rate or 0) or 30.0
    duration = _stated_duration(c, s, start, fps)
    frames = s.frames or int(round(duration * fps))
    if not frames:  # a raw elementary stream (.h264, .hevc, .m4v): no container states its length or rate
        # FFmpeg's average rate for such a stream is its 25 fps default; the rate the stream itself codes (H.264's
        # VUI timing, MPEG-4's time base), which its frame times follow, is the guessed rate.
        fps = float(s.guessed_rate or 0) or fps
        frames = count_packets(path, s.index)
        duration = frames / fps
    step, source_fps = frame_step_of(c.metadata)
    if step > 1:  # a copy keeping every step-th frame: the source's rate, and its frame count
        fps, frames = source_fps, (s.frames * step if s.frames else int(round(duration * source_fps)))
    # PyAV exposes the display matrix per decoded frame only, so the header gives coded sizes and no rotation;
    # VideoReader.frames_at() and scan_video() apply and report it.
    return VideoInfo(str(path), s.codec_context.width, s.codec_context.height, fps, duration, frames, 0,
                     s.codec_context.name, c.format.name, step)


def _stated_duration(c: av.container.InputContainer, s: av.video.stream.VideoStream, start: float,
                     fps: float) -> float:
    """Seconds the header states the video stream lasts (0 where nothing states it)."""
    tagged = _tagged_duration(s.metadata)
    if s.duration:
        return float(s.duration * s.time_base)
    if c.duration or tagged:
        # Matroska states the longest stream's duration (an audio track may run on past the video's end); the
        # video's own is its DURATION tag, which FFmpeg's and mkvmerge's muxers write.
        duration = tagged or c.duration / av.time_base
        if start > 0 and c.format.name.startswith("matroska") and _written_by_ffmpeg(c.metadata):
            # FFmpeg's Matroska muxer writes the time of the file's end as its duration: a part of a longer
            # recording whose times go on from the part before (ffmpeg -f segment, -copyts) would claim the
            # parts before it too, and be taken for a truncated file.
            duration -= start
        return duration
    return (s.frames or 0) / fps


def count_packets(path: Path, index: int) -> int:
    """The number of frames (packets) of stream `index` of `path`, read without decoding them."""
    try:
        with av.open(str(path), metadata_errors="ignore") as container:
            return sum(1 for packet in container.demux(container.streams[index]) if packet.size)
    except OPEN_ERRORS:
        return 0  # unreadable past its header: decoding will say so


def _tagged_duration(metadata: dict[str, str]) -> float | None:
    """Seconds a Matroska stream's DURATION tag (HH:MM:SS.fraction) states; None where it states none."""
    text = str(next((v for k, v in metadata.items() if k.upper() == "DURATION"), ""))
    match = re.fullmatch(r"(\d+):(\d{1,2}):(\d{1,2}(?:\.\d*)?)", text.strip())
    if not match:
        return None
    hours, minutes, seconds = match.groups()
    duration = int(hours) * 3600 + int(minutes) * 60 + float(seconds)
    return duration if duration > 0 else None


def _written_by_ffmpeg(metadata: dict[str, str]) -> bool:
    """Whether a container's metadata names FFmpeg's libavformat (Lavf) as the program that wrote it."""
    return any(k.lower() == "encoder" and str(v).startswith("Lavf") for k, v in metadata.items())


def require_whole(path: str | Path, info: VideoInfo, count: int | None, last: float, stated_frames: int = 0) -> None:
    """VideoError("truncated") where the `count` frames decoded (None: not counted), the last at `last` seconds,
    end well before the duration the container claims (less than TRUNCATION_SHARE of it, and more than two of the
    file's frames short), or, in an AVI file, are well short of the `stated_frames` (the stream's frame count) its
    header states."""
    period = info.frame_step / info.fps  # between two frames of the file
    span = last + period
    if info.duration > 0 and span < TRUNCATION_SHARE * info.duration and info.duration - span > 2.0 * period:
        frames = "its frames end" if count is None else f"decoded {count} frames"
        raise VideoError("truncated", f"{path}: {frames} ({span:.2f}s) of the {info.duration:.2f}s the container "
                                      f"claims")
    # A cut AVI file loses its index, and FFmpeg then measures the duration from the frames left, so the check
    # above passes; the header's frame count still says how many there were. Only for AVI: an MP4 cut from a
    # longer file without re-encoding states frames before its edit list's start that are never shown.
    if info.container == "avi" and stated_frames > 0:
        # The last frame's place, not the count: a dropped frame's null index entry is counted by the header and
        # shown as the frame before it, so it is a frame the video has.
        found = round(last / period) + 1
        if found < TRUNCATION_SHARE * stated_frames and stated_frames - found > 2:
            decoded = "" if count is None else f" ({count} decoded)"
            raise VideoError("truncated", f"{path}: its frames end at frame {found}{decoded} of the {stated_frames} "
                                          f"frames the AVI header states")




def size_change(path: str | Path, first: tuple[int, ...], later: tuple[int, ...], time: float) -> str:
    """What a VideoError says of a video whose frames change size (height, width) mid-stream."""
    return (f"{path}: frame size changes from {first[1]}x{first[0]} to {later[1]}x{later[0]} at {time:.2f}s "
            f"(parts of different sizes joined into one stream; re-encode it at one size)")


def require_one_size(path: Path, decoded: Sequence[tuple[float, av.VideoFrame]], picks: list[int]) -> None:
    """VideoError where the frames of `decoded` ((time, frame) pairs) at `picks` differ in size: streams joined from
    parts of other sizes (concatenated segments of a download) change size mid-stream, and such frames stack into
    no clip (as scan_video names it)."""
    first = decoded[picks[0]][1]
    for j in dict.fromkeys(picks):
        frame = decoded[j][1]
        if (frame.height, frame.width) != (first.height, first.width):
            raise VideoError("undecodable", size_change(path, (first.height, first.width),
                                                        (frame.height, frame.width), decoded[j][0]))
