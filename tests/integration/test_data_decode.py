"""PyAV decoding: windows, any fps/container/codec, rotation, and every kind of bad file."""

from __future__ import annotations

import shutil
import subprocess

import av
import numpy as np
import pytest
import torch

from harness.data.annotations import load_annotations
from harness.data.check import check_dataset, format_report
from harness.data.clip_dataset import Sampling, VideoClipDataset
from harness.data.decode import VideoReader, read_clip
from harness.data.errors import VideoError
from harness.data.rgb import to_rgb, to_rgb_box, to_rgb_boxes
from harness.data.scan import scan_video
from harness.data.transforms import CropBox
from tests.integration.video_files import frames_pattern, truncate, write_video


def _index(frames: torch.Tensor) -> list[int]:
    """Frame indices encoded in the red channel by frames_pattern (robust to compression)."""
    return [round(float(f[8:, 8:, 0].float().mean()) / 16) for f in frames]


@pytest.mark.parametrize("fps,codec,suffix", [(15, "libx264", "mp4"), (24, "mpeg4", "mkv"), (60, "libx264", "mov"),
                                              (25, "libvpx", "webm")])
def test_frames_at_picks_the_nearest_frames_in_any_container(tmp_path, fps, codec, suffix):
    path = write_video(tmp_path / f"v.{suffix}", n=14, fps=fps, codec=codec)
    with VideoReader(path) as r:
        assert r.info.fps == pytest.approx(fps) and r.info.frames in (14, 15)
        assert abs(r.info.duration - 14 / fps) < 2 / fps
        clip = r.frames_at([k / fps for k in (3, 5, 7, 13)])
        assert clip.shape == (4, 32, 48, 3) and clip.dtype == torch.uint8
        assert _index(clip) == [3, 5, 7, 13]
        assert _index(r.frames_at([0.0, 100.0])) == [0, 13]  # past the end: the last frame (clamped)


def test_decoding_matches_the_source_pixels(tmp_path):
    path = write_video(tmp_path / "v.mp4", n=4)
    clip = read_clip(path, [0.0])
    assert np.abs(clip[0].numpy().astype(int) - frames_pattern(4, 32, 48)[0]).mean() < 12


@pytest.mark.parametrize("rotation,k", [(90, 1), (-90, 3), (180, 2)])
def test_rotation_metadata_is_applied(tmp_path, rotation, k):
    path = write_video(tmp_path / "r.mp4", n=3, rotation=rotation)
    clip = read_clip(path, [0.0])[0].numpy()
    expected = np.rot90(frames_pattern(3, 32, 48)[0], k=k)
    assert clip.shape == expected.shape
    assert np.abs(clip.astype(int) - expected).mean() < 12
    info = scan_video(path)
    assert info.rotation % 360 == rotation % 360 and (info.height, info.width) == expected.shape[:2]


@pytest.mark.parametrize("rotation", [None, 90])
def test_a_crop_is_that_box_of_the_upright_frames(tmp_path, rotation):
    path = write_video(tmp_path / "v.mp4", n=12, rotation=rotation)
    times = [k / 15 for k in (1, 4, 4, 9)]  # a frame picked twice, as a slow clip does
    with VideoReader(path) as r:
        whole = r.frames_at(times)
        part = r.frames_at(times, crop=CropBox(3, 5, 20))
        assert r.shown_size == tuple(whole.shape[1:3]) == ((48, 32) if rotation else (32, 48))
    assert torch.equal(part, whole[:, 3:23, 5:25])


