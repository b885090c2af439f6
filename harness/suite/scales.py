"""Scales (suites/scales/NAME.yaml): how a suite is shrunk to fit the hardware, as override strings (frames, pixels,
epochs, widths, batch, data) that run the same recipe on a CPU (`smoke`), one GPU (`proxy`) or a cluster (`paper`,
unchanged)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.paths import suites_dir
from harness.spec import DataSpec, RunSpec, SpecError
from harness.suite.yaml_file import read_named_mapping

SCALE_KEYS = {"description", "frames_factor", "sampling_rate", "crop_factor", "max_epoch", "model_width", "num_gpus",
              "per_gpu_batch", "synthetic", "frame_cache", "train", "pretrain_2d"}
# What a scale that shrinks the recipe sets, all of them (scale_overrides reads each): key -> the type of its value.
# A scale with none of them (paper) runs the recipe as it is.
RESCALING_KEYS = {"frames_factor": float, "crop_factor": float, "max_epoch": int, "model_width": float, "num_gpus": int,
                  "per_gpu_batch": int}


@dataclass(frozen=True)
class Scale:
    name: str
    settings: dict[str, Any]

    @property
    def description(self) -> str:
        return self.settings.get("description", self.name)

    @property
    def synthetic(self) -> dict[str, Any] | None:
        return self.settings.get("synthetic")

    def for_dataset(self, name: str) -> Scale:
        """This scale with its synthetic data made for dataset `name` (data.name): SSv2's direction classes,
        Charades' overlapping actions, Kinetics' settings unchanged (see `harness.data.synth.config`)."""
        if not self.synthetic:
            return self
        from harness.data.synth.config import settings_for_dataset

        return Scale(self.name, {**self.settings, "synthetic": settings_for_dataset(self.synthetic, name)})

    def long_enough_for(self, datas: Iterable[DataSpec]) -> Scale:
        """This scale with synthetic videos at least as long as the longest clip that recipes with `datas` take at
        this scale, so that no run finds every video too short (Table 2b's 64-frame clips against the proxy's
        48-frame videos). Where every clip fits the data stays as it is, hence the run ids; SSv2's segment sampling
        takes any length."""
        from harness.data.clip_dataset import DATASET_SAMPLING

        synth = self.synthetic
        if not synth or "frames" not in synth or not self.settings.get("frames_factor"):
            return self
        longest = 0
        for data in datas:
            if DATASET_SAMPLING.get(data.name, {}).get("segment"):
                continue
            rate = self.settings.get("sampling_rate") or data.sampling_rate
            longest = max(longest, (_scaled_frames(data, self.settings) - 1) * rate + 1)
        if longest <= synth["frames"]:
            return self
        return Scale(self.name, {**self.settings, "synthetic": {**synth, "frames": longest}})



def list_scales() -> list[str]:
    return sorted(p.stem for p in (suites_dir() / "scales").glob("*.yaml"))



def load_scale(name: str) -> Scale:
    path, data = read_named_mapping("scale", suites_dir() / "scales", list_scales(), name, SCALE_KEYS)
    _require_scale_values(data, path)
    return Scale(name, data)


def _require_scale_values(data: Mapping[str, Any], path: Path) -> None:
    """SpecError naming the scale's file and key for a value scale_overrides cannot use: without this, a scale
    lacking one of RESCALING_KEYS ran the recipe unscaled, as paper scale does, and a value that is no number
    ended in a traceback."""
    given = [k for k in RESCALING_KEYS if k in data]
    if given and len(given) < len(RESCALING_KEYS):
        missing = [k for k in RESCALING_KEYS if k not in data]
        raise SpecError(f"{path}: a scale that shrinks the recipe sets all of {', '.join(RESCALING_KEYS)}; "
                        f"{', '.join(missing)} missing (a scale with none of them, as paper.yaml, runs the recipe as "
                        f"it is).")
    wanted = {**{k: RESCALING_KEYS[k] for k in given}, **({"sampling_rate": int} if "sampling_rate" in data else {})}
    for key, kind in wanted.items():
        value = data[key]
        if isinstance(value, bool) or not isinstance(value, int if kind is int else int | float) or not value > 0:
            what = "a whole number >= 1" if kind is int else "a number > 0"
            raise SpecError(f"{path}: '{key}' must be {what}, got {value!r}.")
    for key in ("synthetic", "train", "pretrain_2d"):
        if not isinstance(data.get(key) or {}, Mapping):
            raise SpecError(f"{path}: '{key}' must be a mapping of keys, got {data[key]!r}.")


def _compressed_steps(steps: tuple[int, ...], max_epoch: int, target: int) -> tuple[list[int], int]:
    """LR steps and max epoch shrunk in proportion to `target` epochs, kept strictly increasing."""
    out: list[int] = []
    for step in steps:
        value = int(round(step * target / max_epoch))
        out.append(value if not out else max(value, out[-1] + 1))
    return out, max(target, out[-1] + 1)


def _fmt(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_fmt(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def _scaled_frames(data: DataSpec, settings: Mapping[str, Any]) -> int:
    """The frames of a recipe's clip at a scale with `frames_factor` in its settings."""
    return max(1, int(round(data.num_frames * settings["frames_factor"])))


def scale_overrides(spec: RunSpec, scale: Scale, data_root: str | None, cache: str | None) -> list[str]:
    """Overrides that turn the composed recipe `spec` into its `scale` version (none at paper scale)."""
    s = scale.settings
    if scale.name == "paper" or not s.get("frames_factor"):
        return []
    d, sol = spec.data, spec.solver
    frames = _scaled_frames(d, s)
    crop = max(8, int(round(d.crop_size * s["crop_factor"])))
    jitter = [max(crop, int(round(j * s["crop_factor"]))) for j in d.jitter]
    steps, max_epoch = _compressed_steps(sol.steps, sol.max_epoch, int(s["max_epoch"]))
    warmup = sol.warmup_epochs * max_epoch / sol.max_epoch
    batch = int(s["per_gpu_batch"]) * int(s["num_gpus"])
    # Linear scaling rule: the recipe's LR per clip of global batch is kept.
    base_lr = sol.base_lr * batch / sol.batch_size
    out = [f"data.num_frames={frames}", f"data.crop_size={crop}", f"data.jitter={_fmt(jitter)}",
           f"solver.steps={_fmt(steps)}", f"solver.max_epoch={max_epoch}", f"solver.warmup_epochs={warmup!r}",
           f"solver.batch_size={batch}", f"solver.base_lr={base_lr!r}", f"num_gpus={s['num_gpus']}",
           f"scale={scale.name}"]
    if spec.model.takes_width:  # a torchvision model runs at its own width at every scale
        out.append(f"model.width={s['model_width']!r}")
    if s.get("sampling_rate"):
        out.append(f"data.sampling_rate={s['sampling_rate']}")
    synth = scale.synthetic
    if synth and data_root:
        from harness.data.annotations.charades import CHARADES_CLASSES
        from harness.data.synth.config import kind_dataset_name

        kind = synth.get("kind", "kinetics")
        classes = CHARADES_CLASSES if kind == "charades" else synth["classes"]  # Charades' reader has 157
        out += [f"data.name={kind_dataset_name(kind)}", f"data.root={data_root}",
                f"data.train_videos={synth['videos']}", f"data.num_classes={classes}"]
    if cache:
        out.append(f"data.cache={cache}")
    out += [f"train.{k}={_fmt(v)}" for k, v in (s.get("train") or {}).items()]
    return out

