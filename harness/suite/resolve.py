"""A suite's runs at a scale, resolved: each run's full override list and validated spec, its iterations matched
to another run's where the suite asks (match_iterations_of). Pure; harness.reproduce runs them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.config import compose
from harness.schedule import build_plan
from harness.spec import RunSpec, SpecError
from harness.suite.definition import RunDef, SuiteDef
from harness.suite.scales import Scale, scale_overrides


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