@pytest.mark.parametrize("pix_fmt", ["yuv420p", "yuv444p"])
def test_a_box_converts_to_the_pixels_of_the_whole_frame_there(tmp_path, pix_fmt):
    import av

    path = tmp_path / "v.mp4"
    with av.open(str(path), "w") as c:  # noise: every pixel and chroma sample differs from its neighbours
        s = c.add_stream("libx264", rate=15)
        s.width, s.height, s.pix_fmt, s.bit_rate = 70, 46, pix_fmt, 4_000_000
        rng = np.random.default_rng(0)
        for _ in range(3):
            c.mux(s.encode(av.VideoFrame.from_ndarray(rng.integers(0, 256, (46, 70, 3), np.uint8), format="rgb24")))
        c.mux(s.encode())
    with av.open(str(path)) as c:
        frames = list(c.decode(video=0))
    assert [f.format.name for f in frames] == [pix_fmt] * 3
    rng = np.random.default_rng(1)
    # the stream's own colours, then BT.709 limited and full range, BT.601 full range: each converts differently
    for colorspace, color_range in ((frames[0].colorspace, frames[0].color_range), (1, 1), (1, 2), (5, 2)):
        for frame in frames:
            frame.colorspace, frame.color_range = colorspace, color_range
        whole = np.stack([to_rgb(f) for f in frames])
        for _ in range(40):  # odd and even edges, boxes at the frame's edges and the whole frame
            size = int(rng.integers(1, 47))
            top, left = int(rng.integers(0, 47 - size)), int(rng.integers(0, 71 - size))
            expected = whole[:, top:top + size, left:left + size]
            # the frames' boxes converted together (one tall frame), and a frame's box alone
            assert np.array_equal(to_rgb_boxes(frames, top, left, size), expected), (colorspace, color_range, top, left)
            assert np.array_equal(to_rgb_box(frames[1], top, left, size), expected[1]), (colorspace, color_range)
        assert np.array_equal(to_rgb_boxes(frames, 0, 0, 46), whole[:, :, :46])
    frames[2].color_range = 1 if frames[1].color_range == 2 else 2  # frames that convert differently: one by one
    assert np.array_equal(to_rgb_boxes(frames, 3, 5, 20)[2], to_rgb(frames[2])[3:23, 5:25])


def test_bad_files_each_get_their_reason(tmp_path):
    good = write_video(tmp_path / "good.mp4", n=30)
    webm = write_video(tmp_path / "good.webm", n=30, codec="libvpx")
    (tmp_path / "empty.mp4").write_bytes(b"")
    (tmp_path / "text.mp4").write_text("this is not a video\n" * 20)
    cases = {
        tmp_path / "missing.mp4": "missing",
        tmp_path / "empty.mp4": "empty",
        tmp_path / "text.mp4": "not_a_video",
        truncate(good, tmp_path / "cut.mp4"): "undecodable",  # moov atom lost: an MP4 header, nothing to open
        truncate(webm, tmp_path / "cut.webm"): "truncated",  # WebM decodes silently up to the cut
        write_video(tmp_path / "short.mp4", n=2): "too_short",
    }
    for path, kind in cases.items():
        with pytest.raises(VideoError) as err:
            scan_video(path, min_frames=4)
        assert err.value.kind == kind, (path.name, str(err.value))
        assert str(path) in str(err.value)
    assert scan_video(good, min_frames=4).frames == 30
    assert scan_video(webm, min_frames=4).frames == 30


def _video_with_another_stream(path, other: str, n: int = 10):
    """`n` frames of frames_pattern (48×32 H.264 at 15 fps) muxed with another stream: "audio" (AAC, after the
    video), "audio first" (before it) or "poster" (a one-picture MJPEG video stream before it, as a cover or poster
    track)."""
    import av

    with av.open(str(path), "w") as c:
        poster = c.add_stream("mjpeg", rate=1) if other == "poster" else None
        a = c.add_stream("aac", rate=16000) if other == "audio first" else None
        v = c.add_stream("libx264", rate=15)
        v.width, v.height, v.pix_fmt = 48, 32, "yuv420p"
        a = c.add_stream("aac", rate=16000) if other == "audio" else a
        if poster is not None:
            poster.width, poster.height, poster.pix_fmt = 48, 32, "yuvj420p"
            c.mux(poster.encode(av.VideoFrame.from_ndarray(np.full((32, 48, 3), 200, np.uint8), format="rgb24")))
            c.mux(poster.encode())
        for i, f in enumerate(frames_pattern(n, 32, 48)):
            c.mux(v.encode(av.VideoFrame.from_ndarray(f, format="rgb24")))
            if a is not None:
                frame = av.AudioFrame.from_ndarray(np.zeros((1, 1024), np.float32), format="fltp", layout="mono")
                frame.rate, frame.pts = 16000, i * 1024
                c.mux(a.encode(frame))
        c.mux(v.encode())
        if a is not None:
            c.mux(a.encode())
    return path


