"""Reading clips with PyAV, the harness's only decoder: open a video, decode only the time window a clip needs,
and return the frames nearest its times as uint8 T×H×W×C RGB, upright. How times, raw streams, AVI files and
left-out frames are handled is in docs/data.md ("How videos are decoded")."""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence
from pathlib import Path

import av
import av.video.stream
import numpy as np
import torch

from harness.data.avi_timing import avi_delay, avi_timed_frames
from harness.data.errors import VideoError
from harness.data.rgb import clip_pixels, rotation_steps
from harness.data.transforms import CropBox
from harness.data.video_file import OPEN_ERRORS, open_container
from harness.data.video_info import VideoInfo, read_info, require_one_size, require_whole

# Codecs whose FFmpeg decoders can leave out the frames no other frame refers to (skip_frame=NONREF) and still
# decode every other frame exactly: B-frames that are not references (all of them in a prepared copy, some in
# x264's default output).
SKIPPABLE_CODECS = frozenset({"h264", "hevc"})
# A frame farther than this many of the file's frame periods from every time a clip asks for cannot be the nearest
# frame to any of them in constant-rate video (the nearest lies within half a period), so need not be decoded. The
# tenth of a period beyond the half covers timestamps rounded to the container's clock (1 ms in Matroska and WebM);
# where a left-out frame still was the nearest (variable-rate video), frames_at decodes the window again in full.
# A wider margin would decode more frames that are never the nearest.
SKIP_DISTANCE = 0.6

Decoded = list[tuple[float, av.VideoFrame]]  # (seconds from the first frame, frame) in stream order


def frame_time(frame: av.VideoFrame, start: float, index: int, info: VideoInfo) -> float:
    """Seconds from the stream's first frame to `frame`, the `index`-th decoded; where it has no timestamp (raw
    elementary streams: .h264, .hevc, .m4v), its index at the file's frame rate."""
    return frame.time - start if frame.time is not None else index * info.frame_step / info.fps


