"""Decoding with PyAV: open a video, seek to a time window, decode only that window, respect rotation.

Output layout: ``uint8`` tensors ``T×H×W×C`` (RGB), the layout frames come out of the decoder in; the
transforms turn them into the model's ``C×T×H×W``. Times are seconds from the video stream's first frame,
so any frame rate (constant or variable) and any container/codec FFmpeg reads works; a raw elementary stream
(.h264, .hevc, .m4v), which no container times, is counted packet by packet at the rate it codes; an AVI file, which
stores no presentation times, is timed by its frames' places in decoding order (``VideoReader._avi_delay``). Audio is
never decoded.
Frames are converted to RGB only when a clip uses them, and H.264/HEVC frames that no other frame refers to are not
decoded at all unless the clip shows them: a strided clip decodes its window's reference frames and the frames it
picks (copies made by ``harness data prepare`` code three of every four frames that way), and gets the same frames
as a full decode (:meth:`VideoReader.frames_at` decodes the window again in full where a skipped frame could have
been the nearest to a time, as in variable-rate video).

PyAV is the harness's only decoder (:func:`open_video`; the others measured are retired: docs/performance.md).
"""

from __future__ import annotations

import bisect
import contextlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

import av
import av.logging
import numpy as np
import torch

from harness.data.errors import VideoError
from harness.io import unreadable_reason

if TYPE_CHECKING:
    from harness.data.transforms import CropBox

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


_OPEN_ERRORS = (av.error.FFmpegError, OSError, UnicodeDecodeError, ValueError)


def _container_signature(path: Path) -> str | None:
    """The container a file's first bytes announce (MP4/MOV, Matroska/WebM, AVI), or None."""
    with open(path, "rb") as f:
        head = f.read(12)
    if head[4:8] in (b"ftyp", b"moov", b"mdat", b"free", b"wide"):
        return "an MP4/MOV file"
    if head[:4] == b"\x1a\x45\xdf\xa3":
        return "a Matroska/WebM file"
    if head[:4] == b"RIFF" and head[8:12] == b"AVI ":
        return "an AVI file"
    return None


def _count_packets(path: Path, index: int) -> int:
    """The number of frames (packets) of stream `index` of `path`, read without decoding them."""
    try:
        with av.open(str(path), metadata_errors="ignore") as container:
            return sum(1 for packet in container.demux(container.streams[index]) if packet.size)
    except _OPEN_ERRORS:
        return 0  # unreadable past its header: decoding will say so


def unreadable(path: str | Path, err: OSError, what: str = "") -> VideoError:
    """The VideoError of a file the file system refuses to open (permissions, most often), named (after `what`)
    with the fix."""
    return VideoError("unreadable", f"{what}{path} {unreadable_reason(path, err)}")


def _check_file(path: Path) -> None:
    """VideoError for what needs no decoder to find: a missing path, a folder, an empty file, a file that cannot
    be opened (FFmpeg would only say 'Permission denied', and the header sniffing after it would raise)."""
    try:
        size = path.stat().st_size
    except (FileNotFoundError, NotADirectoryError):
        raise VideoError("missing", f"no such file {path}") from None
    except OSError as err:  # a folder on the way that may not be searched
        raise unreadable(path, err) from None
    if not path.is_file():
        raise VideoError("not_a_video", f"{path} is a directory or special file, not a video file")
    if size == 0:
        raise VideoError("empty", f"{path} is empty (0 bytes)")
    try:
        with open(path, "rb"):
            pass
    except OSError as err:
        raise unreadable(path, err) from None


def _converts_on_one_thread() -> dict[str, int]:
    """to_ndarray's keyword that keeps the RGB conversion on the calling thread, where PyAV has it (12 and later)."""
    try:
        av.VideoFrame(16, 16, "yuv420p").to_ndarray(format="rgb24", threads=1)
    except TypeError:
        return {}
    return {"threads": 1}


# PyAV's converter defaults to a thread per CPU for every frame it converts (threads=0, 'auto'). Loader workers
# already run one per core, so each would start all cores' threads: on 2 cores a second process raised the clip
# rate 1.13x with that default and 1.96x with one thread each (benchmarks/pyav_scaling.py measures it per host).
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