@pytest.mark.parametrize("audio", ["audio", "audio first"])
def test_audio_is_ignored(tmp_path, audio):
    path = _video_with_another_stream(tmp_path / "av.mp4", audio)
    assert _index(read_clip(path, [4 / 15])) == [4]
    assert scan_video(path).frames == 10


def _ts_part(path, h: int, w: int, first_pts: int) -> bytes:
    """15 frames of h×w H.264 in MPEG-TS, timestamps from `first_pts` (a segment of a longer stream)."""
    import av

    with av.open(str(path), "w", format="mpegts") as c:
        s = c.add_stream("libx264", rate=15)
        s.width, s.height, s.pix_fmt = w, h, "yuv420p"
        for i, a in enumerate(frames_pattern(15, h, w)):
            frame = av.VideoFrame.from_ndarray(a, format="rgb24")
            frame.pts = first_pts + i
            c.mux(s.encode(frame))
        c.mux(s.encode())
    return path.read_bytes()


def test_a_stream_whose_frames_change_size_is_undecodable_not_a_crash(tmp_path):
    # Downloaders join a stream's segments by concatenating them; segments of another resolution make one stream
    # whose frame size changes midway. Its frames stack into no clip: a VideoError (skipped, counted, named by
    # `harness data check`), not numpy's ValueError from a loader worker.
    path = tmp_path / "joined.ts"
    path.write_bytes(_ts_part(tmp_path / "a.ts", 48, 64, 0) + _ts_part(tmp_path / "b.ts", 36, 48, 15))
    with VideoReader(path) as r:
        assert r.frames_at([0.0, 0.5]).shape == (2, 48, 64, 3)  # a window inside one part decodes
    with VideoReader(path) as r, pytest.raises(VideoError) as err:
        r.frames_at([0.0, 0.5, 1.5])
    assert err.value.kind == "undecodable" and "64x48 to 48x36" in str(err.value) and str(path) in str(err.value)
    with pytest.raises(VideoError) as err:
        scan_video(path)
    assert err.value.kind == "undecodable" and "frame size changes" in str(err.value)


def test_a_cut_avi_file_is_truncated_although_ffmpeg_measures_its_duration_from_what_is_left(tmp_path):
    # Without its index (at the end of the file) FFmpeg gives a cut AVI the duration of the frames left, so only
    # the header's frame count shows that 30 frames were promised and fewer arrived.
    whole = write_video(tmp_path / "whole.avi", n=30, codec="mpeg4")
    cut = truncate(whole, tmp_path / "cut.avi", share=0.5)
    with pytest.raises(VideoError) as err:
        scan_video(cut)
    assert err.value.kind == "truncated" and "of the 30 frames the AVI header states" in str(err.value)
    assert scan_video(whole).frames == 30


def test_a_clip_past_the_cut_of_a_cut_webm_is_truncated_not_its_last_frame_repeated(tmp_path):
    # A cut WebM decodes without an error up to the cut, and its header still claims the whole length, so a clip
    # planned from the header (SSv2's segments span it all) would repeat the last frame left: the reader says
    # truncated, as scan_video does, and training skips and counts the video. Clips before the cut still decode.
    cut = truncate(write_video(tmp_path / "whole.webm", n=30, codec="libvpx"), tmp_path / "cut.webm", share=0.4)
    with VideoReader(cut) as r:
        assert _index(r.frames_at([0.0, 2 / 15])) == [0, 2]
        with pytest.raises(VideoError) as err:
            r.frames_at([k / 15 for k in range(0, 30, 4)])
    assert err.value.kind == "truncated" and str(cut) in str(err.value)


@pytest.mark.parametrize("name, fmt", [("raw.h264", "h264"), ("camera.mp4", "h264"), ("raw.m4v", "m4v")])
def test_a_raw_elementary_stream_has_its_frames_counted(tmp_path, name, fmt):
    # A camera or encoder's raw stream (.h264, .m4v; also renamed .mp4) has no container to state its length or
    # times: the reader counted 0 frames, so training skipped it as too short while `harness data check` passed it.
    path = write_video(tmp_path / name, n=20, codec="mpeg4" if fmt == "m4v" else "libx264", fmt=fmt)
    with VideoReader(path) as r:
        assert r.info.frames == 20 and r.info.fps == pytest.approx(15) and r.info.duration == pytest.approx(20 / 15)
        assert _index(r.frames_at([0.0, 5 / r.info.fps, 14 / r.info.fps])) == [0, 5, 14]
        # Later clips of the same reader (evaluation's views, a training clip's retries): a raw stream cannot seek,
        # and the seek's error skipped the video as undecodable.
        assert _index(r.frames_at([12 / r.info.fps, 16 / r.info.fps])) == [12, 16]
        assert _index(r.frames_at([3 / r.info.fps])) == [3]
    assert scan_video(path, min_frames=8).frames == 20


