"""Synthetic video in the Kinetics layout: real H.264 mp4 files (PyAV) whose classes need appearance *and* motion.

A class is an (appearance, motion) pair. Appearance = shape × texture × hue of the one large textured object;
motion = how it moves (up, down, sideways, rotate, grow, shrink, rise, fall, orbit, bounce, blink, still). Both
factors vary across classes, so one frame gives the appearance but not the motion (the object wraps around
the frame edges, so its position says nothing), while a small 3D CNN sees both. Distractor objects (smaller,
untextured, drifting in random directions), a random smooth background and per-frame noise keep it from being
trivial. Every class maps to itself under a horizontal flip (sideways/rotation/orbit directions are random per
video), so the Kinetics recipes' flip augmentation stays label-preserving; speed is random per video, not a
class, because multigrid's random temporal stride changes apparent speed.

With ``label_noise`` = p, a fraction p of the videos of both splits show another class than their label (drawn
per video, the shown class uniform over the others), as Kinetics holds mislabelled and ambiguous clips. It puts the
plateau at a known height: a model that reads every video right scores 1 − p top-1 on the validation set, so
accuracy near convergence is not squeezed against 100%, and training top-1 above 1 − p measures memorisation.
``noisy_labels.csv`` lists those videos (``path label shown_label``).

With ``hidden`` = q, a fraction q of the videos of both splits never show their textured object (only the
background and the distractors), as Kinetics holds clips whose action is off-screen or occluded. Unlike label
noise these videos contradict no other video, so they do not slow the learning of the rest; they set the plateau
at 1 − q + q/K top-1 for K classes (the hidden videos can only be guessed), and training top-1 above it measures
memorisation. ``hidden_videos.csv`` lists them (``path label``). The other videos have the same frames as those of the
same seed without hiding.

Output (the rendered frames are deterministic from the seed, x264's bytes not always across processes; each
file written to a temporary name and renamed, so an interrupted run leaves no half-written file, and a re-run
skips videos already present):
``{out}/train.csv`` and ``val.csv`` (``train/<class>/train_000123.mp4 <label>`` lines), ``classes.txt``,
``synth.json`` (the settings), and the videos. Use it with ``data.name=synthetic data.root={out}``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import av
import numpy as np
from tqdm import tqdm

from harness.spec import SpecError, did_you_mean

SHAPES = ("square", "disc", "triangle", "cross", "diamond", "ring")
TEXTURES = ("striped", "checkered", "dotted", "banded")
HUES = ("red", "green", "blue")
HUE_RGB = {"red": (220, 60, 50), "green": (60, 200, 70), "blue": (60, 90, 230)}
MOTIONS = ("up", "down", "sideways", "rotate", "grow", "shrink", "rise", "fall", "orbit", "bounce", "blink", "still")


@dataclass(frozen=True)
class SynthConfig:
    """Settings of a synthetic dataset (`videos` training videos, `val_videos` validation videos)."""

    classes: int
    videos: int
    val_videos: int
    frames: int
    size: tuple[int, int]  # (height, width); even, as H.264 in 4:2:0 needs
    fps: int
    seed: int = 0
    distractors: int = 2
    noise: float = 6.0  # std of the per-frame Gaussian pixel noise
    crf: int = 23
    x264_preset: str = "veryfast"
    label_noise: float = 0.0  # fraction of videos showing another class than their label (module docstring)
    hidden: float = 0.0  # fraction of videos whose textured object is never drawn (module docstring)


PRESETS = {
    # CPU, seconds: the smoke scale.
    "smoke": SynthConfig(classes=6, videos=48, val_videos=12, frames=16, size=(64, 86), fps=30),
    # One GPU, minutes: ~10k clips near Kinetics' 128×171 proxy resolution (171 rounded to even for 4:2:0).
    "proxy": SynthConfig(classes=24, videos=10_000, val_videos=2_000, frames=64, size=(128, 170), fps=30),
    # Loader benchmarks: Kinetics' size and length, x264's default keyframe interval (250 frames).
    "kinetics-like": SynthConfig(classes=8, videos=64, val_videos=16, frames=300, size=(256, 340), fps=30,
                                 distractors=3),
}


def preset_config(preset: str = "smoke", **overrides: object) -> SynthConfig:
    """A preset's settings with `overrides` (None values ignored); raises SpecError on bad values."""
    if preset not in PRESETS:
        raise SpecError(f"Unknown synthetic preset '{preset}'.{did_you_mean(preset, PRESETS)} "
                        f"Use one of {', '.join(PRESETS)}.")
    cfg = replace(PRESETS[preset], **{k: v for k, v in overrides.items() if v is not None})
    if cfg.size and isinstance(cfg.size, list):
        cfg = replace(cfg, size=tuple(cfg.size))
    h, w = cfg.size
    if h < 16 or w < 16 or h % 2 or w % 2:
        raise SpecError(f"--size {h}x{w}: height and width must be even (H.264 4:2:0) and at least 16, e.g. 64x86.")
    for name in ("classes", "videos", "frames", "fps"):
        if getattr(cfg, name) < 1:
            raise SpecError(f"--{name} must be >= 1, got {getattr(cfg, name)}.")
    if not 0.0 <= cfg.label_noise < 1.0 or (cfg.label_noise and cfg.classes < 2):
        raise SpecError(f"--label-noise must be in [0, 1) (and needs >= 2 classes), got {cfg.label_noise}.")
    if not 0.0 <= cfg.hidden < 1.0:
        raise SpecError(f"--hidden must be in [0, 1), got {cfg.hidden}.")
    if cfg.val_videos < 0:
        raise SpecError(f"--val-videos must be >= 0, got {cfg.val_videos}.")
    if cfg.frames < 2:
        raise SpecError("--frames must be >= 2: a class is defined by motion.")
    if cfg.classes > max_classes():
        raise SpecError(f"--classes {cfg.classes} is more than the {max_classes()} distinct appearance × motion "
                        f"classes the generator can draw.")
    return cfg


