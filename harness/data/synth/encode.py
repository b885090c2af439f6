"""Encoding frames into video files: H.264 in mp4 (Kinetics, Charades) and VP9 in WebM (SSv2), each written to a
temporary name and renamed, so an interrupted run leaves no half-written file."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np

from harness.io import write_atomic


def encode_mp4(frames: np.ndarray, path: Path, fps: int, crf: int = 23, preset: str = "veryfast") -> None:
    """Encode uint8 F×H×W×3 frames as H.264 (x264's default keyframe interval) to `path`, atomically."""
    # One encoder thread: x264's threaded rate control is not bit-reproducible (use --workers instead).
    _encode(frames, path, fps, "mp4", "libx264", {"crf": str(crf), "preset": preset, "threads": "1"})


def encode_webm(frames: np.ndarray, path: Path, fps: int, crf: int = 23) -> None:
    """Encode uint8 F×H×W×3 frames as VP9 in WebM (SSv2's format) to `path`, atomically; constant quality
    (`b` 0) at libvpx's fastest setting, one thread as for H.264."""
    _encode(frames, path, fps, "webm", "libvpx-vp9",
            {"crf": str(crf), "b": "0", "deadline": "realtime", "cpu-used": "8", "threads": "1"})


def _encode(frames: np.ndarray, path: Path, fps: int, container_format: str, codec: str,
            options: dict[str, str]) -> None:
    def write(tmp: Path) -> None:
        with av.open(str(tmp), "w", format=container_format) as container:
            stream = container.add_stream(codec, rate=fps, options=options)
            stream.height, stream.width = frames.shape[1:3]
            stream.pix_fmt = "yuv420p"
            for array in frames:
                container.mux(stream.encode(av.VideoFrame.from_ndarray(array, format="rgb24")))
            container.mux(stream.encode())

    # Synced before the rename: a video that exists is whole (a re-run skips it), even after a crash of the machine.
    write_atomic(path, write)

