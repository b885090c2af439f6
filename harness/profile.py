"""`harness profile`: what multigrid buys on this hardware, before spending days on a run.

Measures the training-step time of every shape the plan (and its baseline) trains at, on
random clips at the planned per-GPU batch (no data needed), then predicts each run's
wall-clock as Σ iterations × step time. Assumes the loader keeps up and data-parallel
scaling is perfect across `num_gpus` (each GPU runs the planned per-GPU batch), so it is a
prediction of the compute, not of the input pipeline.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import torch

from harness.models import build_model
from harness.models.bench import StepTime, time_training_step
from harness.models.check import require_planned_frames
from harness.schedule import Plan, baseline_spec, build_plan
from harness.schedule.iterations import cycle_counts
from harness.spec import RunSpec

ShapeKey = tuple[int, int, int, int]  # (t, s, per-GPU batch, BN splits)


@dataclass(frozen=True)
class Profile:
    spec: RunSpec
    device: str
    step_times: dict[ShapeKey, StepTime]
    predicted_s: float
    baseline_predicted_s: float

    @property
    def speedup(self) -> float:
        return self.baseline_predicted_s / self.predicted_s


def iterations_by_shape(plan: Plan) -> Counter[ShapeKey]:
    """How many iterations the plan trains at each (t, s, per-GPU batch, BN splits)."""
    counts: Counter[ShapeKey] = Counter()
    for phase in plan.phases:
        per_cycle = cycle_counts(plan.samples_per_rank, phase.per_gpu_batches)
        for shape, batch, n in zip(phase.cycle, phase.per_gpu_batches, per_cycle):
            counts[(shape.t, shape.s, batch, phase.bn_splits)] += n * phase.epochs
    return counts


def profile_plan(spec: RunSpec, *, device: str | None = None, bf16: bool | None = None,
                 channels_last: bool | None = None, warmup: int = 3, repeats: int = 10,
                 progress=None) -> Profile:
    """Time every planned shape of `spec` and of its baseline; predict both runs' wall-clock."""
    dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    on_gpu = dev.type == "cuda"
    bf16 = on_gpu if bf16 is None else bf16
    channels_last = on_gpu if channels_last is None else channels_last
    plan, baseline = build_plan(spec), build_plan(baseline_spec(spec))
    require_planned_frames(plan)
    counts, base_counts = iterations_by_shape(plan), iterations_by_shape(baseline)
    model = build_model(spec.model, spec.data.num_classes).to(dev)
    if channels_last:
        model = model.to(memory_format=torch.channels_last_3d)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-6, momentum=0.9)
    times: dict[ShapeKey, StepTime] = {}
    for key in sorted(set(counts) | set(base_counts)):
        t, s, batch, splits = key
        times[key] = time_training_step(model, optimizer, t, s, batch, splits, dev, bf16=bf16,
                                        channels_last=channels_last, warmup=warmup, repeats=repeats)
        if progress is not None:
            progress.update(1)
    predicted = sum(n * times[k].median_ms / 1e3 for k, n in counts.items())
    base_predicted = sum(n * times[k].median_ms / 1e3 for k, n in base_counts.items())
    return Profile(spec, str(dev), times, predicted, base_predicted)


def profile_summary(profile: Profile) -> dict:
    """JSON-ready summary: per-shape step times and the predicted runs."""
    plan = build_plan(profile.spec)
    counts = iterations_by_shape(plan)
    base_counts = iterations_by_shape(build_plan(baseline_spec(profile.spec)))
    rows = []
    for key, st in profile.step_times.items():
        rows.append({**st.to_dict(), "iterations": counts.get(key, 0), "baseline_iterations": base_counts.get(key, 0)})
    return {
        "recipe": profile.spec.recipe,
        "kind": plan.kind,
        "device": profile.device,
        "model": profile.spec.model.name,
        "shapes": rows,
        "predicted_hours": profile.predicted_s / 3600,
        "baseline_predicted_hours": profile.baseline_predicted_s / 3600,
        "predicted_speedup": profile.speedup,
        "iteration_ratio": plan.iteration_ratio,
        "assumptions": "per-GPU step time × planned iterations; loader keeps up; perfect data-parallel scaling",
    }
