"""Synthetic video in the Kinetics layout: real H.264 mp4 files (PyAV) whose classes need appearance *and* motion
(by default; SSv2-like and Charades-like kinds at the end).

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

Two other kinds (``kind``) keep the nature of the other datasets the paper trains on, in their annotation layouts
(see :mod:`harness.data.annotations`):

- ``ssv2`` (Something-Something v2: ``data.name=ssv2``): a class is a motion *and its direction* (from right to
  left, from left to right, clockwise, anticlockwise, up, down, towards or away from the camera, ...), whatever
  the object (shape and hue drawn per video, as SSv2's "something"). A horizontal flip turns a video of a
  direction-sensitive class into one of its partner class (left ↔ right, clockwise ↔ anticlockwise), which is
  why the SSv2 recipe trains without flipping; the partner class's videos are rendered as mirror images
  (:func:`ssv2_mirror`). Writes ``something-something-v2-labels.json``, ``-train.json``, ``-validation.json``
  and ``20bn-something-something-v2/{id}.webm`` (VP9, as SSv2's videos); ``label_noise`` and ``hidden`` work as
  above, their lists naming videos by id.
- ``charades`` (``data.name=charades``, ``data.num_classes=157``, scored by mAP): several actions per video,
  overlapping in time, on videos ``CHARADES_LENGTH`` times longer than the preset's; an action is one object
  of a class's appearance × motion, present from its start to its end. Writes ``Charades_v1_train.csv`` and
  ``Charades_v1_test.csv`` (``id,...,actions,length`` rows, actions like ``c002 0.40 1.20;c000 0.00 0.90``),
  ``Charades_v1_classes.txt`` and ``Charades_v1/{id}.mp4``.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable
from concurrent.futures import as_completed
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import av
import numpy as np
from tqdm import tqdm

from harness.data.annotations.charades import CHARADES_CLASSES  # the Charades reader's class count (data.num_classes)
from harness.data.worker_pool import worker_pool
from harness.io import read_json_object, require_writable_dir, write_atomic, write_text_atomic
from harness.spec import SpecError, did_you_mean

SHAPES = ("square", "disc", "triangle", "cross", "diamond", "ring")
TEXTURES = ("striped", "checkered", "dotted", "banded")
HUES = ("red", "green", "blue")
HUE_RGB = {"red": (220, 60, 50), "green": (60, 200, 70), "blue": (60, 90, 230)}
MOTIONS = ("up", "down", "sideways", "rotate", "grow", "shrink", "rise", "fall", "orbit", "bounce", "blink", "still")
KINDS = ("kinetics", "ssv2", "charades")

# SSv2-like classes: (name, template as in SSv2's labels, the motion drawn). Mirrored partners follow their class
# (left before right, ...), so the first few classes of any count include direction-sensitive pairs.
SSV2_CLASSES = (
    ("left", "Moving [something] from right to left", "left"),
    ("right", "Moving [something] from left to right", "left"),
    ("clockwise", "Turning [something] clockwise", "clockwise"),
    ("anticlockwise", "Turning [something] anticlockwise", "clockwise"),
    ("up", "Moving [something] up", "up"),
    ("down", "Moving [something] down", "down"),
    ("towards", "Moving [something] closer to the camera", "grow"),
    ("away", "Moving [something] away from the camera", "shrink"),
    ("up_left", "Lifting [something] up to the left", "up_left"),
    ("up_right", "Lifting [something] up to the right", "up_left"),
    ("down_left", "Dropping [something] down to the left", "down_left"),
    ("down_right", "Dropping [something] down to the right", "down_left"),
    ("circle_clockwise", "Moving [something] in a circle clockwise", "circle_clockwise"),
    ("circle_anticlockwise", "Moving [something] in a circle anticlockwise", "circle_clockwise"),
)
# Mirror images: a video of the key's class is the horizontal flip of one of the value's class.
SSV2_MIRRORED = {"right": "left", "anticlockwise": "clockwise", "up_right": "up_left", "down_right": "down_left",
                 "circle_anticlockwise": "circle_clockwise"}
CHARADES_LENGTH = 3  # Charades videos (~30 s) are about three times as long as Kinetics clips (10 s)
CHARADES_MAX_ACTIONS = 3  # actions per video: 1 to 3


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
    kind: str = "kinetics"  # which dataset's nature and annotation layout: kinetics, ssv2, charades (docstring)


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
    if cfg.kind not in KINDS:
        raise SpecError(f"--kind {cfg.kind}: unknown.{did_you_mean(cfg.kind, KINDS)} Use one of {', '.join(KINDS)}.")
    if cfg.kind == "charades" and overrides.get("frames") is None:  # longer videos unless the length is given
        cfg = replace(cfg, frames=cfg.frames * CHARADES_LENGTH)
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
    if cfg.seed < 0:  # numpy's seed sequences take none: the first video would fail, after synth.json is written
        raise SpecError(f"--seed must be >= 0, got {cfg.seed}.")
    if cfg.frames < 2:
        raise SpecError("--frames must be >= 2: a class is defined by motion.")
    if cfg.classes > max_classes(cfg.kind):
        raise SpecError(f"--classes {cfg.classes} is more than the {max_classes(cfg.kind)} distinct classes the "
                        f"generator can draw for --kind {cfg.kind}.")
    if cfg.kind == "charades" and (cfg.label_noise or cfg.hidden):
        raise SpecError("--label-noise and --hidden are for single-label kinds (kinetics, ssv2), not charades.")
    return cfg


def dataset_kind(name: str) -> str:
    """The synthetic kind that keeps the nature of dataset `name` (data.name): ssv2, charades, else kinetics."""
    return name if name in ("ssv2", "charades") else "kinetics"


def kind_dataset_name(kind: str) -> str:
    """The data.name whose reader reads a synthetic dataset of `kind`."""
    return "synthetic" if kind == "kinetics" else kind


def settings_for_dataset(settings: dict, name: str) -> dict:
    """A scale's synthetic settings (Kinetics-like, :func:`make_synthetic_dataset` keywords plus `preset`) made
    for dataset `name`: unchanged for Kinetics; with the matching kind otherwise, at most as many classes as the
    kind has, and for Charades three times the frames and neither hidden actors nor label noise (single-label
    notions)."""
    kind = dataset_kind(name)
    if kind == "kinetics" or settings.get("kind"):
        return settings
    out = {**settings, "kind": kind}
    if "classes" in out:
        out["classes"] = min(out["classes"], max_classes(kind))
    if kind == "charades":
        out = {k: v for k, v in out.items() if k not in ("hidden", "label_noise")}
        if "frames" in out:
            out["frames"] = out["frames"] * CHARADES_LENGTH
    return out


# ---------------------------------------------------------------- classes
def max_classes(kind: str = "kinetics") -> int:
    if kind == "ssv2":
        return len(SSV2_CLASSES)
    kinetics = len(SHAPES) * len(TEXTURES) * len(HUES) * len(MOTIONS)
    return min(kinetics, CHARADES_CLASSES) if kind == "charades" else kinetics


def class_table(classes: int) -> list[tuple[int, int]]:
    """(appearance, motion) of each class: a grid of about √K appearances × √K motions, so both matter."""
    motions = min(len(MOTIONS), max(2, math.ceil(math.sqrt(classes))))
    appearances = math.ceil(classes / motions)
    return [(a, m) for a in range(appearances) for m in range(motions)][:classes]


def appearance(a: int) -> tuple[str, str, str]:
    """(shape, texture, hue) of appearance `a`; consecutive appearances differ in shape first."""
    return SHAPES[a % len(SHAPES)], TEXTURES[(a // len(SHAPES)) % len(TEXTURES)], \
        HUES[(a // (len(SHAPES) * len(TEXTURES))) % len(HUES)]


def class_names(classes: int, kind: str = "kinetics") -> list[str]:
    if kind == "ssv2":
        return [name for name, _, _ in SSV2_CLASSES[:classes]]
    return ["_".join((*appearance(a), MOTIONS[m])) for a, m in class_table(classes)]


def ssv2_template(label: int) -> str:
    """The SSv2 template of class `label` (its class name in the labels JSON is the template without brackets)."""
    return SSV2_CLASSES[label][1]


def ssv2_mirror(label: int) -> int:
    """The class a horizontal flip turns SSv2-like class `label` into (itself for up, down, towards, away)."""
    names = [name for name, _, _ in SSV2_CLASSES]
    partners = {**SSV2_MIRRORED, **{v: k for k, v in SSV2_MIRRORED.items()}}
    return names.index(partners.get(names[label], names[label]))


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
        # Directed motions (SSv2-like classes; their mirror images are the partner classes). With y pointing
        # down, a growing angle turns the object clockwise on screen and (cos, sin) circles clockwise.
        elif motion == "left":
            x -= v * t
        elif motion == "clockwise":
            ang += abs(omega) * t
        elif motion == "up_left":
            x, y = x - d * t, y - d * t
        elif motion == "down_left":
            x, y = x - d * t, y + d * t
        elif motion == "circle_clockwise":
            x, y = x + 0.22 * side * math.cos(abs(omega) * t), y + 0.22 * side * math.sin(abs(omega) * t)
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


def _actor(shape: str, texture: str, hue: str, motion: str, cfg: SynthConfig, rng: np.random.Generator,
           radius: tuple[float, float] = (0.17, 0.22)) -> _Object:
    """A textured object doing `motion`, its colour, size and path drawn from `rng` (radius: share of the side)."""
    h, w = cfg.size
    color = np.clip(np.array(HUE_RGB[hue], np.float32) * rng.uniform(0.85, 1.15), 0, 255)
    return _Object(shape, texture, color, rng.uniform(*radius) * min(h, w), _trajectory(motion, h, w, rng))


def render_video(cls: tuple[int, int], cfg: SynthConfig, rng: np.random.Generator,
                 show_target: bool = True) -> np.ndarray:
    """The frames (uint8 F×H×W×3) of one video of class (appearance, motion); without its textured object if
    not `show_target` (the random draws stay the same, so everything else in the video is unchanged)."""
    target = _actor(*appearance(cls[0]), MOTIONS[cls[1]], cfg, rng)
    return _render(cfg, rng, [target] if show_target else [])


def render_ssv2_video(label: int, cfg: SynthConfig, rng: np.random.Generator, show_target: bool = True) -> np.ndarray:
    """The frames of one video of SSv2-like class `label`: any striped object (shape and hue drawn from `rng`:
    the class is the motion and its direction, not the object) doing the class's motion; a mirrored class's
    video is the horizontal flip of the one its partner would have with the same draws."""
    name, _, motion = SSV2_CLASSES[label]
    # Stripes only: they (like every shape) look the same mirrored, so a flipped video's object looks like an
    # unflipped one and only the motion tells the partner classes apart.
    shape, hue = SHAPES[rng.integers(len(SHAPES))], HUES[rng.integers(len(HUES))]
    target = _actor(shape, "striped", hue, motion, cfg, rng)
    frames = _render(cfg, rng, [target] if show_target else [])
    return np.ascontiguousarray(frames[:, :, ::-1]) if name in SSV2_MIRRORED else frames


def render_charades_video(actions: list[tuple[int, int, int]], cfg: SynthConfig,
                          rng: np.random.Generator) -> np.ndarray:
    """The frames of one Charades-like video: for each (class, first frame, last frame) of `actions`, an object
    of the class's appearance and motion, drawn in those frames only (smaller than a Kinetics-like video's one
    object, so that several fit)."""
    table = class_table(cfg.classes)
    actors = []
    for label, first, last in actions:
        a, m = table[label]
        obj = _actor(*appearance(a), MOTIONS[m], cfg, rng, radius=(0.12, 0.16))
        actors.append(replace(obj, trajectory=_during(obj.trajectory, first / cfg.fps, last / cfg.fps)))
    return _render(cfg, rng, actors)


def _during(trajectory: Callable, start: float, end: float) -> Callable:
    """`trajectory`, visible only from `start` to `end` seconds."""
    def at(t: float) -> tuple[float, float, float, float, bool]:
        x, y, ang, sc, vis = trajectory(t)
        return x, y, ang, sc, vis and start <= t <= end
    return at


def _render(cfg: SynthConfig, rng: np.random.Generator, actors: list[_Object]) -> np.ndarray:
    """Frames of `actors` over distractors, a background and noise, all drawn from `rng` after the actors."""
    h, w = cfg.size
    side = min(h, w)
    distractors = [_Object(SHAPES[rng.integers(len(SHAPES))], None, rng.uniform(30, 230, 3).astype(np.float32),
                           rng.uniform(0.07, 0.11) * side, _drift(h, w, rng)) for _ in range(cfg.distractors)]
    background = _background(h, w, rng)
    out = np.empty((cfg.frames, h, w, 3), np.uint8)
    for i in range(cfg.frames):
        t = i / cfg.fps
        frame = background.copy()
        for obj in [*distractors, *actors]:  # the actors on top, never covered
            _draw(frame, obj, t)
        frame += rng.standard_normal(frame.shape, dtype=np.float32) * np.float32(cfg.noise)
        out[i] = np.clip(frame, 0, 255).astype(np.uint8)
    return out


# ---------------------------------------------------------------- files
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


SPLIT_IDS = {"train": 0, "val": 1}
KINETICS_DONE = "val.csv"  # the file a Kinetics-layout dataset is written with last


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


def charades_actions(split: str, i: int, cfg: SynthConfig) -> list[tuple[int, int, int]]:
    """The actions of Charades-like video `i` of `split`: (class, first frame, last frame), 1 to
    CHARADES_MAX_ACTIONS distinct classes each present for 30-70% of the video at a random time, so that actions
    of one video often overlap (a stream of its own, as the label noise)."""
    rng = np.random.default_rng([cfg.seed, SPLIT_IDS[split], i, 3])
    n = min(cfg.classes, 1 + int(rng.integers(CHARADES_MAX_ACTIONS)))
    actions = []
    for label in rng.choice(cfg.classes, size=n, replace=False):
        length = int(rng.integers(math.ceil(0.3 * cfg.frames), math.ceil(0.7 * cfg.frames) + 1))
        first = int(rng.integers(cfg.frames - length + 1))
        actions.append((int(label), first, first + length - 1))
    return actions


def _video_label(split: str, i: int, cfg: SynthConfig) -> int:
    """The label of video `i` (single-label kinds): every class in turn, so the classes are balanced."""
    return i % cfg.classes


def video_path(split: str, i: int, class_name: str) -> str:
    return f"{split}/{class_name}/{split}_{i:06d}.mp4"


def video_id(split: str, i: int, cfg: SynthConfig) -> str:
    """The id of video `i` of `split` in the SSv2 and Charades layouts (one video folder for both splits):
    SSv2's are numbers (validation after training), Charades' short codes (T00001 train, V00001 test)."""
    if cfg.kind == "ssv2":
        return str(i + 1 + (cfg.videos if split == "val" else 0))
    return f"{split[0].upper()}{i:05d}"


def video_file(split: str, i: int, cfg: SynthConfig) -> str:
    """Where video `i` of `split` lives, relative to the dataset folder."""
    if cfg.kind == "ssv2":
        return f"20bn-something-something-v2/{video_id(split, i, cfg)}.webm"
    if cfg.kind == "charades":
        return f"Charades_v1/{video_id(split, i, cfg)}.mp4"
    return video_path(split, i, class_names(cfg.classes)[_video_label(split, i, cfg)])


def _job(args: tuple[str, str, int, SynthConfig]) -> str:
    out, split, i, cfg = args
    path = Path(out) / video_file(split, i, cfg)
    if not path.exists():
        rng = np.random.default_rng([cfg.seed, SPLIT_IDS[split], i])  # per video: independent of order and skips
        path.parent.mkdir(parents=True, exist_ok=True)
        for stale in path.parent.glob(f".{path.name}.*.tmp"):  # what a generation killed while encoding it left
            stale.unlink(missing_ok=True)
        if cfg.kind == "charades":
            encode_mp4(render_charades_video(charades_actions(split, i, cfg), cfg, rng), path, cfg.fps, cfg.crf,
                       cfg.x264_preset)
            return str(path)
        shown = shown_label(split, i, _video_label(split, i, cfg), cfg)
        show = not is_hidden(split, i, cfg)
        if cfg.kind == "ssv2":
            encode_webm(render_ssv2_video(shown, cfg, rng, show_target=show), path, cfg.fps, cfg.crf)
        else:
            frames = render_video(class_table(cfg.classes)[shown], cfg, rng, show_target=show)
            encode_mp4(frames, path, cfg.fps, cfg.crf, cfg.x264_preset)
    return str(path)


def _settings(cfg: SynthConfig) -> dict:
    settings = {**asdict(cfg), "size": list(cfg.size), "format": 1}
    for name in ("label_noise", "hidden"):  # datasets made before these existed keep their manifest
        if not settings[name]:
            del settings[name]
    if settings["kind"] == "kinetics":
        del settings["kind"]
    return settings


def _require_empty(out: Path) -> None:
    """Refuse a folder without synth.json that holds anything: the annotation files written at the end would
    replace a real dataset's (train.csv, classes.txt)."""
    # A generation killed while writing synth.json leaves only its temporary file.
    found = sorted(p.name for p in out.iterdir() if not (p.name.startswith(".synth.json.") and p.suffix == ".tmp"))
    if found:
        shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
        raise SpecError(f"--out {out} holds files harness data synth did not write ({shown}) and no synth.json: "
                        f"writing there would replace them. Choose an empty or new folder.")