class VideoReader:
    """An open video (use as a context manager). `threads` decoder threads (FFmpeg frame/slice threading);
    `skip_frames=False` decodes every frame of a clip's window (frames_at leaves non-reference frames out)."""

    def __init__(self, path: str | Path, threads: int = 1, skip_frames: bool = True):
        self.path = Path(path)
        self._container = open_container(self.path)
        # The video stream FFmpeg's own tools pick: the main video, not a cover picture or a still
        # poster track a file may carry as a video stream before it.
        self._stream = stream = self._container.streams.best("video") or self._container.streams.video[0]
        _set_threads(stream, max(1, threads))
        self._tb = float(stream.time_base) if stream.time_base else 0.0
        self._start = float(stream.start_time * stream.time_base) if stream.start_time is not None else 0.0
        self.info = read_info(self.path, self._container, stream, self._start)
        self._used = False  # whether the demuxer/decoder moved since opening (then every decode seeks first)
        self._delay = 0  # an AVI file's decoder delay in frame periods (avi_delay)
        if self.info.container == "avi":
            self._delay, self._used = avi_delay(self._container, stream), True
        self._last_frame: float | None = None  # the stream's last frame time, once a decode reached its end
        self._can_skip = (skip_frames and self._tb > 0 and self.info.codec in SKIPPABLE_CODECS
                          and _sets_skip_frame(stream))
        self.frames_decoded = 0  # frames the decoder returned since opening (not counting those it skipped)
        self.shown_size: tuple[int, int] | None = None  # (height, width) of the last frames_at's frames, upright
        self._skipped: list[float] = []  # times of the frames the last decode left out

    @property
    def stated_frames(self) -> int:
        """The frame count the video stream's header states (0 where it states none)."""
        return self._stream.frames

    def close(self) -> None:
        self._container.close()

    def __enter__(self) -> VideoReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _seek(self, target: float) -> None:
        """Move to the keyframe at or before `target` seconds and reset the decoder (also after it hit EOF)."""
        if target > 0 and self._tb > 0:
            pts = int((target + self._start) / self._tb)
        else:  # back to the first frame: by time 0, not by the first frame's time (see below)
            pts = min(0, self._stream.start_time or 0)
        # MPEG-TS and MPEG-PS files seek by decoding times, which start before the first frame's time where the
        # stream has B-frames: seeking to the first frame's time lands after its keyframe, and the frames up to the
        # next keyframe were lost (a clip from the start of a camcorder's .mts showed a later frame repeated).
        try:
            self._container.seek(pts, stream=self._stream, backward=True)
        except av.error.FFmpegError:
            # A raw elementary stream (.h264, .hevc) cannot seek at all: open it again, at its start, from where
            # the decode reads on to `target` (as after a seek that overshoots).
            self._reopen()
            return
        self._stream.codec_context.flush_buffers()

    def _reopen(self) -> None:
        """The file opened afresh, its demuxer and decoder at the start (set up as when the reader opened it)."""
        index, threads = self._stream.index, self._stream.codec_context.thread_count
        self._container.close()
        try:
            self._container = av.open(str(self.path), metadata_errors="ignore")
        except OPEN_ERRORS as err:
            raise VideoError("undecodable", f"{self.path} could not be opened again to read it from the start "
                                            f"({err})") from None
        self._stream = self._container.streams[index]
        _set_threads(self._stream, threads)

    def _frames(self, wanted: Sequence[float] | None):
        """The stream's frames from where the demuxer stands. With `wanted` (sorted seconds) non-reference frames
        farther than SKIP_DISTANCE frame periods from every wanted time are left out by the decoder (their times
        go to `_skipped`): nothing else depends on them, so every other frame decodes exactly as in full."""
        codec = self._stream.codec_context
        self._skipped = []
        if wanted is None or not self._can_skip:
            yield from self._container.decode(self._stream)
            return
        near = SKIP_DISTANCE * self.info.frame_step / self.info.fps
        asked: dict[int, float] = {}  # pts → time of the frames the decoder may leave out and has not returned
        try:
            for packet in self._container.demux(self._stream):
                skip = False
                if packet.pts is not None and packet.size:
                    t = packet.pts * self._tb - self._start
                    skip = _far_from_all(t, wanted, near)
                    if skip:
                        asked[packet.pts] = t
                codec.skip_frame = "NONREF" if skip else "DEFAULT"
                for frame in codec.decode(packet):  # frames come out in display order, some packets later
                    asked.pop(frame.pts, None)  # a reference frame: decoded although it could be left out
                    yield frame
        finally:
            codec.skip_frame = "DEFAULT"
            # Left out, or not yet returned when the caller stopped (later than every frame it took): either way
            # frames_at's check treats them as possibly nearer than what it got, which is only stricter.
            self._skipped = list(asked.values())

    def timed_frames(self) -> Iterator[tuple[float, av.VideoFrame]]:
        """Every frame of the stream, from the first, each with its time (seconds from the first frame)."""
        if self._used:
            self._seek(0.0)
        self._used = True
        yield from self._timed()

    def _timed(self, wanted: Sequence[float] | None = None) -> Iterator[tuple[float, av.VideoFrame]]:
        """The stream's frames from where the demuxer stands (after a seek, from its keyframe), with their times;
        `wanted` as for `_frames` (AVI's frames are all decoded: their times come from the decoding order)."""
        if self.info.container == "avi":
            self._skipped = []
            yield from avi_timed_frames(self._container, self._stream, self._delay, self._start)
            return
        frames = self._frames(wanted)
        try:
            for count, frame in enumerate(frames):
                yield frame_time(frame, self._start, count, self.info), frame
        finally:
            frames.close()

    def _decode(self, start: float, end: float, wanted: Sequence[float] | None = None) -> Decoded:
        """Frames with time in [start, end] (seconds), seeking to the keyframe before `start` first; with `wanted`
        (sorted seconds), non-reference frames far from all of them may be left out (`_frames`)."""
        # Half the file's frame period: in a copy keeping every k-th frame the kept frame nearest `start` may lie
        # k/2 source frames before it, and must be among the candidates.
        tol = 0.5 * self.info.frame_step / self.info.fps
        # Seek to the window; if the container seeks past it (no usable index), decode from the beginning.
        targets = ([start] if start > tol and self._tb > 0 else []) + [0.0]
        out: Decoded = []
        for target in targets:
            out, overshot, count = self._decode_from(target, start, end, tol, wanted)
            if target == 0 and not count:  # from the start to the end without a frame (a later seek would fail)
                raise VideoError("undecodable", f"no frame of {self.path} could be decoded")
            if not overshot:
                return out
        return out

    def _decode_from(self, target: float, start: float, end: float, tol: float,
                     wanted: Sequence[float] | None) -> tuple[Decoded, bool, int]:
        """`_decode`'s frames (within `tol` seconds of [start, end]) decoded from the keyframe at or before `target`
        seconds (from the first frame where 0), whether the seek overshot the window, and how many were decoded."""
        out: Decoded = []
        period = self.info.frame_step / self.info.fps  # between two frames of the file
        count = 0
        frames = self._timed(wanted)
        try:
            if target > 0 or self._used:
                self._seek(target)
            self._used = True
            for t, frame in frames:
                count += 1
                self.frames_decoded += 1
                # Past the window before reaching it: the first frame at or after start - tol lies within one of
                # the file's frame periods of it (frame_step / fps in a copy keeping every k-th frame).
                if not out and target > 0 and t > start - tol + period:
                    return out, True, count
                if t < start - tol:
                    continue
                if t > end + tol:
                    break
                out.append((t, frame))
            else:
                if count:
                    self._last_frame = max([t, *self._skipped])
        except av.error.FFmpegError as err:
            raise VideoError("undecodable", f"decoding {self.path} failed near {start:.2f}s ({err})") from None
        finally:
            frames.close()
        return out, False, count

    def _decode_around(self, times: Sequence[float]) -> Decoded:
        """Decoded frames among which the nearest to each of `times` are those a full decode would pick."""
        start, end = max(0.0, min(times)), max(times)
        decoded = self._decode(start, end, sorted(times))
        if decoded and self._skipped and _skipped_a_pick(decoded, self._skipped, times):
            decoded = self._decode(start, end)  # a gap in the frame times (variable rate): decode the window in full
        if not decoded:  # asked past the end (metadata overstates the length): use the video's last frames
            decoded = self._decode(0.0, float("inf"))
        if not decoded:
            raise VideoError("undecodable", f"no frame of {self.path} could be decoded")
        if self._last_frame is not None and max(times) > self._last_frame:
            # The clip reaches past the stream's last frame, which would be repeated to fill it: right where the
            # header overstates the length a little, not where the stream ends well before it (cut off, as
            # scan_video rules; a cut WebM or Matroska file decodes without an error up to the cut).
            require_whole(self.path, self.info, None, self._last_frame, self._stream.frames)
        return decoded

    def frames_at(self, times: Sequence[float], crop: CropBox | None = None) -> torch.Tensor:
        """The frames nearest to `times` (seconds; clamped to the video), uint8 T×H×W×C RGB, upright.

        With `crop` (a box of the upright frames) only the box's pixels: T×size×size×C, the values of cropping
        the whole frames, converting and stacking only the box where the frames need no turning (a clip's box
        covers a tenth to a half of the frame at multigrid's small shapes; whole frames cost a training clip up
        to a third of its time, see to_rgb_box). `shown_size` is the upright (height, width) of the frames."""
        if not len(times):
            raise ValueError("frames_at needs at least one time")
        decoded = self._decode_around(times)
        stamps = [t for t, _ in decoded]
        picks = [nearest(stamps, t) for t in times]
        require_one_size(self.path, decoded, picks)
        first = decoded[picks[0]][1]
        k = rotation_steps(getattr(decoded[0][1], "rotation", 0) or 0)
        self.shown_size = (first.width, first.height) if k % 2 else (first.height, first.width)
        return torch.from_numpy(np.ascontiguousarray(clip_pixels([f for _, f in decoded], picks, crop, k)))

    def frame_times(self, indices: Sequence[int]) -> list[float]:
        """Times of frame indices at the video's average frame rate (for index-based sampling such as SSv2)."""
        return [i / self.info.fps for i in indices]


