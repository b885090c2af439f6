"""Videos as other tools make them, through every video path: the reader, `harness data check`, the frame cache,
`harness data prepare`, the dataset and `harness data bench`.

Each file is written here with PyAV (FFmpeg's encoders and muxers). A usable one must decode to the frames that
were encoded (within codec loss), at their times and indices, on every path; an unusable one must be skipped and
counted with its reason, never a traceback or frames of the wrong time.
"""

from __future__ import annotations

import io
import json
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from harness.cli import main
from tests.integration.test_data_support import frames_pattern

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