def make_synthetic_dataset(out_dir: str | Path, preset: str = "smoke", *, classes: int | None = None,
                           videos: int | None = None, val_videos: int | None = None, frames: int | None = None,
                           size: tuple[int, int] | None = None, fps: int | None = None, seed: int | None = None,
                           label_noise: float | None = None, hidden: float | None = None, kind: str | None = None,
                           workers: int = 1, progress: bool = True) -> SynthConfig:
    """Write a synthetic dataset to `out_dir` (see the module docstring); returns the settings used.

    Re-running with the same settings skips finished videos; different settings in the same folder are an
    error (the annotation files would not describe the videos).
    """
    cfg = preset_config(preset, classes=classes, videos=videos, val_videos=val_videos, frames=frames, size=size,
                        fps=fps, seed=seed, label_noise=label_noise, hidden=hidden, kind=kind)
    out = require_writable_dir(Path(out_dir), "--out")
    manifest = out / "synth.json"
    if not manifest.exists():
        _require_empty(out)
    else:
        try:
            old = read_json_object(manifest)
        except (OSError, ValueError) as err:  # the videos' settings are unknown: neither reuse them nor write over them
            raise SpecError(f"{manifest} cannot be read ({err}), so the settings of the dataset in {out} are "
                            f"unknown. Use another --out folder, or delete this one.") from None
        if old != _settings(cfg):
            keys = set(_settings(cfg)) | set(old)
            diff = sorted(k for k in keys if old.get(k) != _settings(cfg).get(k))
            raise SpecError(f"{out} already holds a synthetic dataset made with other settings ({', '.join(diff)} "
                            f"differ). Use another --out folder, or delete this one.")
    write_text_atomic(manifest, json.dumps(_settings(cfg), indent=2) + "\n")
    jobs = [(str(out), split, i, cfg) for split, n in (("train", cfg.videos), ("val", cfg.val_videos))
            for i in range(n)]
    bar = tqdm(total=len(jobs), desc=f"synth {preset}", unit="video", disable=not progress)
    if workers > 1:
        with worker_pool(workers) as pool:
            for future in as_completed([pool.submit(_job, j) for j in jobs]):
                future.result()
                bar.update()
    else:
        for job in jobs:
            _job(job)
            bar.update()
    bar.close()
    videos = [(split, i) for _, split, i, _ in jobs]
    {"kinetics": _write_kinetics, "ssv2": _write_ssv2, "charades": _write_charades}[cfg.kind](out, cfg, videos)
    return cfg


