"""Videos as other tools make them, through every video path: the reader, `harness data check`, the frame cache,
`harness data prepare`, the dataset and `harness data bench`.

Each file is written here with PyAV (FFmpeg's encoders and muxers). A usable one must decode to the frames that
were encoded (within codec loss), at their times and indices, on every path; an unusable one must be skipped and
counted with its reason, never a traceback or frames of the wrong time.
"""

from __future__ import annotations

import io
import json
import os
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
import torch

from harness.cli import main
from harness.data.annotations import load_annotations
from harness.data.cache_build import _decode_into
from harness.data.clip_dataset import BadVideoLog, Sampling, VideoClipDataset
from harness.data.decode import VideoReader
from harness.data.errors import VideoError
from harness.data.prepare import PrepareSettings, VideoFailed, reencode
from harness.data.sampler import ClipRequest
from harness.data.scan import scan_video
from tests.integration.video_files import frames_pattern, truncate

N = 16  # frames of every test video


def _encoder(name: str) -> None:
    """Skip the test where the local FFmpeg build has no encoder `name`."""
    try:
        av.codec.Codec(name, "w")
    except Exception:  # PyAV raises UnknownCodecError, or ValueError in older versions
        pytest.skip(f"this FFmpeg build has no {name} encoder")


def _frame(array: np.ndarray, pix_fmt: str, full_range: bool) -> av.VideoFrame:
    """An RGB array as the frame an encoder takes; `full_range`: in `pix_fmt` with full-range (0-255) values, as
    phone cameras record them (the JPEG-range conversion, then flagged so)."""
    frame = av.VideoFrame.from_ndarray(array, format="rgb24")
    if not full_range:
        return frame
    full = frame.reformat(format=pix_fmt.replace("yuv", "yuvj"))
    out = av.VideoFrame(full.width, full.height, pix_fmt)
    for plane, data in zip(out.planes, full.planes, strict=True):
        plane.update(bytes(data))
    out.color_range = 2  # JPEG (full) range
    return out


@pytest.fixture(autouse=True)
def keep_the_scheduling_policy():
    """SVT-AV1 moves the thread that encodes to SCHED_FIFO where it may (as root): put the policy back, or later tests
    in this process that train two processes on the CPU inherit it and starve their communication threads."""
    policy, param = os.sched_getscheduler(0), os.sched_getparam(0)
    yield
    os.sched_setscheduler(0, policy, param)