def _rotation_steps(degrees: float) -> int:
    """Quarter turns counter-clockwise for a display rotation; other angles are rounded to the nearest quarter."""
    return int(round(degrees / 90.0)) % 4


def frame_time(frame: av.VideoFrame, start: float, index: int, info: VideoInfo) -> float:
    """Seconds from the stream's first frame to `frame`, the `index`-th decoded; where it has no timestamp (raw
    elementary streams: .h264, .hevc, .m4v), its index at the file's frame rate."""
    return frame.time - start if frame.time is not None else index * info.frame_step / info.fps


class VideoReader:
    """An open video (use as a context manager). `threads` decoder threads (FFmpeg frame/slice threading);
    `skip_frames=False` decodes every frame of a clip's window (see the module's docs)."""

    def __init__(self, path: str | Path, threads: int = 1, skip_frames: bool = True):
        self.path = Path(path)
        _check_file(self.path)
        try:
            self._container = av.open(str(self.path), metadata_errors="ignore")
        except _OPEN_ERRORS as err:
            kind = _container_signature(self.path)
            if kind:  # a video file's header but FFmpeg cannot parse it: cut off or damaged, not a non-video
                raise VideoError("undecodable", f"{self.path} starts like {kind} but FFmpeg cannot open it "
                                                f"(truncated or corrupt: {err})") from None
            raise VideoError("not_a_video", f"FFmpeg cannot open {self.path} as a video ({err})") from None
        if not self._container.streams.video:
            self._container.close()
            raise VideoError("no_video_stream", f"{self.path} has no video stream")
        # The video stream FFmpeg's own tools pick: the main video, not a cover picture or a still
        # poster track a file may carry as a video stream before it.
        self._stream = stream = self._container.streams.best("video") or self._container.streams.video[0]
        _set_threads(stream, max(1, threads))
        self._tb = float(stream.time_base) if stream.time_base else 0.0
        self._start = float(stream.start_time * stream.time_base) if stream.start_time is not None else 0.0
        self.info = self._probe()
        self._used = False  # whether the demuxer/decoder moved since opening (then every decode seeks first)
        self._delay = self._avi_delay() if self.info.container == "avi" else 0
        self._last_frame: float | None = None  # the stream's last frame time, once a decode reached its end
        self._can_skip = (skip_frames and self._tb > 0 and self.info.codec in SKIPPABLE_CODECS
                          and _sets_skip_frame(stream))
        self.frames_decoded = 0  # frames the decoder returned since opening (not counting those it skipped)
        self.shown_size: tuple[int, int] | None = None  # (height, width) of the last frames_at's frames, upright
        self._skipped: list[float] = []  # times of the frames the last decode left out

    def _probe(self) -> VideoInfo:
        s, c = self._stream, self._container
        fps = float(s.average_rate or s.guessed_rate or s.base_rate or 0) or 30.0
        tagged = _tagged_duration(s.metadata)
        if s.duration:
            duration = float(s.duration * s.time_base)
        elif c.duration or tagged:
            # Matroska states the longest stream's duration (an audio track may run on past the video's end); the
            # video's own is its DURATION tag, which FFmpeg's and mkvmerge's muxers write.
            duration = tagged or c.duration / av.time_base
            if self._start > 0 and c.format.name.startswith("matroska") and _written_by_ffmpeg(c.metadata):
                # FFmpeg's Matroska muxer writes the time of the file's end as its duration: a part of a longer
                # recording whose times go on from the part before (ffmpeg -f segment, -copyts) would claim the
                # parts before it too, and be taken for a truncated file.
                duration -= self._start
        else:
            duration = (s.frames or 0) / fps
        frames = s.frames or int(round(duration * fps))
        if not frames:  # a raw elementary stream (.h264, .hevc, .m4v): no container states its length or rate
            # FFmpeg's average rate for such a stream is its 25 fps default; the rate the stream itself codes (H.264's
            # VUI timing, MPEG-4's time base), which its frame times follow, is the guessed rate.
            fps = float(s.guessed_rate or 0) or fps
            frames = _count_packets(self.path, s.index)
            duration = frames / fps
        step, source_fps = frame_step_of(c.metadata)
        if step > 1:  # a copy keeping every step-th frame: the source's rate, and its frame count
            fps, frames = source_fps, (s.frames * step if s.frames else int(round(duration * source_fps)))
        # PyAV exposes the display matrix per decoded frame only, so the probe reports coded sizes and no
        # rotation; frames_at() and scan_video() apply and report it.
        return VideoInfo(str(self.path), s.codec_context.width, s.codec_context.height, fps, duration, frames, 0,
                         s.codec_context.name, c.format.name, step)

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
        except _OPEN_ERRORS as err:
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
                    j = bisect.bisect_left(wanted, t)
                    skip = all(abs(t - wanted[k]) > near for k in (j - 1, j) if 0 <= k < len(wanted))
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
            yield from self._avi_frames()
            return
        frames = self._frames(wanted)
        try:
            for count, frame in enumerate(frames):
                yield frame_time(frame, self._start, count, self.info), frame
        finally:
            frames.close()

    def _avi_frames(self) -> Iterator[tuple[float, av.VideoFrame]]:
        """`timed_frames` of an AVI file: each frame at its place (see `_avi_delay`); frames flushed at the end,
        which carry no decoding time, one frame period after the frame before."""
        tb, place = self._stream.time_base, None
        for frame in self._container.decode(self._stream):
            if frame.dts is not None:
                place = frame.dts - self._delay
            else:
                place = place + 1 if place is not None else (frame.pts or 0) - self._delay
            yield float(place * tb) - self._start, frame

    def _avi_delay(self) -> int:
        """How many frame periods after its place an AVI file's decoder returns each frame, measured on its first
        frame (shown at its own place); the next decode rewinds.

        Why: AVI stores each frame's place in decoding order (its decoding time), not when it is shown, and FFmpeg's
        guess at the latter misdates streams with B-frames (one frame late for MPEG-4 part 2 as Xvid and DivX write
        it, out of order for H.264). Frames come out of the decoder in the order they are shown, each with the
        decoding time of the packet that let it out: a constant delay (the decoder's reordering) after its place.
        """
        first = None
        try:
            for packet in self._container.demux(self._stream):
                first = packet.dts if first is None else first
                for frame in packet.decode():
                    return frame.dts - first if frame.dts is not None and first is not None else 0
        except av.error.FFmpegError:
            pass  # decoding the clip says what is wrong
        finally:
            self._used = True
        return 0

    def _decode(self, start: float, end: float,
                wanted: Sequence[float] | None = None) -> list[tuple[float, av.VideoFrame]]:
        """Frames with time in [start, end] (seconds), seeking to the keyframe before `start` first; with `wanted`
        (sorted seconds), non-reference frames far from all of them may be left out (`_frames`)."""
        fps = self.info.fps
        # Half the file's frame period: in a copy keeping every k-th frame the kept frame nearest `start` may lie
        # k/2 source frames before it, and must be among the candidates.
        tol = 0.5 * self.info.frame_step / fps
        # Seek to the window; if the container seeks past it (no usable index), decode from the beginning.
        targets = ([start] if start > tol and self._tb > 0 else []) + [0.0]
        out: list[tuple[float, av.VideoFrame]] = []
        for target in targets:
            out, overshot, count = [], False, 0
            frames = self._timed(wanted)
            try:
                if target > 0 or self._used:
                    self._seek(target)
                self._used = True
                for t, frame in frames:
                    count += 1
                    self.frames_decoded += 1
                    # Past the window before reaching it: the first frame at or after start - tol lies within
                    # one of the file's frame periods of it (frame_step / fps in a copy keeping every k-th frame).
                    if not out and target > 0 and t > start - tol + self.info.frame_step / fps:
                        overshot = True
                        break
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
            if target == 0 and not count:  # from the start to the end without a frame (a later seek would fail)
                raise VideoError("undecodable", f"no frame of {self.path} could be decoded")
            if not overshot:
                return out
        return out

    def frames_at(self, times: Sequence[float], crop: CropBox | None = None) -> torch.Tensor:
        """The frames nearest to `times` (seconds; clamped to the video), uint8 T×H×W×C RGB, upright.

        With `crop` (a box of the upright frames) only the box's pixels: T×size×size×C, the values of cropping
        the whole frames, converting and stacking only the box where the frames need no turning (a clip's box
        covers a tenth to a half of the frame at multigrid's small shapes; whole frames cost a training clip up
        to a third of its time, see to_rgb_box). `shown_size` is the upright (height, width) of the frames."""
        if not len(times):
            raise ValueError("frames_at needs at least one time")
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
        stamps = [t for t, _ in decoded]
        picks = [nearest(stamps, t) for t in times]
        first, unique = decoded[picks[0]][1], dict.fromkeys(picks)  # each picked frame converted once
        for j in unique:
            # Streams joined from parts of other sizes (concatenated segments of a download) change size
            # mid-stream; such frames stack into no clip, so the video is skipped as scan_video names it.
            frame = decoded[j][1]
            if (frame.height, frame.width) != (first.height, first.width):
                raise VideoError("undecodable", size_change(self.path, (first.height, first.width),
                                                            (frame.height, frame.width), decoded[j][0]))
        k = _rotation_steps(getattr(decoded[0][1], "rotation", 0) or 0)
        self.shown_size = (first.width, first.height) if k % 2 else (first.height, first.width)
        if crop is not None and not k:  # only the box converted
            order = list(unique)
            boxes = to_rgb_boxes([decoded[j][1] for j in order], crop.top, crop.left, crop.size)
            if order != picks:  # a frame picked twice, or picks out of order
                boxes = boxes[[order.index(j) for j in picks]]
            return torch.from_numpy(np.ascontiguousarray(boxes))
        whole = {j: to_rgb(decoded[j][1]) for j in unique}
        array = np.stack([whole[j] for j in picks])
        if k:  # display matrix: turn counter-clockwise by `rotation` degrees to show the video upright
            array = np.rot90(array, k=k, axes=(1, 2))
        if crop is not None:
            array = array[:, crop.top:crop.top + crop.size, crop.left:crop.left + crop.size]
        return torch.from_numpy(np.ascontiguousarray(array))

    def frame_times(self, indices: Sequence[int]) -> list[float]:
        """Times of frame indices at the video's average frame rate (for index-based sampling such as SSv2)."""
        return [i / self.info.fps for i in indices]