def _write_kinetics(out: Path, cfg: SynthConfig, videos: list[tuple[str, int]]) -> None:
    """`{split}.csv` (`path label` lines), `classes.txt` and the lists of noisy and hidden videos."""
    names = class_names(cfg.classes)
    labelled = [(s, i, _video_label(s, i, cfg)) for s, i in videos]
    lists = {split: "".join(f"{video_path(s, i, names[label])} {label}\n" for s, i, label in labelled if s == split)
             for split in ("train", "val")}
    write_text_atomic(out / "train.csv", lists["train"])
    write_text_atomic(out / "classes.txt", "".join(f"{n}\n" for n in names))
    if cfg.label_noise:
        noisy = [(video_path(s, i, names[label]), label, shown_label(s, i, label, cfg)) for s, i, label in labelled]
        write_text_atomic(out / "noisy_labels.csv", "".join(f"{p} {label} {shown}\n" for p, label, shown in noisy
                                                             if shown != label))
    if cfg.hidden:
        write_text_atomic(out / "hidden_videos.csv", "".join(f"{video_path(s, i, names[label])} {label}\n"
                                                             for s, i, label in labelled if is_hidden(s, i, cfg)))
    # Last: `harness reproduce` takes a val.csv as the sign of a finished dataset (KINETICS_DONE), so a generation
    # stopped before it is taken up again, not used without its class names and lists.
    write_text_atomic(out / KINETICS_DONE, lists["val"])


