"""`harness profile`: what multigrid buys on this hardware, before spending days on a run.

Measures the training-step time of every shape the plan (and its baseline) trains at, on
random clips at the planned per-GPU batch (no data needed), then predicts each run's
wall-clock as Σ iterations × step time. Assumes the loader keeps up and data-parallel
scaling is perfect across `num_gpus` (each GPU runs the planned per-GPU batch), so it is a
prediction of the compute, not of the input pipeline. Given the loader's clips/s per shape
(`harness profile --data`, harness.measure.loader_bound), it also predicts each run with
every iteration taking max(step time, load time), beside the compute-only figure. Every timed shape carries its
FLOPs utilisation (`mfu`, harness.measure.mfu): training FLOP/s and its shares of the card's peak and matmul rate.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from dataclasses import dataclass

import torch

from harness.device import pick_device, use_bf16, use_channels_last
from harness.measure.loader_bound import LoaderRates, loader_bound_seconds, loader_bound_shapes, require_rates
from harness.measure.mfu import FLOP_CONVENTION, card_name, gpu_matmul_tflops, mfu_fields, peak_tflops
from harness.measure.step_bench import StepTime, time_training_step
from harness.models import build_model, multigrid_bns
from harness.models.bn import require_bn_kernels_device, set_bn_impls
from harness.models.check import require_planned_frames
from harness.models.flops import count_flops
from harness.schedule import Plan, baseline_spec, build_plan
from harness.schedule.trained import ShapeKey, iterations_by_shape
from harness.spec import RunSpec


@dataclass(frozen=True)
class Profile:
    spec: RunSpec
    device: str
    step_times: dict[ShapeKey, StepTime]
    predicted_s: float
    baseline_predicted_s: float
    step: str = "eager"  # how the steps ran (harness.train.step)
    loader: LoaderRates | None = None  # the loader's clips/s, for the loader-bound prediction

    @property
    def speedup(self) -> float:
        return self.baseline_predicted_s / self.predicted_s


def profile_plan(spec: RunSpec, *, device: str | None = None, bf16: bool | None = None,
                 channels_last: bool | None = None, step: str = "eager", warmup: int = 3, repeats: int = 10,
                 progress=None, loader: LoaderRates | None = None, plain_bn: bool = False) -> Profile:
    """Time every planned shape of `spec` and of its baseline; predict both runs' wall-clock. Sub-batch BN runs
    as `spec.train.sub_batch_bn` says; with `plain_bn` every sub-batch shape is also timed with plain BN."""
    dev = pick_device(device)
    require_bn_kernels_device(spec.train.sub_batch_bn, spec.train.plain_bn_impl, dev)
    bf16 = use_bf16(dev) if bf16 is None else bf16
    channels_last = use_channels_last(dev) if channels_last is None else channels_last
    plan, baseline = build_plan(spec), build_plan(baseline_spec(spec))
    require_planned_frames(plan)
    keys = set(iterations_by_shape(plan)) | set(iterations_by_shape(baseline))
    require_rates(loader, keys)
    times = measure_shapes(spec, keys, device=dev, bf16=bf16, channels_last=channels_last, step=step,
                           warmup=warmup, repeats=repeats, progress=progress, plain_bn=plain_bn)
    predicted, base_predicted = predicted_seconds(plan, times), predicted_seconds(baseline, times)
    return Profile(spec, str(dev), times, predicted, base_predicted, step, loader)


def profile_summary(profile: Profile) -> dict:
    """JSON-ready summary: per-shape step times and the predicted runs."""
    plan = build_plan(profile.spec)
    counts = iterations_by_shape(plan)
    base_counts = iterations_by_shape(build_plan(baseline_spec(profile.spec)))
    rows = []
    for key, st in profile.step_times.items():
        rows.append({**st.to_dict(), "iterations": counts.get(key, 0), "baseline_iterations": base_counts.get(key, 0)})
    summary = {
        "recipe": profile.spec.recipe,
        "kind": plan.kind,
        "device": profile.device,
        "step": profile.step,
        "model": profile.spec.model.label,
        "shapes": rows,
        "predicted_hours": profile.predicted_s / 3600,
        "baseline_predicted_hours": profile.baseline_predicted_s / 3600,
        "predicted_speedup": profile.speedup,
        "iteration_ratio": plan.iteration_ratio,
        "assumptions": "per-GPU step time × planned iterations; loader keeps up; perfect data-parallel scaling; "
                       f"shapes' mfu: {FLOP_CONVENTION}",
    }
    if profile.loader is not None:
        step_ms = {k: st.median_ms for k, st in profile.step_times.items()}
        baseline = build_plan(baseline_spec(profile.spec))
        mine, theirs = loader_bound_seconds(plan, step_ms, profile.loader), \
            loader_bound_seconds(baseline, step_ms, profile.loader)
        summary["loader_bound"] = {
            "loader": profile.loader.to_dict(), "predicted_hours": mine / 3600,
            "baseline_predicted_hours": theirs / 3600, "predicted_speedup": theirs / mine,
            "shapes": loader_bound_shapes(plan, step_ms, profile.loader),
            "assumptions": "each iteration takes max(step time, per-GPU batch / loader clips/s)"}
    return summary


def measure_shapes(spec: RunSpec, keys: set[ShapeKey], *, device: torch.device, bf16: bool, channels_last: bool,
                   warmup: int, repeats: int, step: str = "eager", progress=None,
                   plain_bn: bool = False) -> dict[ShapeKey, StepTime]:
    """Step time of `spec`'s model at every (t, s, per-GPU batch, BN splits) in `keys`, sub-batch BN computed as
    `spec.train.sub_batch_bn` says, with its FLOPs utilisation (`StepTime.mfu`); with `plain_bn`, shapes with
    sub-batch BN also with plain BN (`StepTime.plain_bn_ms`)."""
    torch.manual_seed(0)
    # Timed with random weights: a run's pre-trained ones (model.pretrained) change no step's time.
    model = build_model(dataclasses.replace(spec.model, pretrained=None), spec.data.num_classes).to(device)
    if channels_last:
        model = model.to(memory_format=torch.channels_last_3d)
    model.train()
    set_bn_impls(multigrid_bns(model), spec.train)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-6, momentum=0.9)

    timing = dict(device=device, bf16=bf16, channels_last=channels_last, step=step, warmup=warmup, repeats=repeats)
    peak, matmul = peak_tflops(card_name(device)), gpu_matmul_tflops(device) if keys else None
    gmacs = {(t, s): count_flops(model, t, s).gflops for t, s in {key[:2] for key in keys}}
    times = {}
    for key in sorted(keys):
        if plain_bn and key[3] > 1:
            st = _timed_against_plain_bn(model, optimizer, key, **timing)
        else:
            st = _timed_step(model, optimizer, key, **timing)
        times[key] = dataclasses.replace(st, mfu=mfu_fields(gmacs[key[:2]], st.clips_per_s, peak, matmul))
        if progress is not None:
            progress.update(1)
    del model, optimizer
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return times


def _timed_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer, key: ShapeKey, *, device: torch.device,
                **timing) -> StepTime:
    """The step time at `key` (t, s, batch, BN splits), NaN where it runs out of GPU memory."""
    t, s, batch, splits = key
    try:
        return time_training_step(model, optimizer, t, s, batch, splits, device, **timing)
    except torch.OutOfMemoryError:
        torch.cuda.empty_cache()
        return StepTime(t, s, batch, splits, float("nan"), float("nan"), float("nan"))


# Turns in which a sub-batch shape and the same shape with plain BN are timed one after the other: eager steps of small
# shapes are host-bound, and the host's pace drifts over a measurement; taken in turns, the drift falls on both.
PLAIN_BN_TURNS = 3


def _timed_against_plain_bn(model: torch.nn.Module, optimizer: torch.optim.Optimizer, key: ShapeKey, *,
                            repeats: int, **timing) -> StepTime:
    """The step time at `key` with sub-batch BN and, as `plain_bn_ms`, with plain BN: each timed in PLAIN_BN_TURNS
    alternating turns of repeats / PLAIN_BN_TURNS steps (each turn after its warm-up), each the median of its
    turns' medians."""
    t, s, batch, _ = key
    per_turn = max(1, math.ceil(repeats / PLAIN_BN_TURNS))
    ours, plain = [], []
    for _ in range(PLAIN_BN_TURNS):
        ours.append(_timed_step(model, optimizer, key, repeats=per_turn, **timing))
        plain.append(_timed_step(model, optimizer, (t, s, batch, 1), repeats=per_turn, **timing).median_ms)
    ms = statistics.median(turn.median_ms for turn in ours)
    return dataclasses.replace(ours[0], median_ms=ms, clips_per_s=batch / ms * 1e3,
                               peak_mem_gib=max(turn.peak_mem_gib for turn in ours),
                               plain_bn_ms=statistics.median(plain))