# ---------------------------------------------------------------- classes
def max_classes() -> int:
    return len(SHAPES) * len(TEXTURES) * len(HUES) * len(MOTIONS)


def class_table(classes: int) -> list[tuple[int, int]]:
    """(appearance, motion) of each class: a grid of about √K appearances × √K motions, so both matter."""
    motions = min(len(MOTIONS), max(2, math.ceil(math.sqrt(classes))))
    appearances = math.ceil(classes / motions)
    return [(a, m) for a in range(appearances) for m in range(motions)][:classes]


def appearance(a: int) -> tuple[str, str, str]:
    """(shape, texture, hue) of appearance `a`; consecutive appearances differ in shape first."""
    return SHAPES[a % len(SHAPES)], TEXTURES[(a // len(SHAPES)) % len(TEXTURES)], \
        HUES[(a // (len(SHAPES) * len(TEXTURES))) % len(HUES)]


def class_names(classes: int) -> list[str]:
    return ["_".join((*appearance(a), MOTIONS[m])) for a, m in class_table(classes)]


# ---------------------------------------------------------------- rendering
def _shape_mask(shape: str, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Inside-mask of a unit shape at object coordinates (u, v) (radius 1, v pointing down)."""
    au, av_ = np.abs(u), np.abs(v)
    if shape == "square":
        return np.maximum(au, av_) <= 0.8
    if shape == "disc":
        return u * u + v * v <= 1.0
    if shape == "triangle":  # apex up: symmetric under a horizontal flip
        return (v <= 0.8) & (v >= -1.0) & (au <= (v + 1.0) * 0.5)
    if shape == "cross":
        return ((au <= 0.3) & (av_ <= 1.0)) | ((av_ <= 0.3) & (au <= 1.0))
    if shape == "diamond":
        return au + av_ <= 1.0
    r2 = u * u + v * v  # ring
    return (r2 <= 1.0) & (r2 >= 0.3)


def _texture(texture: str, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Two-tone texture (bool) in object coordinates, so it turns and scales with the object."""
    if texture == "striped":
        return np.sin(v * 3.0 * math.pi) > 0
    if texture == "checkered":
        return (np.sin(u * 2.5 * math.pi) > 0) ^ (np.sin(v * 2.5 * math.pi) > 0)
    if texture == "dotted":
        return np.sin(u * 3.0 * math.pi) * np.sin(v * 3.0 * math.pi) > 0.35
    return np.cos(np.sqrt(u * u + v * v) * 4.0 * math.pi) > 0  # banded: concentric rings


@dataclass
class _Object:
    shape: str
    texture: str | None
    color: np.ndarray
    radius: float
    trajectory: Callable[[float], tuple[float, float, float, float, bool]]  # t → (x, y, angle, scale, visible)


def _trajectory(motion: str, h: int, w: int, rng: np.random.Generator) -> Callable:
    x0, y0 = rng.uniform(0, w), rng.uniform(0, h)
    side = min(h, w)
    v = rng.uniform(0.45, 0.75) * side  # pixels per second: random speed, not a class (see module docstring)
    sign = 1.0 if rng.random() < 0.5 else -1.0
    phase = rng.uniform(0, 1)
    angle0 = rng.uniform(-0.3, 0.3) if motion != "rotate" else rng.uniform(0, 2 * math.pi)
    omega = sign * rng.uniform(2.0, 3.5)
    d = v / math.sqrt(2)

    def at(t: float) -> tuple[float, float, float, float, bool]:
        x, y, ang, sc, vis = x0, y0, angle0, 1.0, True
        if motion == "up":
            y -= v * t
        elif motion == "down":
            y += v * t
        elif motion == "sideways":
            x += sign * v * t
        elif motion == "rotate":
            ang += omega * t
        elif motion == "grow":
            sc = 0.55 + 0.8 * ((phase + 0.9 * t) % 1.0)
        elif motion == "shrink":
            sc = 1.35 - 0.8 * ((phase + 0.9 * t) % 1.0)
        elif motion == "rise":
            x, y = x + sign * d * t, y - d * t
        elif motion == "fall":
            x, y = x + sign * d * t, y + d * t
        elif motion == "orbit":
            x, y = x + 0.22 * side * math.cos(omega * t), y + 0.22 * side * math.sin(omega * t)
        elif motion == "bounce":
            y += 0.2 * side * math.sin(2 * math.pi * (phase + 1.2 * t))
        elif motion == "blink":
            vis = (phase + 2.5 * t) % 1.0 < 0.5
        elif motion == "still":
            x, y = x + 0.5 * math.sin(7 * t), y + 0.5 * math.cos(5 * t)
        return x, y, ang, sc, vis

    return at


def _drift(h: int, w: int, rng: np.random.Generator) -> Callable:
    """A distractor's path: straight at a random angle and speed (any direction, so it never names a class)."""
    x0, y0 = rng.uniform(0, w), rng.uniform(0, h)
    ang = rng.uniform(0, 2 * math.pi)
    v = rng.uniform(0.1, 0.7) * min(h, w)
    return lambda t: (x0 + v * t * math.cos(ang), y0 + v * t * math.sin(ang), 0.0, 1.0, True)


def _background(h: int, w: int, rng: np.random.Generator) -> np.ndarray:
    """A smooth random colour field (low-resolution noise, bilinearly upsampled), float32 H×W×3."""
    coarse = rng.uniform(40, 200, size=(4, 5, 3)).astype(np.float32)
    ys, xs = np.linspace(0, 3, h), np.linspace(0, 4, w)
    y0, x0 = np.minimum(ys.astype(int), 2), np.minimum(xs.astype(int), 3)
    fy, fx = (ys - y0)[:, None, None], (xs - x0)[None, :, None]
    c = coarse
    top = c[y0][:, x0] * (1 - fx) + c[y0][:, x0 + 1] * fx
    bottom = c[y0 + 1][:, x0] * (1 - fx) + c[y0 + 1][:, x0 + 1] * fx
    return (top * (1 - fy) + bottom * fy).astype(np.float32)


def _draw(frame: np.ndarray, obj: _Object, t: float) -> None:
    """Paint `obj` at time `t` into `frame`, wrapping around the edges; only its bounding patch is computed."""
    h, w = frame.shape[:2]
    x, y, ang, scale, visible = obj.trajectory(t)
    if not visible:
        return
    r = obj.radius * scale
    reach = min(int(math.ceil(1.3 * r)), (min(h, w) - 1) // 2)  # every shape lies within 1.3 radii
    offsets = np.arange(-reach, reach + 1)
    x0, y0 = math.floor(x), math.floor(y)
    rows, cols = (offsets + y0) % h, (offsets + x0) % w  # toroidal: objects wrap around the frame edges
    dy = (offsets + y0 - y).astype(np.float32)[:, None]
    dx = (offsets + x0 - x).astype(np.float32)[None, :]
    c, s = math.cos(ang), math.sin(ang)
    u, v = (c * dx + s * dy) / r, (-s * dx + c * dy) / r
    mask = _shape_mask(obj.shape, u, v)
    patch = frame[np.ix_(rows, cols)]
    if obj.texture is None:
        patch[mask] = obj.color
    else:
        tex = _texture(obj.texture, u, v)
        patch[mask & tex] = obj.color
        patch[mask & ~tex] = obj.color * 0.35
    frame[np.ix_(rows, cols)] = patch


def render_video(cls: tuple[int, int], cfg: SynthConfig, rng: np.random.Generator,
                 show_target: bool = True) -> np.ndarray:
    """The frames (uint8 F×H×W×3) of one video of class (appearance, motion); without its textured object if
    not `show_target` (the random draws stay the same, so everything else in the video is unchanged)."""
    h, w = cfg.size
    shape, texture, hue = appearance(cls[0])
    side = min(h, w)
    color = np.clip(np.array(HUE_RGB[hue], np.float32) * rng.uniform(0.85, 1.15), 0, 255)
    target = _Object(shape, texture, color, rng.uniform(0.17, 0.22) * side, _trajectory(MOTIONS[cls[1]], h, w, rng))
    distractors = [_Object(SHAPES[rng.integers(len(SHAPES))], None, rng.uniform(30, 230, 3).astype(np.float32),
                           rng.uniform(0.07, 0.11) * side, _drift(h, w, rng)) for _ in range(cfg.distractors)]
    background = _background(h, w, rng)
    out = np.empty((cfg.frames, h, w, 3), np.uint8)
    for i in range(cfg.frames):
        t = i / cfg.fps
        frame = background.copy()
        for obj in [*distractors, target] if show_target else distractors:  # the target on top, never covered
            _draw(frame, obj, t)
        frame += rng.standard_normal(frame.shape, dtype=np.float32) * np.float32(cfg.noise)
        out[i] = np.clip(frame, 0, 255).astype(np.uint8)
    return out


# ---------------------------------------------------------------- files
def encode_mp4(frames: np.ndarray, path: Path, fps: int, crf: int = 23, preset: str = "veryfast") -> None:
    """Encode uint8 F×H×W×3 frames as H.264 (x264's default keyframe interval) to `path`, atomically."""
    tmp = path.with_name(f".{path.name}.partial")
    try:
        with av.open(str(tmp), "w", format="mp4") as container:
            # One encoder thread: x264's threaded rate control is not bit-reproducible (use --workers instead).
            stream = container.add_stream("libx264", rate=fps,
                                          options={"crf": str(crf), "preset": preset, "threads": "1"})
            stream.height, stream.width = frames.shape[1:3]
            stream.pix_fmt = "yuv420p"
            for array in frames:
                container.mux(stream.encode(av.VideoFrame.from_ndarray(array, format="rgb24")))
            container.mux(stream.encode())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_text(path: Path, text: str) -> None:
    """Write `text` to `path` atomically (temporary file in the same folder, then rename)."""
    tmp = path.with_name(f".{path.name}.partial")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


SPLIT_IDS = {"train": 0, "val": 1}


def shown_label(split: str, i: int, label: int, cfg: SynthConfig) -> int:
    """The class video `i` of `split` shows: its label, or with probability `cfg.label_noise` another class.

    Drawn from a stream of its own, so the noise neither changes the videos that keep their class nor depends on
    the order videos are made in."""
    if not cfg.label_noise:
        return label
    rng = np.random.default_rng([cfg.seed, SPLIT_IDS[split], i, 1])
    if rng.random() >= cfg.label_noise:
        return label
    return (label + 1 + int(rng.integers(cfg.classes - 1))) % cfg.classes


def is_hidden(split: str, i: int, cfg: SynthConfig) -> bool:
    """Whether video `i` of `split` hides its textured object (probability `cfg.hidden`, a stream of its own)."""
    return bool(cfg.hidden) and np.random.default_rng([cfg.seed, SPLIT_IDS[split], i, 2]).random() < cfg.hidden


def _job(args: tuple[str, str, int, int, SynthConfig]) -> str:
    out, split, i, label, cfg = args
    path = Path(out) / video_path(split, i, class_names(cfg.classes)[label])
    if not path.exists():
        rng = np.random.default_rng([cfg.seed, SPLIT_IDS[split], i])  # per video: independent of order and skips
        path.parent.mkdir(parents=True, exist_ok=True)
        shown = class_table(cfg.classes)[shown_label(split, i, label, cfg)]
        frames = render_video(shown, cfg, rng, show_target=not is_hidden(split, i, cfg))
        encode_mp4(frames, path, cfg.fps, cfg.crf, cfg.x264_preset)
    return str(path)


def video_path(split: str, i: int, class_name: str) -> str:
    return f"{split}/{class_name}/{split}_{i:06d}.mp4"


def _settings(cfg: SynthConfig) -> dict:
    settings = {**asdict(cfg), "size": list(cfg.size), "format": 1}
    for name in ("label_noise", "hidden"):  # datasets made before these existed keep their manifest
        if not settings[name]:
            del settings[name]
    return settings


def make_synthetic_dataset(out_dir: str | Path, preset: str = "smoke", *, classes: int | None = None,
                           videos: int | None = None, val_videos: int | None = None, frames: int | None = None,
                           size: tuple[int, int] | None = None, fps: int | None = None, seed: int | None = None,
                           label_noise: float | None = None, hidden: float | None = None, workers: int = 1,
                           progress: bool = True) -> SynthConfig:
    """Write a synthetic dataset to `out_dir` (see the module docstring); returns the settings used.

    Re-running with the same settings skips finished videos; different settings in the same folder are an
    error (the annotation files would not describe the videos).
    """
    cfg = preset_config(preset, classes=classes, videos=videos, val_videos=val_videos, frames=frames, size=size,
                        fps=fps, seed=seed, label_noise=label_noise, hidden=hidden)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    manifest = out / "synth.json"
    if manifest.exists():
        old = json.loads(manifest.read_text(encoding="utf-8"))
        if old != _settings(cfg):
            diff = sorted(k for k in _settings(cfg) if old.get(k) != _settings(cfg)[k])
            raise SpecError(f"{out} already holds a synthetic dataset made with other settings ({', '.join(diff)} "
                            f"differ). Use another --out folder, or delete this one.")
    write_text(manifest, json.dumps(_settings(cfg), indent=2) + "\n")
    names = class_names(cfg.classes)
    jobs = [(str(out), split, i, i % cfg.classes, cfg)
            for split, n in (("train", cfg.videos), ("val", cfg.val_videos)) for i in range(n)]
    bar = tqdm(total=len(jobs), desc=f"synth {preset}", unit="video", disable=not progress)
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            for future in as_completed([pool.submit(_job, j) for j in jobs]):
                future.result()
                bar.update()
    else:
        for job in jobs:
            _job(job)
            bar.update()
    bar.close()
    for split in ("train", "val"):
        lines = [f"{video_path(s, i, names[label])} {label}\n" for _, s, i, label, _ in jobs if s == split]
        write_text(out / f"{split}.csv", "".join(lines))
    write_text(out / "classes.txt", "".join(f"{n}\n" for n in names))
    if cfg.label_noise:
        noisy = [(video_path(s, i, names[label]), label, shown_label(s, i, label, cfg)) for _, s, i, label, _ in jobs]
        write_text(out / "noisy_labels.csv", "".join(f"{p} {label} {shown}\n" for p, label, shown in noisy
                                                      if shown != label))
    if cfg.hidden:
        write_text(out / "hidden_videos.csv", "".join(f"{video_path(s, i, names[label])} {label}\n"
                                                      for _, s, i, label, _ in jobs if is_hidden(s, i, cfg)))
    return cfg
