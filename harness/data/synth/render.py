"""The frames of synthetic video (uint8 F×H×W×3), deterministic from a random generator.

A video's actors (its class's textured objects) are drawn over distractor objects (smaller, untextured, drifting in
random directions), a random smooth background and per-frame noise, which keep it from being trivial.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from harness.data.synth.classes import (
    HUE_RGB,
    HUES,
    MOTIONS,
    SHAPES,
    SSV2_CLASSES,
    SSV2_MIRRORED,
    appearance,
    class_table,
)
from harness.data.synth.config import SynthConfig
from harness.data.synth.motion import Trajectory, drift, during, trajectory


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
    trajectory: Trajectory

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
    return _Object(shape, texture, color, rng.uniform(*radius) * min(h, w), trajectory(motion, h, w, rng))


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
        actors.append(replace(obj, trajectory=during(obj.trajectory, first / cfg.fps, last / cfg.fps)))
    return _render(cfg, rng, actors)


def _render(cfg: SynthConfig, rng: np.random.Generator, actors: list[_Object]) -> np.ndarray:
    """Frames of `actors` over distractors, a background and noise, all drawn from `rng` after the actors."""
    h, w = cfg.size
    side = min(h, w)
    distractors = [_Object(SHAPES[rng.integers(len(SHAPES))], None, rng.uniform(30, 230, 3).astype(np.float32),
                           rng.uniform(0.07, 0.11) * side, drift(h, w, rng)) for _ in range(cfg.distractors)]
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