def nearest(stamps: Sequence[float], t: float) -> int:
    """Index of the time in sorted `stamps` nearest to `t`, the earlier of two as near."""
    j = bisect.bisect_left(stamps, t)
    if j == len(stamps) or (j > 0 and t - stamps[j - 1] <= stamps[j] - t):
        j = max(0, j - 1)
    return j


def _far_from_all(t: float, wanted: Sequence[float], near: float) -> bool:
    """Whether `t` lies farther than `near` seconds from every time of sorted `wanted` (its neighbours there)."""
    j = bisect.bisect_left(wanted, t)
    return all(abs(t - wanted[k]) > near for k in (j - 1, j) if 0 <= k < len(wanted))


def _skipped_a_pick(decoded: Decoded, skipped: list[float], times: Sequence[float]) -> bool:
    """Whether a frame left out of a decode (at a time in `skipped`) is as near to one of `times` as the nearest
    decoded frame, so that the pick could differ from a full decode's."""
    stamps = [t for t, _ in decoded]
    skipped = sorted(skipped)
    for t in times:
        d = abs(stamps[nearest(stamps, t)] - t)
        if abs(skipped[nearest(skipped, t)] - t) <= d:
            return True
    return False


def _set_threads(stream: av.video.stream.VideoStream, threads: int) -> None:
    """Decode `stream` on `threads` threads, by frames or slices as its codec allows."""
    stream.thread_type = "AUTO"
    stream.codec_context.thread_count = threads


def _sets_skip_frame(stream: av.video.stream.VideoStream) -> bool:
    """Whether this PyAV lets the decoder's skip_frame be set (by name)."""
    try:
        stream.codec_context.skip_frame = "DEFAULT"
    except (AttributeError, TypeError, ValueError):
        return False
    return True


def open_video(path: str | Path, threads: int = 1) -> VideoReader:
    """A reader of `path` decoding on `threads` threads."""
    return VideoReader(path, threads)


def read_clip(path: str | Path, times: Sequence[float], threads: int = 1) -> torch.Tensor:
    """Open `path` and return the frames nearest to `times`, uint8 T×H×W×C."""
    with VideoReader(path, threads) as reader:
        return reader.frames_at(times)