def predicted_seconds(plan: Plan, times: dict[ShapeKey, StepTime]) -> float:
    return sum(n * times[k].median_ms / 1e3 for k, n in iterations_by_shape(plan).items())


TIMED_WITHOUT_WEIGHTS = "<pre-trained weights not loaded for timing>"


def profile_suite(suite_name: str, scale_name: str = "paper", *, device: str | None = None, warmup: int = 3,
                  repeats: int = 10, step: str = "eager", progress_factory=None, timings: dict | None = None,
                  loader: LoaderRates | None = None, sub_batch_bn: str = "auto", plain_bn: bool = False) -> dict:
    """Predicted wall-clock and speedup over its 1.0× baseline of every run of a suite, on this hardware.

    Shapes are timed once per model (the union over the suite's runs and their baselines). With `loader`, each
    run also gets the loader-bound prediction (every iteration max(step, load); `loader_bound_*` keys). Sub-batch
    BN runs as `sub_batch_bn` says (harness.spec.SUB_BATCH_BN); with `plain_bn` its shapes are also timed with plain
    BN.
    """
    from harness.suite import load_scale, load_suite, paper_rows, resolve_suite

    dev = pick_device(device)
    require_bn_kernels_device(sub_batch_bn, "cudnn", dev)
    suite = load_suite(suite_name)
    # Runs that start from pre-trained weights are timed too (with random ones: measure_shapes), so they are
    # resolved as if the weights were given.
    runs = [r for r in resolve_suite(suite, load_scale(scale_name), [f"train.sub_batch_bn={sub_batch_bn}"],
                                     data_root="/nonexistent", pretrained=TIMED_WITHOUT_WEIGHTS) if r.spec]
    plans = {r.run.variant: (build_plan(r.spec), build_plan(baseline_spec(r.spec))) for r in runs}
    by_model: dict[tuple, tuple[RunSpec, set[ShapeKey]]] = {}
    for r in runs:
        require_planned_frames(plans[r.run.variant][0])
        model_key = (r.spec.model.label, r.spec.model.width, r.spec.data.num_classes)
        keys = by_model.setdefault(model_key, (r.spec, set()))[1]
        for plan in plans[r.run.variant]:
            keys |= set(iterations_by_shape(plan))
    require_rates(loader, (key for _, keys in by_model.values() for key in keys))
    # `timings` carries step times across suites of one process: a shape is timed once per model.
    times: dict[tuple, dict[ShapeKey, StepTime]] = timings if timings is not None else {}
    for model_key, (spec, keys) in by_model.items():
        known = times.setdefault(model_key, {})
        todo = keys - set(known)
        bar = progress_factory(len(todo), model_key[0]) if progress_factory and todo else None
        known.update(measure_shapes(spec, todo, device=dev, bf16=use_bf16(dev), channels_last=use_channels_last(dev),
                                    warmup=warmup, repeats=repeats, step=step, progress=bar, plain_bn=plain_bn))
        if bar is not None:
            bar.close()
    paper = {(row["table"], row["row"]): row for row in paper_rows()}
    rows = []
    for r in runs:
        model_key = (r.spec.model.label, r.spec.model.width, r.spec.data.num_classes)
        plan, base = plans[r.run.variant]
        mine, theirs = predicted_seconds(plan, times[model_key]), predicted_seconds(base, times[model_key])
        rows.append({
            "variant": r.run.variant, "recipe": r.run.recipe, "model": r.spec.model.label, "kind": plan.kind,
            "iterations": plan.iterations, "baseline_iterations": base.iterations,
            "iteration_ratio": plan.iteration_ratio, "predicted_gpu_hours": mine / 3600,
            "baseline_predicted_gpu_hours": theirs / 3600, "predicted_speedup": theirs / mine,
            "paper": [{"table": t, "row": row, "speedup": paper[(t, row)]["speedup"]} for t, row in r.run.paper],
        })
        if loader is not None:
            step_ms = {k: st.median_ms for k, st in times[model_key].items()}
            mine, theirs = loader_bound_seconds(plan, step_ms, loader), loader_bound_seconds(base, step_ms, loader)
            rows[-1].update({"loader_bound_gpu_hours": mine / 3600, "baseline_loader_bound_gpu_hours": theirs / 3600,
                             "loader_bound_speedup": theirs / mine})
    shapes = [{"model": k[0], **st.to_dict()} for k, (_, keys) in by_model.items() for st in
              (times[k][key] for key in sorted(keys))]
    record = {"suite": suite_name, "scale": scale_name, "device": str(dev), "step": step, "sub_batch_bn": sub_batch_bn,
              "runs": rows, "shapes": shapes,
              "assumptions": "per-GPU step time × planned iterations per GPU; the loader keeps up; perfect "
                             "data-parallel scaling over the recipe's GPUs (BN sync across GPUs is not timed); "
                             f"shapes' mfu: {FLOP_CONVENTION}"}
    if loader is not None:
        record["loader"] = {**loader.to_dict(), "assumptions": "loader_bound_*: each iteration takes max(step time, "
                                                               "per-GPU batch / loader clips/s)"}
    return record
