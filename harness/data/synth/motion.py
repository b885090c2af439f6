"""How the objects of synthetic video move: a trajectory maps a time in seconds to (x, y, angle, scale,
visible). Speeds and directions not part of a class are drawn per video, so only the motion names a class."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

Trajectory = Callable[[float], tuple[float, float, float, float, bool]]  # t → (x, y, angle, scale, visible)


def trajectory(motion: str, h: int, w: int, rng: np.random.Generator) -> Trajectory:
    """The path of an object doing `motion` in an h×w frame; its start, speed, direction and phase drawn from `rng`."""
    x0, y0 = rng.uniform(0, w), rng.uniform(0, h)
    side = min(h, w)
    v = rng.uniform(0.45, 0.75) * side  # pixels per second: random speed, not a class (see .classes)
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


def drift(h: int, w: int, rng: np.random.Generator) -> Trajectory:
    """A distractor's path: straight at a random angle and speed (any direction, so it never names a class)."""
    x0, y0 = rng.uniform(0, w), rng.uniform(0, h)
    ang = rng.uniform(0, 2 * math.pi)
    v = rng.uniform(0.1, 0.7) * min(h, w)
    return lambda t: (x0 + v * t * math.cos(ang), y0 + v * t * math.sin(ang), 0.0, 1.0, True)


def during(path: Trajectory, start: float, end: float) -> Trajectory:
    """`path`, visible only from `start` to `end` seconds."""
    def at(t: float) -> tuple[float, float, float, float, bool]:
        x, y, ang, sc, vis = path(t)
        return x, y, ang, sc, vis and start <= t <= end
    return at