def _write_ssv2(out: Path, cfg: SynthConfig, videos: list[tuple[str, int]]) -> None:
    """SSv2's labels JSON (template without brackets → index, as a string as published), its train and
    validation JSONs (one {id, label, template, placeholders} entry a line) and the lists of noisy and hidden
    videos (`id label [shown_label]` lines)."""
    labels = {ssv2_template(k).replace("[", "").replace("]", ""): str(k) for k in range(cfg.classes)}
    write_text_atomic(out / "something-something-v2-labels.json", json.dumps(labels, indent=1) + "\n")
    for split, name in (("train", "train"), ("val", "validation")):
        entries = []
        for s, i in videos:
            if s == split:
                label = _video_label(s, i, cfg)
                template = ssv2_template(label)
                # The placeholder names no object: the object is drawn per video and says nothing of the class.
                entries.append({"id": video_id(s, i, cfg), "label": template.replace("[something]", "something"),
                                "template": template, "placeholders": ["something"]})
        body = ",\n".join(json.dumps(e) for e in entries)
        write_text_atomic(out / f"something-something-v2-{name}.json", f"[\n{body}\n]\n" if entries else "[]\n")
    labelled = [(video_id(s, i, cfg), s, i, _video_label(s, i, cfg)) for s, i in videos]
    if cfg.label_noise:
        write_text_atomic(out / "noisy_labels.csv", "".join(f"{v} {label} {shown_label(s, i, label, cfg)}\n"
                                                            for v, s, i, label in labelled
                                                            if shown_label(s, i, label, cfg) != label))
    if cfg.hidden:
        write_text_atomic(out / "hidden_videos.csv", "".join(f"{v} {label}\n" for v, s, i, label in labelled
                                                             if is_hidden(s, i, cfg)))


