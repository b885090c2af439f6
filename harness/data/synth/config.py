"""The settings of a synthetic dataset: the presets of the harness's scales, the checks a setting passes, and the
kind (which dataset's nature and annotation layout) a dataset name asks for."""

from __future__ import annotations

from dataclasses import dataclass, replace

from harness.data.synth.classes import max_classes
from harness.spec import SpecError, did_you_mean

KINDS = ("kinetics", "ssv2", "charades")
CHARADES_LENGTH = 3  # Charades videos average 30 s (its paper's figure), three times Kinetics' 10 s clips


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
    label_noise: float = 0.0  # fraction of videos showing another class than their label (see .videos)
    hidden: float = 0.0  # fraction of videos whose textured object is never drawn (see .videos)
    kind: str = "kinetics"  # which dataset's nature and annotation layout: kinetics, ssv2, charades


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
