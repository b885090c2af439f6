"""Each video of a synthetic dataset: its label, what it shows, and where its file lives. Every draw comes from a
random stream of the video's own (seed, split, index), so it neither changes other videos nor depends on the order
videos are made in.

With ``label_noise`` = p, a fraction p of the videos of both splits show another class than their label (the shown
class uniform over the others), as Kinetics holds mislabelled and ambiguous clips. It puts the plateau at a known
height: a model that reads every video right scores 1 − p top-1 on the validation set, so accuracy near
convergence is not squeezed against 100%, and training top-1 above 1 − p measures memorisation.

With ``hidden`` = q, a fraction q of the videos of both splits never show their textured object (only the
background and the distractors), as Kinetics holds clips whose action is off-screen or occluded. Unlike label
noise these videos contradict no other video, so they do not slow the learning of the rest; they set the plateau
at 1 − q + q/K top-1 for K classes (the hidden videos can only be guessed), and training top-1 above it measures
memorisation. The other videos have the same frames as those of the same seed without hiding.

A Charades-like video holds several actions, overlapping in time, each one object of a class's appearance ×
motion present from its start to its end.
"""

from __future__ import annotations

import math

import numpy as np

from harness.data.synth.classes import class_names
from harness.data.synth.config import SynthConfig

SPLIT_IDS = {"train": 0, "val": 1}
CHARADES_MAX_ACTIONS = 3  # actions per video: 1 to 3


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


def video_label(split: str, i: int, cfg: SynthConfig) -> int:
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
    return video_path(split, i, class_names(cfg.classes)[video_label(split, i, cfg)])