CHARADES_HEADER = ("id", "subject", "scene", "quality", "relevance", "verified", "script", "objects",
                   "descriptions", "actions", "length")


def _write_charades(out: Path, cfg: SynthConfig, videos: list[tuple[str, int]]) -> None:
    """Charades' train and test CSVs (the official header; id, actions and length filled in) and its class list
    (`c000 name` lines)."""
    names = class_names(cfg.classes)
    write_text_atomic(out / "Charades_v1_classes.txt", "".join(f"c{k:03d} {n}\n" for k, n in enumerate(names)))
    for split, name in (("train", "Charades_v1_train.csv"), ("val", "Charades_v1_test.csv")):
        text = io.StringIO()
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(CHARADES_HEADER)
        for s, i in videos:
            if s == split:
                # Times in seconds at the frames' own times, two decimals as Charades writes them.
                actions = ";".join(f"c{label:03d} {first / cfg.fps:.2f} {last / cfg.fps:.2f}"
                                   for label, first, last in charades_actions(s, i, cfg))
                row = {"id": video_id(s, i, cfg), "actions": actions, "length": f"{cfg.frames / cfg.fps:.2f}"}
                writer.writerow([row.get(column, "") for column in CHARADES_HEADER])
        write_text_atomic(out / name, text.getvalue())
