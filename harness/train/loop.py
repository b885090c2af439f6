"""The shared trainer: baseline and multigrid runs go through the same loop.

Every iteration asks the Plan for its shape, per-GPU batch, LR and BN layout; a phase
change rebuilds nothing (the reference rebuilds the model and reloads a checkpoint: PySlowFast tools/train_net.py).
The loop reads top to bottom: set up, maybe resume, then for each batch: LR and BN layout
from the Plan, forward, backward, step, measure, checkpoint; evaluate; write the record.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader
from tqdm import tqdm

from harness.data.check import min_clip_frames
from harness.data.clip_dataset import BadVideoLog, VideoClipDataset, collate_clips, collate_eval
from harness.data.errors import DataError
from harness.data.sampler import ShortCycleBatchSampler, check_num_classes
from harness.data.transforms import normalize
from harness.data.worker_memory import loader_worker_init
from harness.device import memory_format_for, sync_device, use_bf16, use_channels_last
from harness.io import require_writable_dir
from harness.models import build_model, is_paper_model, multigrid_bns, set_bn_layout
from harness.models.bn import require_bn_kernels_device, set_bn_impls
from harness.models.check import require_bn_statistics, require_planned_frames
from harness.models.flops import count_flops
from harness.records import RunRecord
from harness.results import output_dir_lock, record_path, require_output_dir, run_id, write_record
from harness.schedule import Plan, build_plan, iteration
from harness.schedule.summary import plan_summary
from harness.schedule.trained import planned_clip_sizes
from harness.spec import GRAPHED_STEP_MODES, RunSpec, SpecError
from harness.train import checkpoint as ckpt
from harness.train.choice_evidence import card_evidence, run_shapes
from harness.train.choose import Choice, choose
from harness.train.distributed import DistInfo, cleanup, data_parallel, init_distributed
from harness.train.evaluate import evaluate
from harness.train.meter import RunMeter
from harness.train.step import NonFiniteLoss, make_step, require_step_device, train_iteration

log = logging.getLogger("harness.train")


class TrainingDiverged(RuntimeError):
    """The loss became NaN or infinite; the last good checkpoint is kept."""


@dataclass
class TrainState:
    """What a checkpoint must restore besides the model and optimizer."""

    iteration: int = 0  # the next global iteration to run
    meter: RunMeter = field(default_factory=RunMeter)
    evals: list[dict[str, Any]] = field(default_factory=list)
    shape_checks: int = 0  # iterations at which all ranks confirmed the same shape
    losses: list[float] = field(default_factory=list)  # mean loss of each finished epoch
    epoch_loss: list[float] = field(default_factory=lambda: [0.0, 0.0])  # (sum, count) of the epoch in progress


def _param_groups(model: nn.Module, weight_decay: float) -> list[dict[str, Any]]:
    """No weight decay on BN parameters (the reference's BN.WEIGHT_DECAY = 0)."""
    bn_params, other = [], []
    for module in model.modules():
        target = bn_params if isinstance(module, nn.modules.batchnorm._BatchNorm) else other
        target.extend(p for p in module.parameters(recurse=False) if p.requires_grad)
    return [{"params": other, "weight_decay": weight_decay}, {"params": bn_params, "weight_decay": 0.0}]


def _eval_options(spec: RunSpec) -> dict[str, int]:
    t = spec.train
    return {k: v for k, v in (("eval_clips", t.eval_clips), ("eval_crops", t.eval_crops)) if v is not None}


def _require_a_readable_video(val_set: VideoClipDataset) -> None:
    """DataError before training where not one validation video can be read: the run would train to the end and
    then fail at its evaluation. Reads the first view of videos in turn until one is read (one, normally)."""
    views, failures = val_set.sampling.eval_clips, []
    for video in range(len(val_set.records)):
        item = val_set[video * views]
        if item["valid"]:
            return
        failures += item["failures"]
    if failures:
        path, reason = failures[0]
        raise DataError(f"None of the {len(val_set.records)} validation videos could be read (e.g. {path}: "
                        f"{reason}), so the run could not be scored. Run 'harness data check' on the dataset.")


def _datasets(spec: RunSpec, min_frames: int) -> tuple[VideoClipDataset, VideoClipDataset]:
    # Videos shorter than `min_frames` are unusable in both splits, as `harness data check` says of them: training
    # replaces them, evaluation leaves them unscored (videos_scored), both count them in the record's bad_videos.
    train_set = VideoClipDataset.from_spec(spec, "train", min_frames=min_frames)
    val_set = VideoClipDataset.from_spec(spec, "val", min_frames=min_frames, **_eval_options(spec))
    check_num_classes(spec, train_set.num_classes, spec.data.root)
    return train_set, val_set


def _clip_gflops(model: nn.Module, plan: Plan) -> dict[tuple[int, int], float]:
    """fvcore forward GFLOPs of one clip at every planned (t, s), counted once per shape."""
    return {(t, s): count_flops(model, t, s).gflops for t, s in planned_clip_sizes(plan)}


def _checkpoint_payload(model: nn.Module, optimizer: torch.optim.Optimizer, state: TrainState, spec: RunSpec,
                        bad: BadVideoLog) -> dict[str, Any]:
    return {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "iteration": state.iteration,
            "meter": state.meter.to_dict(), "evals": state.evals, "shape_checks": state.shape_checks,
            "losses": state.losses, "epoch_loss": state.epoch_loss,
            "bad_videos": {"files": bad.files, "failed_reads": bad.failed_reads},
            "rng": ckpt.rng_state(), "run_id": run_id(spec)}


def _restore(path: Path, payload: dict[str, Any], model: nn.Module, optimizer: torch.optim.Optimizer,
             spec: RunSpec, bad: BadVideoLog) -> TrainState:
    """Load `payload` (checkpoint `path`, loaded by ckpt.load_newest) into the model, optimizer and RNGs."""
    if payload["run_id"] != run_id(spec):
        raise SpecError(f"{path} belongs to another run (id {payload['run_id']}, this one {run_id(spec)}): the "
                        f"settings changed. Use a new output_dir, or resume=false to start afresh (the earlier "
                        f"run's checkpoints are then moved into superseded/).")
    model.load_state_dict(payload["model"])
    optimizer.load_state_dict(payload["optimizer"])
    ckpt.set_rng_state(payload["rng"])
    bad.files, bad.failed_reads = dict(payload["bad_videos"]["files"]), payload["bad_videos"]["failed_reads"]
    return TrainState(payload["iteration"], RunMeter.from_dict(payload["meter"]), payload["evals"],
                      payload["shape_checks"], payload["losses"], payload["epoch_loss"])


def _private_generator() -> torch.Generator:
    """For DataLoaders: each new loader iterator draws a seed from its generator, and from the global RNG
    without one, which would shift dropout's random stream whenever a run resumes mid-epoch. Our clips take
    their randomness from the sampler's keys, so this seed changes nothing else."""
    return torch.Generator().manual_seed(0)


def _run_loader(dataset: Any, workers: int, **options: Any) -> DataLoader:
    """A DataLoader of this run with `workers` processes: its own generator (_private_generator), and workers
    that keep the memory they free (harness.data.worker_memory)."""
    return DataLoader(dataset, num_workers=workers, generator=_private_generator(), worker_init_fn=loader_worker_init,
                      **options)


def _loss_fn(multilabel: bool):
    return nn.functional.binary_cross_entropy_with_logits if multilabel else nn.functional.cross_entropy


def train(spec: RunSpec, results: Path | None = None) -> dict[str, Any]:
    """Train `spec` from its Plan (resuming if asked); return the RunRecord, also written to output_dir
    and, for a suite run, to `results` (default: results/ of this checkout)."""
    if not spec.output_dir:
        raise SpecError("Set output_dir=DIR: checkpoints and record.json are written there.")
    started = time.perf_counter()
    info = init_distributed(spec.train.device)
    out = Path(spec.output_dir)
    try:
        with contextlib.ExitStack() as held:
            if info.is_main:  # before any work: an unwritable folder would otherwise fail at the first checkpoint
                require_output_dir(out)
                if spec.suite:  # or, for the suite's copy of the record, after the whole run
                    require_writable_dir(record_path(spec, results).parent, "HARNESS_RESULTS_DIR")
                held.enter_context(output_dir_lock(out))  # one run at a time writes in the folder
            return _train(spec, info, results, started)
    finally:
        cleanup(info)


def _train(spec: RunSpec, info: DistInfo, results: Path | None, started: float) -> dict[str, Any]:
    out = Path(spec.output_dir)
    # This attempt's wall-clock outside the timed steps (a run's speedup counts the steps only; this says what
    # else a run costs): start-up to the first batch request, checkpoint writes, precise-BN passes.
    outside = {"setup_s": 0.0, "checkpoint_s": 0.0, "precise_bn_s": 0.0}
    plan = build_plan(spec)
    choice = _choose_paths(spec, plan, info.device)
    step_mode, train_spec = choice.step, dataclasses.replace(spec.train, sub_batch_bn=choice.sub_batch_bn)
    require_step_device(step_mode, info.device)
    require_bn_kernels_device(train_spec.sub_batch_bn, train_spec.plain_bn_impl, info.device)
    require_planned_frames(plan)
    require_bn_statistics(plan)
    if info.world_size != spec.num_gpus:
        raise SpecError(f"The plan splits every batch over num_gpus={spec.num_gpus} processes, but "
                        f"{info.world_size} are running. Set num_gpus={info.world_size} (and solver.batch_size "
                        f"to keep the per-GPU batch).")
    on_gpu = info.device.type == "cuda"
    bf16 = use_bf16(info.device, spec.train.precision)
    channels_last = use_channels_last(info.device, spec.train.channels_last)
    memory_format = memory_format_for(channels_last)
    autocast = (torch.autocast(info.device.type, dtype=torch.bfloat16) if bf16 else contextlib.nullcontext())

    train_set, val_set = _datasets(spec, min_clip_frames(plan))
    _require_a_readable_video(val_set)
    multilabel = train_set.annotations.multilabel
    found = ckpt.load_newest(out / "checkpoints", log if info.is_main else None) if spec.resume else None
    torch.manual_seed(spec.seed)  # the same initial weights on every rank and every attempt
    # A resumed run takes every weight from its checkpoint: model.pretrained is not read again (it may be gone).
    model_spec = dataclasses.replace(spec.model, pretrained=None) if found is not None else spec.model
    model = build_model(model_spec, spec.data.num_classes).to(info.device, memory_format=memory_format)
    gflops = _clip_gflops(model, plan)  # before any RNG state is restored: it draws random clips
    bns = multigrid_bns(model)
    set_bn_impls(bns, train_spec)
    optimizer = torch.optim.SGD(_param_groups(model, spec.solver.weight_decay), lr=spec.solver.base_lr,
                                momentum=spec.solver.momentum, nesterov=spec.train.nesterov)
    bad = BadVideoLog(log)
    state = TrainState()
    if not spec.resume and info.is_main and (aside := ckpt.supersede_earlier_run(out)) is not None:
        # So that a resume of this run can only continue this run (checkpoint.supersede_earlier_run says why).
        log.warning("resume=false: starting afresh; the checkpoints (and record.json) of the earlier run in %s "
                    "were moved to %s", out, aside)
    if found is not None:
        latest, payload = found
        state = _restore(latest, payload, model, optimizer, spec, bad)
        if info.is_main:
            log.info("resuming from %s (iteration %d of %d)", latest, state.iteration, plan.iterations)
    elif spec.resume and info.is_main:
        log.info("resume=true, but %s holds no checkpoint: starting from scratch", out / "checkpoints")
    resumed_from = state.iteration  # 0 for a fresh run
    net = data_parallel(model, info, for_graphs=step_mode in GRAPHED_STEP_MODES)
    step = make_step(step_mode, net, optimizer, _loss_fn(multilabel), bf16, info.device,
                     shapes=len(planned_clip_sizes(plan)))

    def prepare(clips: torch.Tensor) -> torch.Tensor:
        # uint8 clips from the loader's workers
        return normalize(clips.to(info.device, non_blocking=True)).contiguous(memory_format=memory_format)

    first = iteration(plan, min(state.iteration, plan.iterations - 1))
    sampler = ShortCycleBatchSampler(plan, len(train_set), rank=info.rank, world_size=info.world_size,
                                     epoch=first.epoch, start_iteration=state.iteration, to_end=True)
    workers = spec.train.num_workers
    batches = _run_loader(train_set, workers, batch_sampler=sampler, collate_fn=collate_clips,
                          pin_memory=on_gpu, persistent_workers=workers > 0)
    layout = (0, 0)
    bar = tqdm(total=plan.iterations, initial=state.iteration, unit="it", disable=not info.is_main,
               desc=f"{spec.model.label} {plan.kind}", dynamic_ncols=True)
    try:
        data_start = time.perf_counter()
        outside["setup_s"] = data_start - started
        for batch in batches:  # one pass to the end of the run: the workers prefetch across epochs
            it = iteration(plan, state.iteration)
            epoch = it.epoch
            data_s = time.perf_counter() - data_start
            bad.update(batch["failures"])
            if (it.bn_splits, it.bn_sync) != layout:
                layout = (it.bn_splits, it.bn_sync)
                set_bn_layout(bns, *layout)
                if on_gpu:
                    torch.cuda.reset_peak_memory_stats(info.device)
            clips, labels = prepare(batch["clips"]), batch["labels"].to(info.device, non_blocking=True)
            try:  # timed to completion: it ends with a device sync
                loss_value = train_iteration(step, clips, labels, (it.t, it.s, len(clips), *layout), it.lr, info)
            except NonFiniteLoss as err:
                raise TrainingDiverged(
                    f"{err} at iteration {it.index} (epoch {it.epoch}, phase {it.phase}, "
                    f"{it.t}×{it.s}², LR {it.lr:.4g}). The last good checkpoint is kept in "
                    f"{out / 'checkpoints'}; lower solver.base_lr or check the data.") from None
            compute_s = time.perf_counter() - data_start - data_s
            clips_all = len(clips) * info.world_size
            state.meter.add(it.phase, data_s, compute_s, clips_all, clips_all * gflops[(it.t, it.s)])
            state.meter.note_layout(it.phase, len(clips), *layout)
            if on_gpu:
                state.meter.note_memory(it.phase, torch.cuda.max_memory_allocated(info.device) / 2**30)
            state.shape_checks += int(info.distributed)
            state.iteration += 1
            state.epoch_loss[0] += loss_value
            state.epoch_loss[1] += 1
            bar.update(1)
            if state.iteration % spec.train.log_every == 0 or it.step_in_epoch == 0:  # and as each epoch starts
                bar.set_postfix(epoch=it.epoch, loss=f"{loss_value:.3f}", lr=f"{it.lr:.3g}",
                                **phase_shapes(plan, it.phase))
            last_of_epoch = it.step_in_epoch == plan.phases[it.phase].iterations_per_epoch - 1
            if last_of_epoch:
                state.losses.append(state.epoch_loss[0] / state.epoch_loss[1])
                state.epoch_loss = [0.0, 0.0]
                every = spec.train.eval_every
                if every and (epoch + 1) % every == 0 and state.iteration < plan.iterations:
                    if spec.train.precise_bn:
                        outside["precise_bn_s"] += _precise_bn(spec, plan, net, train_set, prepare, autocast, info)
                    state.evals.append(_evaluate(spec, net, val_set, multilabel, prepare, autocast, info,
                                                 state, epoch + 1, bad))
                    set_bn_layout(bns, *layout)
            due = spec.train.checkpoint_every and state.iteration % spec.train.checkpoint_every == 0
            if info.is_main and (due or (last_of_epoch and not spec.train.checkpoint_every)):
                saving = time.perf_counter()
                ckpt.save_checkpoint(out / "checkpoints", state.iteration,
                                     _checkpoint_payload(model, optimizer, state, spec, bad),
                                     spec.train.keep_checkpoints)
                outside["checkpoint_s"] += time.perf_counter() - saving
            data_start = time.perf_counter()
    finally:
        bar.close()
        step.release()  # graphs holding NCCL collectives must be gone before the process group (also on errors)
    if spec.train.precise_bn:
        outside["precise_bn_s"] += _precise_bn(spec, plan, net, train_set, prepare, autocast, info)
    final = _evaluate(spec, net, val_set, multilabel, prepare, autocast, info, state, plan.max_epoch, bad)
    if spec.train.train_eval_videos:
        final.update(_train_scores(spec, net, multilabel, prepare, autocast, info, state, bad, train_set.min_frames))
    state.evals.append(final)
    compile_cost = step.compile_cost
    attempt = {
        # Capture/compile time of this attempt (a resumed run captures again); already inside the phases' compute.
        "step": {"mode": step.mode, "setup_s": step.setup_s, "specialisations": step.specialisations,
                 **({"compile": compile_cost} if compile_cost is not None else {}),
                 **({"choice": choice.to_dict()} if "auto" in (spec.train.step, spec.train.sub_batch_bn) else {})},
        "outside_steps": {**outside, "total_s": time.perf_counter() - started},
        # Where this attempt began: a resumed run's train time also holds earlier attempts' steps (checkpointed
        # meter).
        "resumed_from_iteration": resumed_from}
    record = _record(spec, plan, state, final, bad, info, bf16, channels_last, gflops, attempt).to_dict()
    if info.is_main:
        write_record(record, out, spec, results)
    return record


def phase_shapes(plan: Plan, index: int) -> dict[str, str]:
    """The shapes (per-GPU clips × frames × size²) phase `index` trains at, for the progress bar: its long-cycle base
    shape and, where the short cycle is on, the other shapes it alternates with every iteration."""
    phase = plan.phases[index]
    base_batch = phase.base.batch_mult * plan.spec.solver.batch_size // plan.spec.num_gpus
    shapes = {"shape": f"{base_batch}×{phase.base.t}×{phase.base.s}²"}
    others = [f"{b}×{c.t}×{c.s}²" for c, b in zip(phase.cycle, phase.per_gpu_batches)
              if (c.t, c.s) != (phase.base.t, phase.base.s)]
    if phase.short_cycle and others:
        shapes["short_cycle"] = ", ".join(others)
    return shapes


def _choose_paths(spec: RunSpec, plan: Plan, device: torch.device) -> Choice:
    """The step mode and sub-batch BN that `auto` picks for this run here (harness.train.choose)."""
    card = torch.cuda.get_device_name(device) if device.type == "cuda" else None
    evidence = card_evidence(card) if card else None
    return choose(spec.train.step, spec.train.sub_batch_bn, run_shapes(plan, spec.model.label, spec.num_gpus), card,
                  evidence)


@torch.no_grad()
def _precise_bn(spec: RunSpec, plan: Plan, net: nn.Module, train_set: VideoClipDataset, prepare, autocast,
                info: DistInfo) -> float:
    """Recompute BN statistics as a true average over `train.precise_bn` batches at the test shape; return the
    seconds it took."""
    start = time.perf_counter()
    bns = multigrid_bns(net)
    fine = plan.phases[-1]
    set_bn_layout(bns, fine.bn_splits, fine.bn_sync)
    saved = [bn.momentum for bn in bns]
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None  # cumulative moving average: every batch weighs the same
    batch = spec.solver.batch_size // spec.num_gpus
    generator = torch.Generator().manual_seed(spec.seed)
    order = torch.randperm(len(train_set), generator=generator)[: batch * spec.train.precise_bn].tolist()
    loader = _run_loader(torch.utils.data.Subset(train_set, order), min(spec.train.num_workers, 4),
                         batch_size=batch, drop_last=True, collate_fn=collate_clips)
    net.train()
    for item in loader:
        with autocast:
            net(prepare(item["clips"]))
    for bn, momentum in zip(bns, saved):
        bn.momentum = momentum
    sync_device(info.device)  # the queued forward passes belong to this time
    return time.perf_counter() - start


def _evaluate(spec: RunSpec, net: nn.Module, val_set: VideoClipDataset, multilabel: bool, prepare, autocast,
              info: DistInfo, state: TrainState, epoch: int, bad: BadVideoLog,
              videos: list[int] | None = None) -> dict[str, Any]:
    """Score every video of `val_set` (or the `videos` among them) with the evaluation views."""
    start = time.perf_counter()
    views = val_set.sampling.eval_clips
    chosen = range(len(val_set.records)) if videos is None else videos
    mine = [v * views + c for k, v in enumerate(chosen) if k % info.world_size == info.rank for c in range(views)]
    loader = _run_loader(torch.utils.data.Subset(val_set, mine), min(spec.train.num_workers, 4),
                         batch_size=spec.train.eval_batch_size, collate_fn=collate_eval)
    metrics = evaluate(net, loader, len(val_set.records), spec.data.num_classes, multilabel, prepare, autocast,
                       info.device, info.distributed, on_failures=bad.update)
    metrics["videos"] = len(chosen)
    state.meter.eval_s += time.perf_counter() - start
    if chosen and metrics["videos_scored"] == 0:  # else a NaN accuracy would be recorded as the run's result
        listed = {str(val_set.records[v].path) for v in chosen}
        example = next((f" (e.g. {p}: {r})" for p, r in bad.files.items() if p in listed), "")
        raise DataError(f"None of the {len(chosen)} videos evaluated could be read{example}. "
                        f"Run 'harness data check' on the dataset.")
    return {"epoch": epoch, "iteration": state.iteration, **metrics}


def _train_scores(spec: RunSpec, net: nn.Module, multilabel: bool, prepare, autocast, info: DistInfo,
                  state: TrainState, bad: BadVideoLog, min_frames: int) -> dict[str, Any]:
    """The final model scored on `train.train_eval_videos` training videos (evenly spaced through the list) with
    the evaluation views: beside the validation score it tells underfitting from memorising."""
    train_views = VideoClipDataset.from_spec(spec, "train", train=False, min_frames=min_frames, **_eval_options(spec))
    n = len(train_views.records)
    count = min(spec.train.train_eval_videos, n)
    picked = sorted({i * n // count for i in range(count)})
    scores = _evaluate(spec, net, train_views, multilabel, prepare, autocast, info, state, 0, bad, picked)
    return {f"train_{k}": v for k, v in scores.items() if k not in ("epoch", "iteration")}


def _record(spec: RunSpec, plan: Plan, state: TrainState, final: dict[str, Any], bad: BadVideoLog, info: DistInfo,
            bf16: bool, channels_last: bool, gflops: dict[tuple[int, int], float],
            attempt: dict[str, Any]) -> RunRecord:
    summary = plan_summary(plan)
    return RunRecord(
        run_id=run_id(spec),
        suite=spec.suite,
        recipe=spec.recipe,
        variant=spec.variant,
        status="complete",
        spec=spec.to_dict(),
        plan={**{k: summary[k] for k in ("model", "kind", "lr_steps", "lr_multipliers", "max_epoch", "iterations",
                                         "baseline_iterations", "iteration_ratio", "warmup_epochs")},
              "paper_model": is_paper_model(spec.model)},
        world_size=info.world_size,
        precision="bf16" if bf16 else "fp32",
        channels_last=channels_last,
        clip_gflops=[{"t": t, "s": s, "gflops": g} for (t, s), g in gflops.items()],
        measured=state.meter.summary(),
        shape_checks=state.shape_checks,
        epoch_losses=state.losses,
        evals=state.evals,
        final=final,
        bad_videos=bad.as_dict(),
        **attempt,
    )
