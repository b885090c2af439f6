"""Helpers shared by the data tests (no tests here): tiny real videos written with PyAV, and a small plan."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np

from harness.schedule import Plan, build_plan
from harness.spec import spec_from_dict


def frames_pattern(n: int, h: int, w: int, seed: int = 0) -> np.ndarray:
    """n frames whose red channel encodes the frame index (to check which frames a clip took)."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, h, w, 3), np.uint8)
    for i in range(n):
        out[i] = rng.integers(0, 60, (h, w, 3), dtype=np.uint8)
        out[i, :, :, 0] = min(255, 16 * i)
        out[i, : h // 4, : w // 4, 1] = 250  # a marker in the top-left corner (to check rotation)
    return out


def write_video(path: Path, n: int = 12, h: int = 32, w: int = 48, fps: int = 15, codec: str = "libx264",
                fmt: str | None = None, rotation: int | None = None, seed: int = 0) -> Path:
    """Encode `n` frames of frames_pattern to `path` with `codec` in container `fmt` (from the suffix if None)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w", format=fmt) as c:
        s = c.add_stream(codec, rate=fps)
        s.width, s.height, s.pix_fmt = w, h, "yuv420p"
        s.bit_rate = 2_000_000  # high quality, so the frame index in the red channel survives compression
        if rotation is not None:
            s.set_display_rotation(rotation)
        for a in frames_pattern(n, h, w, seed):
            c.mux(s.encode(av.VideoFrame.from_ndarray(a, format="rgb24")))
        c.mux(s.encode())
    return path


def truncate(src: Path, dst: Path, share: float = 0.5) -> Path:
    data = src.read_bytes()
    dst.write_bytes(data[: int(len(data) * share)])
    return dst


def small_spec(**data: object) -> dict:
    """The brief's small multigrid spec (8 frames, 32 px, 2 GPUs) as a dict."""
    return {"data": {"train_videos": 50, "num_frames": 8, "crop_size": 32, "jitter": [36, 48], "num_classes": 4,
                     **data},
            "num_gpus": 2, "solver": {"batch_size": 2, "steps": [0, 2, 4], "max_epoch": 6, "warmup_epochs": 0}}


def small_plan(**data: object) -> Plan:
    return build_plan(spec_from_dict(small_spec(**data)))


def write_kinetics_list(root: Path, videos: int, classes: int = 4, frames: int = 12, split: str = "train") -> Path:
    """`videos` tiny mp4s and a `{split}.csv` path-label list under root."""
    lines = []
    for i in range(videos):
        rel = f"{split}/c{i % classes}/v{i:03d}.mp4"
        write_video(root / rel, n=frames, seed=i)
        lines.append(f"{rel} {i % classes}\n")
    (root / f"{split}.csv").write_text("".join(lines))
    return root