def test_the_main_video_stream_is_read_where_a_still_picture_stream_comes_first(tmp_path):
    # A Matroska file may carry a one-picture video stream (a cover or poster) before the video itself: the reader
    # took the first video stream, a single frame, and training skipped the video as too short.
    path = _video_with_another_stream(tmp_path / "poster.mkv", "poster", n=16)
    with VideoReader(path) as r:
        assert (r.info.codec, r.info.frames) == ("h264", 16)
        assert _index(r.frames_at([0.0, 9 / 15])) == [0, 9]
    assert scan_video(path, min_frames=8).frames == 16


def _ffmpeg_video_with_longer_audio(path, video_codec: str, audio_codec: str) -> None:
    """0.6 s of video and 3 s of audio, muxed by the ffmpeg program (without -shortest, as a camera's or an
    editor's export keeps the audio running on)."""
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        pytest.skip("the ffmpeg program is not installed (apt-get install ffmpeg)")
    subprocess.run([ffmpeg, "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=48x32:rate=15:duration=0.6",
                    "-f", "lavfi", "-i", "sine=duration=3", "-c:v", video_codec, "-c:a", audio_codec, str(path)],
                   check=True)


@pytest.mark.parametrize("name,video_codec,audio_codec", [("v.mkv", "libx264", "aac"), ("v.webm", "libvpx", "libopus"),
                                                          ("v.mp4", "libx264", "aac")])
def test_an_audio_track_longer_than_the_video_is_not_taken_for_the_video_s_length(tmp_path, name, video_codec,
                                                                                    audio_codec):
    path = tmp_path / name
    _ffmpeg_video_with_longer_audio(path, video_codec, audio_codec)
    info = scan_video(path, min_frames=9)  # harness data check
    assert info.frames == 9 and info.duration == pytest.approx(0.6, abs=0.05)
    (tmp_path / "train.csv").write_text(f"{name} 0\n")
    sampling = Sampling(num_frames=4, sampling_rate=2, crop_size=32, jitter=(32, 32), eval_clips=2, eval_crops=1)
    views = VideoClipDataset(load_annotations("kinetics400", tmp_path, "train", 1), sampling, train=False)
    assert [views[i]["valid"] for i in range(len(views))] == [True, True]  # the loader's views over the video


def test_a_video_whose_decoder_conceals_damaged_data_is_reported_with_its_error_count(tmp_path):
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        pytest.skip("the ffmpeg program is not installed (apt-get install ffmpeg)")
    clean, damaged = tmp_path / "clean.mp4", tmp_path / "damaged.mp4"
    subprocess.run([ffmpeg, "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=15:duration=0.6",
                    "-c:v", "libx264", "-crf", "10", str(clean)], check=True)
    with av.open(str(clean)) as container:
        first = next(p for p in container.demux(video=0) if p.size)  # the keyframe: its slice data at the end
    data = bytearray(clean.read_bytes())
    at = first.pos + 3 * first.size // 4
    data[at:at + 16] = bytes(16)  # zeroed as a bad sector or a broken transfer leaves a file
    damaged.write_bytes(bytes(data))
    assert scan_video(clean).decode_errors == 0
    info = scan_video(damaged)  # FFmpeg paints over the damage: every frame decodes
    assert info.frames == 9 and info.decode_errors >= 1 and info.first_decode_error
    (tmp_path / "train.csv").write_text("clean.mp4 0\ndamaged.mp4 0\n")
    report = check_dataset("kinetics400", tmp_path, 1)
    assert [(d["path"], d["errors"]) for d in report["damaged"]] == [(str(damaged), info.decode_errors)]
    text = format_report(report, "kinetics400", tmp_path)
    assert "2 readable (1 with decoding errors)" in text
    assert f"{damaged}: {info.decode_errors} error(s) logged by the decoder, the first: " in text
