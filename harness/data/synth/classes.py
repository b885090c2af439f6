"""The classes of synthetic video.

A Kinetics-like class is an (appearance, motion) pair. Appearance = shape × texture × hue of the one large textured
object; motion = how it moves (up, down, sideways, rotate, grow, shrink, rise, fall, orbit, bounce, blink, still).
Both factors vary across classes, so one frame gives the appearance but not the motion (the object wraps around the
frame edges, so its position says nothing), while a small 3D CNN sees both. Every class maps to itself under a
horizontal flip (sideways/rotation/orbit directions are random per video), so the Kinetics recipes' flip
augmentation stays label-preserving; speed is random per video, not a class, because multigrid's random temporal
stride changes apparent speed.

An SSv2-like class is a motion *and its direction* (from right to left, from left to right, clockwise,
anticlockwise, up, down, towards or away from the camera, ...), whatever the object (shape and hue drawn per video,
as SSv2's "something"). A horizontal flip turns a video of a direction-sensitive class into one of its partner
class (left ↔ right, clockwise ↔ anticlockwise), which is why the SSv2 recipe trains without flipping; the partner
class's videos are rendered as mirror images (:func:`ssv2_mirror`). A Charades-like class is a Kinetics-like one.
"""

from __future__ import annotations

import math

from harness.data.annotations.charades import CHARADES_CLASSES  # the Charades reader's class count (data.num_classes)

SHAPES = ("square", "disc", "triangle", "cross", "diamond", "ring")
TEXTURES = ("striped", "checkered", "dotted", "banded")
HUES = ("red", "green", "blue")
HUE_RGB = {"red": (220, 60, 50), "green": (60, 200, 70), "blue": (60, 90, 230)}
MOTIONS = ("up", "down", "sideways", "rotate", "grow", "shrink", "rise", "fall", "orbit", "bounce", "blink", "still")

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


def max_classes(kind: str = "kinetics") -> int:
    """How many distinct classes the generator can draw for `kind`."""
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

