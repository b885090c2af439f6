"""Suites (lists of runs tied to the paper's tables) and scales (how a suite is shrunk to fit the hardware).

A suite run is a recipe plus overrides; a scale turns the composed recipe into override strings
(frames, pixels, epochs, widths, batch, data) so that the same suite runs on a CPU (`smoke`),
one GPU (`proxy`) or a cluster (`paper`, unchanged). Everything here is pure; harness.reproduce does I/O.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.config import compose, recipes
from harness.io import unreadable_reason
from harness.paths import suites_dir
from harness.schedule import build_plan
from harness.spec import DataSpec, RunSpec, SpecError, did_you_mean

RUN_KEYS = {"recipe", "overrides", "match_iterations_of", "requires", "paper", "figure"}
SUITE_KEYS = {"description", "tables", "runs"}
SCALE_KEYS = {"description", "frames_factor", "sampling_rate", "crop_factor", "max_epoch", "model_width", "num_gpus",
              "per_gpu_batch", "synthetic", "frame_cache", "train", "pretrain_2d"}
# What a scale that shrinks the recipe sets, all of them (scale_overrides reads each): key -> the type of its value.
# A scale with none of them (paper) runs the recipe as it is.
RESCALING_KEYS = {"frames_factor": float, "crop_factor": float, "max_epoch": int, "model_width": float, "num_gpus": int,
                  "per_gpu_batch": int}


@dataclass(frozen=True)
class RunDef:
    """One run of a suite as its YAML declares it."""

    variant: str
    recipe: str
    overrides: tuple[str, ...] = ()
    match_iterations_of: str | None = None
    requires: tuple[str, ...] = ()
    paper: tuple[tuple[str, str], ...] = ()  # (table, row) pairs of paper_results.csv
    figure: Mapping[str, Any] = field(default_factory=dict)  # {"method": ..., "epochs": ...} for Figure 3


@dataclass(frozen=True)
class SuiteDef:
    """A suite: its description, the paper tables it re-creates and its runs (in YAML order)."""

    name: str
    description: str
    tables: tuple[str, ...]
    runs: tuple[RunDef, ...]
    # Points of top-1 (or mAP) a run may lose and still keep the baseline's accuracy: declared with the suite,
    # before its runs are looked at.
    margin: float = 1.0

    def run(self, variant: str) -> RunDef | None:
        return next((r for r in self.runs if r.variant == variant), None)

    def require_variants(self, variants, what: str) -> None:
        """SpecError naming the first of `variants` (from `what`, e.g. '--only') that this suite lacks."""
        names = [r.variant for r in self.runs]
        unknown = [v for v in variants if v not in names]
        if unknown:
            raise SpecError(f"{what}: suite {self.name} has no variant {unknown[0]!r}."
                            f"{did_you_mean(unknown[0], names)} Its variants: {', '.join(names)}.")


def _require_suite_shape(data: Mapping[str, Any], where: str) -> None:
    """SpecError naming `where` (the suite's file) where the parsed YAML is not shaped as a suite: a file edited by
    hand would otherwise end `reproduce` or `report` in a traceback."""
    runs = data.get("runs") or {}
    if not isinstance(runs, Mapping):
        raise SpecError(f"{where}: 'runs' must be a mapping of run names to runs (baseline: {{recipe: NAME, "
                        f"overrides: [...]}}), got {runs!r}.")
    if not isinstance(data.get("tables") or [], list):
        raise SpecError(f"{where}: 'tables' must be a list of the paper's tables, e.g. [\"1a\"], got "
                        f"{data['tables']!r}.")
    margin = data.get("margin", 1.0)
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 < margin < 100:
        raise SpecError(f"{where}: 'margin' must be the points of accuracy a run may lose and still count as "
                        f"keeping the baseline's (a number above 0, e.g. 1.0), got {margin!r}.")
    for variant, run in runs.items():
        if not isinstance(run, Mapping):
            raise SpecError(f"{where}: run '{variant}' must be a mapping of keys (recipe:, overrides:, ...), got "
                            f"{run!r}.")
        for key, example in (("overrides", "[solver.max_epoch=120]"), ("requires", "[model.pretrained]")):
            if not isinstance(run.get(key) or [], list):
                raise SpecError(f"{where}: run '{variant}': '{key}' must be a list, e.g. {example}, got "
                                f"{run[key]!r}.")
        paper = run.get("paper") or []
        if not isinstance(paper, list) or not all(isinstance(r, list) and len(r) == 2 for r in paper):
            raise SpecError(f"{where}: run '{variant}': 'paper' must be a list of [table, row] pairs, e.g. "
                            f"[[\"1a\", \"baseline\"]], got {paper!r}.")
        if not isinstance(run.get("figure") or {}, Mapping):
            raise SpecError(f"{where}: run '{variant}': 'figure' must be a mapping (method:, epochs:), got "
                            f"{run['figure']!r}.")


def suite_from_mapping(name: str, data: Mapping[str, Any], path: Path | None = None) -> SuiteDef:
    """A SuiteDef from the parsed YAML of suites/experiments/NAME.yaml (`path`, named in errors)."""
    _require_suite_shape(data, str(path) if path else f"suite '{name}'")
    runs = []
    for variant, run in (data.get("runs") or {}).items():
        runs.append(RunDef(
            variant=str(variant), recipe=str(run.get("recipe", "")),
            overrides=tuple(str(o) for o in run.get("overrides") or ()),
            match_iterations_of=run.get("match_iterations_of"),
            requires=tuple(str(k) for k in run.get("requires") or ()),
            paper=tuple((str(t), str(r)) for t, r in run.get("paper") or ()),
            figure=dict(run.get("figure") or {})))
    return SuiteDef(name, str(data.get("description") or name), tuple(str(t) for t in data.get("tables") or ()),
                    tuple(runs), float(data.get("margin", 1.0)))


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


def list_suites() -> list[str]:
    return sorted(p.stem for p in (suites_dir() / "experiments").glob("*.yaml"))


def list_scales() -> list[str]:
    return sorted(p.stem for p in (suites_dir() / "scales").glob("*.yaml"))


def read_yaml_mapping(path: Path) -> dict[str, Any]:
    """The mapping a config file (a suite, a scale) holds; SpecError naming the file where it cannot be read, is
    not UTF-8, not YAML or not a mapping."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise SpecError(f"{path} {unreadable_reason(path, err)}") from None
    except UnicodeDecodeError as err:  # saved by an editor in a legacy encoding
        raise SpecError(f"{path} is not UTF-8 text ({err.reason} at byte {err.start}); re-save it as UTF-8.") from None
    except yaml.YAMLError as err:
        raise SpecError(f"{path} is not valid YAML: {err}") from err
    if not isinstance(data, dict):
        raise SpecError(f"{path} must hold a mapping of keys.")
    return data


def paper_rows(path: Path | None = None) -> list[dict[str, str]]:
    """The paper's tables (suites/paper/paper_results.csv), one dict per row, in the paper's order."""
    path = path or suites_dir() / "paper" / "paper_results.csv"
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError as err:
        raise SpecError(f"{path} {unreadable_reason(path, err)}") from None


def load_suite(name: str) -> SuiteDef:
    """Read and check suites/experiments/NAME.yaml: keys, recipes, references and paper rows."""
    if name not in list_suites():
        raise SpecError(f"Unknown suite '{name}'.{did_you_mean(name, list_suites())} "
                        f"Suites: {', '.join(list_suites())}.")
    path = suites_dir() / "experiments" / f"{name}.yaml"
    data = read_yaml_mapping(path)
    unknown = set(data) - SUITE_KEYS
    if unknown:
        raise SpecError(f"{path}: unknown key(s) {sorted(unknown)}; allowed: {sorted(SUITE_KEYS)}.")
    suite = suite_from_mapping(name, data, path)
    known_rows = {(r["table"], r["row"]) for r in paper_rows()}
    for variant, run in (data.get("runs") or {}).items():
        where = f"{path}: run '{variant}'"
        bad = set(run) - RUN_KEYS
        if bad:
            raise SpecError(f"{where}: unknown key(s) {sorted(bad)}.{did_you_mean(sorted(bad)[0], RUN_KEYS)}")
        if run.get("recipe") not in recipes():
            raise SpecError(f"{where}: unknown recipe '{run.get('recipe')}'."
                            f"{did_you_mean(str(run.get('recipe')), recipes())}")
        for row in run.get("paper", []):
            if tuple(row) not in known_rows:
                raise SpecError(f"{where}: paper row {list(row)} is not in suites/paper/paper_results.csv.")
    variants = [r.variant for r in suite.runs]
    for run in suite.runs:
        if run.match_iterations_of and run.match_iterations_of not in variants:
            raise SpecError(f"{path}: run '{run.variant}' matches iterations of unknown run "
                            f"'{run.match_iterations_of}'.{did_you_mean(run.match_iterations_of, variants)}")
    return suite


def load_scale(name: str) -> Scale:
    if name not in list_scales():
        raise SpecError(f"Unknown scale '{name}'.{did_you_mean(name, list_scales())} "
                        f"Scales: {', '.join(list_scales())}.")
    path = suites_dir() / "scales" / f"{name}.yaml"
    data = read_yaml_mapping(path)
    unknown = set(data) - SCALE_KEYS
    if unknown:
        raise SpecError(f"{path}: unknown key(s) {sorted(unknown)}; allowed: {sorted(SCALE_KEYS)}.")
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


def _epoch_key(spec: RunSpec) -> str:
    return "multigrid.epoch_factor" if spec.is_multigrid else "baseline.epoch_factor"


def matching_epoch_factor(spec: RunSpec, target_iterations: int) -> float:
    """The epoch factor at which `spec`'s plan has the iterations closest to `target_iterations` (bisection)."""
    key = _epoch_key(spec)
    section = "multigrid" if key.startswith("multigrid") else "baseline"

    def iters(f: float) -> int:
        changed = spec.replace(**{section: type(getattr(spec, section))(**{
            **getattr(spec, section).__dict__, "epoch_factor": f})})
        try:
            return build_plan(changed).iterations
        except SpecError:
            return 0

    lo, hi = 0.01, 20.0
    best = (abs(iters(1.0) - target_iterations), 1.0)
    for _ in range(50):
        mid = (lo + hi) / 2
        n = iters(mid)
        best = min(best, (abs(n - target_iterations), mid))
        if n < target_iterations:
            lo = mid
        else:
            hi = mid
    return best[1]  # unrounded: epoch counts are int(max_epoch × factor), so rounding could lose an epoch


@dataclass(frozen=True)
class ResolvedRun:
    run: RunDef
    overrides: tuple[str, ...]  # everything `harness train` needs besides output_dir
    spec: RunSpec | None  # None when the run cannot run (see `skip_reason`)
    skip_reason: str = ""

    def output_dir(self, root: Path) -> Path:
        """Where this run keeps its checkpoints and logs under `root`: one folder per variant and settings."""
        from harness.results import run_id

        return Path(root) / f"{self.run.variant}-{run_id(self.spec)}"


def suite_scale(suite: SuiteDef, scale: Scale) -> Scale:
    """`scale` with its synthetic data made for the dataset of `suite`'s recipes (Scale.for_dataset) when they all
    train on one; unchanged for a suite of several datasets (all its runs then share the Kinetics-like data)."""
    datas = [compose([f"recipe={run.recipe}", *run.overrides], count_shape_costs=False).data for run in suite.runs]
    names = {data.name for data in datas}
    scaled = scale.for_dataset(names.pop()) if len(names) == 1 else scale
    return scaled.long_enough_for(datas)


def resolve_suite(suite: SuiteDef, scale: Scale, user_overrides: list[str], data_root: str | None = None,
                  cache: str | None = None, pretrained: str | None = None) -> list[ResolvedRun]:
    """Every run of `suite` at `scale` as a full override list and its validated spec. `pretrained` is the
    model.pretrained of the runs that require one and are given none (the scale's weights pre-trained on its
    synthetic frames); the other runs' settings, hence their run ids, do not change with it."""
    resolved: dict[str, ResolvedRun] = {}

    def resolve(run: RunDef) -> ResolvedRun:
        if run.variant in resolved:
            return resolved[run.variant]
        base = [f"recipe={run.recipe}", *run.overrides]
        scaled = scale_overrides(compose(base, count_shape_costs=False), scale, data_root, cache)
        tags = [f"suite={suite.name}", f"variant={run.variant}"]
        overrides = [*base, *scaled, *user_overrides, *tags]
        spec = compose(overrides)
        if pretrained and "model.pretrained" in run.requires and not spec.model.pretrained:
            overrides = [*base, *scaled, f"model.pretrained={pretrained}", *user_overrides, *tags]
            spec = compose(overrides)
        missing = [k for k in run.requires if _get(spec, k) in (None, "")]
        if missing:
            result = ResolvedRun(run, tuple(_each_key_once(overrides)), None, f"needs {', '.join(missing)} (not set)")
        else:
            if run.match_iterations_of:
                target = resolve(suite.run(run.match_iterations_of))
                if target.spec is not None:
                    factor = matching_epoch_factor(spec, build_plan(target.spec).iterations)
                    overrides = [*overrides[:-2], f"{_epoch_key(spec)}={factor!r}", *tags]
                    spec = compose(overrides)
            result = ResolvedRun(run, tuple(_each_key_once(overrides)), spec)
        resolved[run.variant] = result
        return result

    return [resolve(run) for run in suite.runs]


def _each_key_once(overrides: list[str]) -> list[str]:
    """`overrides` with only the last setting of each key, where it stands: what compose makes of them, in the form
    `harness train` takes (it refuses a key given twice), e.g. the user's solver.batch_size over the scale's."""
    last = {override.split("=", 1)[0].lstrip("+~"): i for i, override in enumerate(overrides)}
    return [o for i, o in enumerate(overrides) if last[o.split("=", 1)[0].lstrip("+~")] == i]


def _get(spec: RunSpec, dotted: str) -> Any:
    value: Any = spec
    for part in dotted.split("."):
        value = getattr(value, part)
    return value