def nearest(stamps: Sequence[float], t: float) -> int:
    """Index of the time in sorted `stamps` nearest to `t`, the earlier of two as near."""
    j = bisect.bisect_left(stamps, t)
    if j == len(stamps) or (j > 0 and t - stamps[j - 1] <= stamps[j] - t):
        j = max(0, j - 1)
    return j


def _skipped_a_pick(decoded: list[tuple[float, av.VideoFrame]], skipped: list[float], times: Sequence[float]) -> bool:
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


def size_change(path: str | Path, first: tuple[int, ...], later: tuple[int, ...], time: float) -> str:
    """What a VideoError says of a video whose frames change size (height, width) mid-stream."""
    return (f"{path}: frame size changes from {first[1]}x{first[0]} to {later[1]}x{later[0]} at {time:.2f}s "
            f"(parts of different sizes joined into one stream; re-encode it at one size)")


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


def scan_video(path: str | Path, min_frames: int = 1, threads: int = 1) -> VideoInfo:
    """Decode every frame of `path` (without colour conversion) and raise VideoError if it is not usable.

    Catches what opening alone misses: undecodable packets, truncation (fewer seconds decoded than the
    container claims) and videos shorter than `min_frames` frames. Returns the info with the decoded count.
    """
    with VideoReader(path, threads) as reader, _logged_errors() as logged:
        info, count, last, rotation, size = reader.info, 0, 0.0, 0, (0, 0)
        stated = reader._stream.frames
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
    w, h = (info.height, info.width) if _rotation_steps(rotation) % 2 else (info.width, info.height)
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