def write(path: Path, codec: str = "libx264", pix_fmt: str = "yuv420p", size: tuple[int, int] = (32, 48),
          fps: float | Fraction = 15, fmt: str | None = None, options: dict[str, str] | None = None,
          rotation: int | None = None, pts: list[int] | None = None, time_base: Fraction | None = None,
          full_range: bool = False, container_options: dict[str, str] | None = None, pipe: bool = False,
          ) -> tuple[np.ndarray, list[float]]:
    """Encode N frames of frames_pattern to `path`; returns the frames a decoder should give back (upright RGB,
    after the pixel format's loss) and their times in seconds from the first.

    `pts` (in `time_base`) times each frame, else frame k is at k / fps. `pipe`: written to a stream that cannot
    seek, as a browser's or a live recorder's file, whose header then states no duration or index."""
    _encoder(codec)
    h, w = size
    source = frames_pattern(N, h, w)
    sink: io.RawIOBase | str = str(path)
    if pipe:
        class Pipe(io.RawIOBase):
            def writable(self) -> bool:
                return True

            def write(self, data) -> int:
                with open(path, "ab") as f:
                    return f.write(data)

        path.write_bytes(b"")
        sink = Pipe()
    with av.open(sink, "w", format=fmt, options=container_options or {}) as c:
        stream = c.add_stream(codec, rate=fps, options=options or {})
        stream.width, stream.height, stream.pix_fmt = w, h, pix_fmt
        if codec != "gif":
            stream.bit_rate = 4_000_000  # high quality: the pattern survives compression
        if time_base is not None:
            stream.codec_context.time_base = time_base
        if full_range:
            stream.codec_context.color_range = 2
        if rotation is not None:
            stream.set_display_rotation(rotation)
        for i, array in enumerate(source):
            frame = _frame(array, pix_fmt, full_range)
            if pts is not None:
                frame.pts, frame.time_base = pts[i], time_base
            c.mux(stream.encode(frame))
        c.mux(stream.encode())
    # What decoding should give: the source through the pixel format's conversion (subsampled chroma, gray,
    # a palette), and turned upright.
    lossy = "yuvj420p" if full_range else pix_fmt
    expected = np.stack([av.VideoFrame.from_ndarray(a, format="rgb24").reformat(format=lossy)
                         .to_ndarray(format="rgb24") for a in source])
    if rotation:
        expected = np.ascontiguousarray(np.rot90(expected, k=rotation // 90, axes=(1, 2)))
    times = [float((p - pts[0]) * time_base) for p in pts] if pts is not None else [k / float(fps) for k in range(N)]
    return expected, times


def matches(frames: np.ndarray | torch.Tensor, expected: np.ndarray) -> tuple[list[int], float]:
    """The index of the expected frame each frame is nearest to, and the largest of those mean absolute errors."""
    frames = np.asarray(frames)
    if frames.shape[1:3] != expected.shape[1:3]:  # a copy at another size: compare at its size
        resized = torch.nn.functional.interpolate(torch.from_numpy(expected).permute(0, 3, 1, 2).float(),
                                                  size=frames.shape[1:3], mode="bilinear", antialias=True)
        expected = resized.round().clamp(0, 255).byte().permute(0, 2, 3, 1).numpy()
    errors = np.abs(frames[:, None].astype(np.int16) - expected[None].astype(np.int16)).mean(axis=(2, 3, 4))
    return errors.argmin(axis=1).tolist(), float(errors.min(axis=1).max())


GOP = {"x264-params": "keyint=6:min-keyint=6:scenecut=0:bframes=2"}  # several GOPs with B-frames in 16 frames
MS = Fraction(1, 1000)

# name: (writer keywords, largest mean error of a decoded frame, whether frame k is at k / fps)
USABLE = {
    # containers and codecs
    "vp8.webm": ({"codec": "libvpx"}, 12, True),
    "vp9.webm": ({"codec": "libvpx-vp9"}, 12, True),
    "vp9_444.webm": ({"codec": "libvpx-vp9", "pix_fmt": "yuv444p"}, 12, True),
    "h264.mkv": ({"options": GOP}, 12, True),
    "mpeg4.avi": ({"codec": "mpeg4"}, 12, True),
    "xvid_b_frames.avi": ({"codec": "mpeg4", "options": {"bf": "2"}}, 12, True),  # as Xvid and DivX write them
    "h264_b_frames.avi": ({"options": GOP}, 12, True),
    "mjpeg.avi": ({"codec": "mjpeg", "pix_fmt": "yuvj420p"}, 12, True),
    # null index entries for the frames a capture dropped (Cinepak, as 1990s CD-ROM video): FFmpeg repeats the frame
    # before, the header counts every entry
    "dropped_frames.avi": ({"codec": "cinepak", "pix_fmt": "rgb24", "time_base": Fraction(1, 15),
                            "pts": [3 * k for k in range(N)]}, 12, False),
    "hevc.mp4": ({"codec": "libx265", "size": (64, 64), "options": {"x265-params": "log-level=error"}}, 12, True),
    "av1.mp4": ({"codec": "libsvtav1", "size": (64, 64)}, 12, True),
    "mpeg2.mpg": ({"codec": "mpeg2video", "fmt": "mpeg", "fps": 25, "options": {"g": "6", "bf": "2"}}, 12, True),
    "camcorder.mts": ({"fmt": "mpegts", "options": GOP}, 12, True),  # B-frames, timestamps from 1.4 s
    "wmv2.wmv": ({"codec": "wmv2", "fmt": "asf"}, 12, True),
    "flash.flv": ({"codec": "flv", "fmt": "flv"}, 12, True),
    "prores.mov": ({"codec": "prores_ks", "pix_fmt": "yuv422p10le"}, 12, True),
    "animated.gif": ({"codec": "gif", "pix_fmt": "rgb8", "time_base": Fraction(1, 100),  # frame delays of 5-30 ms
                      "pts": [0, 7, 14, 20, 30, 37, 44, 51, 60, 67, 74, 80, 90, 97, 104, 111]}, 25, False),
    # pixel formats
    "yuvj420p.mp4": ({"pix_fmt": "yuvj420p"}, 12, True),
    # yuv420p flagged full range, as phones record (read as limited range, the error is 13)
    "full_range.webm": ({"codec": "libvpx-vp9", "full_range": True}, 8, True),
    "yuv444p.mp4": ({"pix_fmt": "yuv444p"}, 12, True),
    "yuv422p.mp4": ({"pix_fmt": "yuv422p"}, 12, True),
    "yuv420p10le.mp4": ({"pix_fmt": "yuv420p10le"}, 12, True),
    "gray.mkv": ({"codec": "ffv1", "pix_fmt": "gray"}, 12, True),
    "rgb24.mkv": ({"codec": "libx264rgb", "pix_fmt": "rgb24"}, 12, True),
    "png.mov": ({"codec": "png", "pix_fmt": "rgb24"}, 12, True),
    # frame sizes and rotation
    "odd_size.mp4": ({"pix_fmt": "yuv444p", "size": (25, 33)}, 12, True),
    "odd_size.webm": ({"codec": "libvpx-vp9", "size": (25, 33)}, 12, True),
    "16x16.mp4": ({"size": (16, 16)}, 12, True),
    "portrait.mp4": ({"size": (48, 32)}, 12, True),
    "phone.mp4": ({"rotation": 90}, 12, True),
    "phone.mov": ({"rotation": -90}, 12, True),
    "upside_down.mkv": ({"rotation": 180}, 12, True),
    # timing
    "ntsc.mp4": ({"fps": Fraction(30000, 1001)}, 12, True),
    "time_base_1_7.mkv": ({"fps": 7, "time_base": Fraction(1, 7), "pts": list(range(N))}, 12, True),
    "variable_rate.mkv": ({"time_base": MS, "pts": [0, 40, 80, 200, 240, 250, 300, 420, 430, 500, 600, 640, 700,
                                                     760, 900, 1000]}, 12, False),
    "negative_start.mkv": ({"time_base": MS, "pts": [-200 + 66 * k for k in range(N)]}, 12, True),
    # a segment of a longer recording (ffmpeg -f segment, -copyts): timestamps from 10 s
    "late_start.mkv": ({"time_base": Fraction(1, 15), "pts": [150 + k for k in range(N)]}, 12, True),
    "late_start.mp4": ({"time_base": Fraction(1, 15), "pts": [150 + k for k in range(N)]}, 12, True),
    "fragmented.mp4": ({"options": GOP, "container_options": {"movflags": "frag_keyframe+empty_moov"}}, 12, True),
    # no duration or index in the header, as a browser's MediaRecorder writes it
    "no_duration.webm": ({"codec": "libvpx", "fmt": "webm", "pipe": True}, 12, True),
}

# Windows of frame indices asked of one reader in turn: later, earlier, the first frames, one frame, the last.
WINDOWS = ([11, 13], [2, 4], [0, 1], [7, 9], [15], [1, 3, 5])


@pytest.mark.parametrize("name", USABLE)
def test_a_video_decodes_to_its_frames_at_their_times_on_every_path(tmp_path, name):
    keywords, tolerance, constant_rate = USABLE[name]
    path = tmp_path / name
    expected, times = write(path, **keywords)
    height, width = expected.shape[1:3]

    info = scan_video(path, min_frames=N)  # harness data check
    # AVI's frames by place: a dropped frame's null entry shows the frame before it
    frames = round(times[-1] * float(keywords.get("fps", 15))) + 1 if name.endswith(".avi") else N
    assert (info.frames, info.height, info.width) == (frames, height, width)

    with VideoReader(path) as reader:  # training and evaluation clips: windows by time, one reader, any order
        for window in WINDOWS:
            picks, error = matches(reader.frames_at([times[k] for k in window]), expected)
            assert picks == window and error < tolerance, (window, picks, error)
        if constant_rate:  # by index, as SSv2's segments ask
            assert matches(reader.frames_at(reader.frame_times([2, 9])), expected)[0] == [2, 9]
        assert reader.info.duration == pytest.approx(times[-1] + (times[-1] - times[-2]), abs=0.15)

    out = io.BytesIO()  # harness data cache
    entry, stamps = _decode_into(path, out, None)
    cached = np.frombuffer(out.getvalue(), np.uint8).reshape(-1, entry["height"], entry["width"], 3)
    picks, error = matches(cached, expected)
    assert picks == list(range(N)) and error < tolerance
    assert np.allclose(stamps, times, atol=2e-3), (stamps, times)

    copy = tmp_path / "copy" / name  # harness data prepare: the same frames at the same times
    assert reencode(path, copy, PrepareSettings(None)) == N
    with VideoReader(copy) as reader:
        picks, error = matches(reader.frames_at([times[k] for k in range(N)]), expected)
    assert picks == list(range(N)) and error < tolerance + 8, (picks, error)


def test_an_avi_s_dropped_frames_count_as_the_frames_they_repeat(tmp_path):
    path = tmp_path / "dropped_frames.avi"
    write(path, **USABLE[path.name][0])
    assert scan_video(path, min_frames=46).frames == 46  # 16 coded frames, 30 shown again in their places
    with pytest.raises(VideoError, match="too_short"):
        scan_video(path, min_frames=47)


def test_a_prepared_avi_copy_shows_its_frames_in_order_to_any_reader(tmp_path):
    # AVI stores no presentation times, and FFmpeg's guess at them puts H.264's B-frames out of order: the copy has
    # none, so a reader that orders frames by those times (torchcodec, FFmpeg's tools) shows them in order too.
    write(tmp_path / "source.avi", codec="mjpeg", pix_fmt="yuvj420p")
    reencode(tmp_path / "source.avi", tmp_path / "copy.avi", PrepareSettings(None, tune=None))
    with av.open(str(tmp_path / "copy.avi")) as c:
        stamps = [frame.pts for frame in c.decode(video=0)]
    assert len(stamps) == N and stamps == sorted(stamps)


def _audio_only(path: Path, video_stream: bool = False) -> None:
    """An AAC stream; with `video_stream`, beside a video stream that never receives a frame."""
    with av.open(str(path), "w") as c:
        if video_stream:
            video = c.add_stream("libx264", rate=15)
            video.width, video.height, video.pix_fmt = 48, 32, "yuv420p"
        audio = c.add_stream("aac", rate=16000)
        for i in range(10):
            frame = av.AudioFrame.from_ndarray(np.zeros((1, 1024), np.float32), format="fltp", layout="mono")
            frame.rate, frame.pts = 16000, i * 1024
            c.mux(audio.encode(frame))
        c.mux(audio.encode())


def _garbage_packets(path: Path, tmp_path: Path) -> None:
    """A Matroska file whose H.264 stream has a real header but packets of random bytes."""
    write(tmp_path / "model.mkv")
    with av.open(str(tmp_path / "model.mkv")) as src, av.open(str(path), "w") as c:
        stream = c.add_stream_from_template(src.streams.video[0])
        for i, packet in enumerate(p for p in src.demux(video=0) if p.size):
            junk = av.Packet(np.random.default_rng(i).integers(0, 255, 300, dtype=np.uint8).tobytes())
            junk.pts, junk.dts, junk.time_base, junk.stream = packet.pts, packet.dts, packet.time_base, stream
            c.mux(junk)


def _truncated(path: Path, tmp_path: Path, share: float) -> None:
    write(tmp_path / f"whole{path.suffix}")
    truncate(tmp_path / f"whole{path.suffix}", path, share)


# name: (how to make it, the reason every path gives)
UNUSABLE = {
    "audio_only.mp4": (lambda p, _: _audio_only(p), "no_video_stream"),
    "video_stream_without_frames.mkv": (lambda p, _: _audio_only(p, video_stream=True), "undecodable"),
    "garbage_packets.mkv": (_garbage_packets, "undecodable"),
    "zero_bytes.mp4": (lambda p, _: p.write_bytes(b""), "empty"),
    "text.mp4": (lambda p, _: p.write_text("not a video\n" * 20), "not_a_video"),
    "error_page.mp4": (lambda p, _: p.write_text("<!DOCTYPE html><html><body>403 Forbidden</body></html>\n"),
                       "not_a_video"),
    "truncated.mp4": (lambda p, t: _truncated(p, t, 0.6), "undecodable"),
    "truncated.mkv": (lambda p, t: _truncated(p, t, 0.5), "truncated"),
    "truncated.avi": (lambda p, t: _truncated(p, t, 0.5), "truncated"),
}


@pytest.mark.parametrize("name", UNUSABLE)
def test_an_unusable_video_is_skipped_with_its_reason_on_every_path(tmp_path, name):
    make, reason = UNUSABLE[name]
    path = tmp_path / name
    make(path, tmp_path)
    with pytest.raises(VideoError) as err:
        scan_video(path)
    assert err.value.kind == reason and str(path) in str(err.value)
    with pytest.raises(VideoError) as err, VideoReader(path) as reader:  # a clip's reader: opening, or decoding
        reader.frames_at([0.0, 0.3, 0.6, 0.9])
    assert err.value.kind in (reason, "undecodable", "truncated"), str(err.value)
    with pytest.raises(VideoError):
        _decode_into(path, io.BytesIO(), None)
    with pytest.raises(VideoFailed):
        reencode(path, tmp_path / "copy" / name, PrepareSettings(None))


def test_a_file_with_two_video_streams_is_read_from_the_same_stream_on_every_path(tmp_path):
    path = tmp_path / "two_streams.mkv"
    with av.open(str(path), "w") as c:
        small = c.add_stream("libx264", rate=15)
        small.width, small.height, small.pix_fmt = 32, 24, "yuv420p"
        large = c.add_stream("libx264", rate=15)
        large.width, large.height, large.pix_fmt = 48, 32, "yuv420p"
        for a, b in zip(frames_pattern(N, 24, 32, seed=1), frames_pattern(N, 32, 48), strict=True):
            c.mux(small.encode(av.VideoFrame.from_ndarray(a, format="rgb24")))
            c.mux(large.encode(av.VideoFrame.from_ndarray(b, format="rgb24")))
        c.mux(small.encode())
        c.mux(large.encode())
    with VideoReader(path) as reader:
        size = tuple(reader.frames_at([0.0]).shape[1:3])
    info = scan_video(path)
    entry, _ = _decode_into(path, io.BytesIO(), None)
    reencode(path, tmp_path / "copy.mkv", PrepareSettings(None))
    copy = scan_video(tmp_path / "copy.mkv")
    assert size == (info.height, info.width) == (entry["height"], entry["width"]) == (copy.height, copy.width)


def test_a_dataset_of_such_videos_trains_checks_caches_prepares_and_benches(tmp_path, capsys):
    root = tmp_path / "kinetics"
    root.mkdir()
    usable = ["xvid_b_frames.avi", "camcorder.mts", "phone.mp4", "variable_rate.mkv", "late_start.mkv", "16x16.mp4",
              "odd_size.webm", "gray.mkv"]
    for name in usable:
        write(root / name, **USABLE[name][0])
    unusable = ["audio_only.mp4", "video_stream_without_frames.mkv", "zero_bytes.mp4", "text.mp4", "truncated.mkv"]
    for name in unusable:
        UNUSABLE[name][0](root / name, tmp_path)
    (root / "train.csv").write_text("".join(f"{n} {i % 2}\n" for i, n in enumerate(usable + unusable)))
    overrides = ["data.name=kinetics400", f"data.root={root}", "data.num_classes=2", "data.num_frames=8",
                 "data.sampling_rate=2", "data.crop_size=32", "data.jitter=[36,48]", "data.train_videos=13"]

    assert main(["data", "check", "--json", *overrides]) == 1
    report = json.loads(capsys.readouterr().out)
    assert sorted(Path(u["path"]).name for u in report["unreadable"]) == sorted(unusable)

    annotations = load_annotations("kinetics400", root, "train", 2)
    sampling = Sampling(num_frames=8, sampling_rate=2, crop_size=32, jitter=(36, 48), eval_clips=2, eval_crops=1)
    train = VideoClipDataset(annotations, sampling, max_retries=20)
    log = BadVideoLog()
    for i in range(len(annotations)):
        item = train[ClipRequest(i, 8, 32, (1, 2), (36, 48), (0, i))]
        assert item["clip"].shape == (3, 8, 32, 32) and annotations.records[item["index"]].path.name in usable
        log.update(item["failures"])
    assert sorted(Path(p).name for p in log.files) == sorted(unusable)
    evaluation = VideoClipDataset(annotations, sampling, train=False)
    invalid = {annotations.records[item["video"]].path.name for item in map(evaluation.__getitem__,
                                                                             range(len(evaluation)))
               if not item["valid"]}
    assert sorted(invalid) == sorted(unusable)

    assert main(["data", "cache", "--out", str(tmp_path / "cache"), "--workers", "1", "--quiet", *overrides]) == 0
    index = json.loads((tmp_path / "cache" / "index.json").read_text())
    assert sorted(Path(p).name for p in index["bad"]) == sorted(unusable)
    capsys.readouterr()

    assert main(["data", "prepare", "--out", str(tmp_path / "prepared"), "--workers", "1", "--quiet", *overrides]) == 0
    manifest = json.loads((tmp_path / "prepared" / "prepare.json").read_text())
    assert sorted(Path(b["path"]).name for b in manifest["bad"]) == sorted(unusable)
    capsys.readouterr()

    bench = tmp_path / "bench.json"
    assert main(["data", "bench", "--min-seconds", "0", "--clips", "16", "--workers", "0", "--out", str(bench),
                 *overrides]) == 0
    record = json.loads(bench.read_text())
    skipped = {Path(s["path"]).name for row in record["shapes"] for s in row.get("skipped_videos", [])}
    assert skipped and skipped <= set(unusable)
    assert "unusable video" in capsys.readouterr().out


def test_data_bench_skips_and_lists_the_unusable_videos_it_meets(tmp_path, capsys):
    # Its decode column opened each drawn video itself: one that could not be used ended the bench in a traceback.
    root = tmp_path / "kinetics"
    root.mkdir()
    write(root / "h264.mp4")
    _audio_only(root / "audio_only.mp4")
    (root / "zero_bytes.mp4").write_bytes(b"")
    (root / "text.mp4").write_text("not a video\n" * 20)
    (root / "train.csv").write_text("h264.mp4 0\naudio_only.mp4 1\nzero_bytes.mp4 0\ntext.mp4 1\n")
    bench = tmp_path / "bench.json"
    assert main(["data", "bench", "--min-seconds", "0", "--clips", "8", "--workers", "0", "--out", str(bench),
                 "data.name=kinetics400", f"data.root={root}", "data.num_classes=2", "data.num_frames=8",
                 "data.crop_size=32", "data.jitter=[36,48]", "data.train_videos=4"]) == 0
    record = json.loads(bench.read_text())
    assert all(row["decode_clips_per_s"] > 0 for row in record["shapes"])
    skipped = {Path(s["path"]).name: s["reason"] for row in record["shapes"] for s in row.get("skipped_videos", [])}
    assert skipped == {"audio_only.mp4": skipped["audio_only.mp4"], "zero_bytes.mp4": skipped["zero_bytes.mp4"],
                       "text.mp4": skipped["text.mp4"]}
    assert skipped["zero_bytes.mp4"].startswith("empty:") and skipped["text.mp4"].startswith("not_a_video:")
    assert "3 unusable video(s) skipped" in capsys.readouterr().out
