"""The shared trainer: baseline and multigrid runs go through the same loop.

Every iteration asks the Plan for its shape, per-GPU batch, LR and BN layout; a phase change rebuilds nothing (the
reference rebuilds the model and reloads a checkpoint: PySlowFast tools/train_net.py). `_train` reads top to bottom:
set up (maybe resuming), train each epoch and end it (evaluation, checkpoint), score the final model, write the record.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import logging
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader
from tqdm import tqdm

from harness.data.check import min_clip_frames
from harness.data.clip_dataset import BadVideoLog, VideoClipDataset
from harness.device import memory_format_for, use_bf16, use_channels_last
from harness.io import require_writable_dir
from harness.models import build_model, is_paper_model, multigrid_bns, set_bn_layout
from harness.models.bn import require_bn_kernels_device, set_bn_impls
from harness.models.check import require_bn_statistics, require_planned_frames
from harness.models.flops import count_flops
from harness.records import RunRecord
from harness.results import output_dir_lock, record_path, require_output_dir, run_id, write_record
from harness.schedule import Iteration, Plan, build_plan, iteration
from harness.schedule.summary import plan_summary
from harness.schedule.trained import planned_clip_sizes
from harness.spec import GRAPHED_STEP_MODES, RunSpec, SpecError
from harness.train import checkpoint as ckpt
from harness.train.choice_evidence import card_evidence, run_shapes
from harness.train.choose import Choice, choose
from harness.train.distributed import DistInfo, cleanup, data_parallel, init_distributed
from harness.train.loaders import datasets, device_clips, require_a_readable_video, train_loader
from harness.train.progress import progress_bar, show_iteration
from harness.train.scoring import Scoring, precise_bn, score_videos, train_scores
from harness.train.step import EagerStep, NonFiniteLoss, make_step, require_step_device, train_iteration
from harness.train.train_state import TrainState, checkpoint_payload, restore

log = logging.getLogger("harness.train")


class TrainingDiverged(RuntimeError):
    """The loss became NaN or infinite; the last good checkpoint is kept."""


@dataclass
class Run:
    """What a run holds from its set-up to its record."""

    spec: RunSpec
    info: DistInfo
    plan: Plan
    choice: Choice  # the step mode and sub-batch BN that ran
    model: nn.Module  # what a checkpoint holds; `scoring.net` is the model as trained (DDP-wrapped where distributed)
    optimizer: torch.optim.Optimizer
    step: EagerStep
    bns: list[nn.Module]  # the model's multigrid BN layers, set to each iteration's layout
    train_set: VideoClipDataset
    val_set: VideoClipDataset
    loader: DataLoader  # one pass to the end of the run
    scoring: Scoring
    state: TrainState
    gflops: dict[tuple[int, int], float]  # forward GFLOPs of one clip at each planned (t, s)
    bf16: bool
    channels_last: bool
    started: float  # perf_counter at the start of train()
    resumed_from: int  # the iteration this attempt began at: 0 for a fresh run
    layout: tuple[int, int] = (0, 0)  # the (BN splits, BN sync) the model is set to
    # This attempt's wall-clock outside the timed steps (a run's speedup counts the steps only; this says what
    # else a run costs): start-up to the first batch request, checkpoint writes, precise-BN passes.
    outside: dict[str, float] = field(default_factory=lambda: {"setup_s": 0.0, "checkpoint_s": 0.0,
                                                                "precise_bn_s": 0.0})

    @property
    def out(self) -> Path:
        return Path(self.spec.output_dir)


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
    """Set up, train epoch by epoch, score the final model and write its record (on the main rank)."""
    run = _setup(spec, info, started)
    bar = progress_bar(run.plan, spec.model.label, run.state.iteration, shown=info.is_main)
    try:
        batches = iter(run.loader)
        run.outside["setup_s"] = time.perf_counter() - started
        for epoch, iterations in _epochs_left(run.plan, run.state.iteration):
            train_one_epoch(run, itertools.islice(batches, iterations), bar)
            _end_of_epoch(run, epoch)
    finally:
        bar.close()
        run.step.release()  # graphs holding NCCL collectives must be gone before the process group (also on errors)
    final = _score(run, run.plan.max_epoch)
    if spec.train.train_eval_videos:
        final.update(train_scores(run.scoring, run.state.meter, run.train_set.min_frames))
    run.state.evals.append(final)
    record = _record(run, final).to_dict()
    if info.is_main:
        write_record(record, run.out, spec, results)
    return record


def _setup(spec: RunSpec, info: DistInfo, started: float) -> Run:
    """Everything a run trains with, checked before any training: the Plan, the step and BN paths, the data, the
    model and optimizer (restored from the newest checkpoint where `resume` finds one)."""
    plan = build_plan(spec)
    choice = _choose_paths(spec, plan, info.device)
    _require_runnable(spec, plan, choice, info)
    bf16 = use_bf16(info.device, spec.train.precision)
    channels_last = use_channels_last(info.device, spec.train.channels_last)
    memory_format = memory_format_for(channels_last)
    autocast = (torch.autocast(info.device.type, dtype=torch.bfloat16) if bf16 else contextlib.nullcontext())

    train_set, val_set = datasets(spec, min_clip_frames(plan))
    require_a_readable_video(val_set)
    multilabel = train_set.annotations.multilabel
    checkpoints = Path(spec.output_dir) / "checkpoints"
    found = ckpt.load_newest(checkpoints, log if info.is_main else None) if spec.resume else None
    torch.manual_seed(spec.seed)  # the same initial weights on every rank and every attempt
    # A resumed run takes every weight from its checkpoint: model.pretrained is not read again (it may be gone).
    model_spec = dataclasses.replace(spec.model, pretrained=None) if found is not None else spec.model
    model = build_model(model_spec, spec.data.num_classes).to(info.device, memory_format=memory_format)
    gflops = _clip_gflops(model, plan)  # before any RNG state is restored: it draws random clips
    bns = multigrid_bns(model)
    set_bn_impls(bns, dataclasses.replace(spec.train, sub_batch_bn=choice.sub_batch_bn))
    optimizer = torch.optim.SGD(_param_groups(model, spec.solver.weight_decay), lr=spec.solver.base_lr,
                                momentum=spec.solver.momentum, nesterov=spec.train.nesterov)
    bad = BadVideoLog(log)
    state = _resume(spec, info, plan, found, model, optimizer, bad)
    net = data_parallel(model, info, for_graphs=choice.step in GRAPHED_STEP_MODES)
    step = make_step(choice.step, net, optimizer, _loss_fn(multilabel), bf16, info.device,
                     shapes=len(planned_clip_sizes(plan)))
    prepare = functools.partial(device_clips, device=info.device, memory_format=memory_format)
    return Run(spec, info, plan, choice, model, optimizer, step, bns, train_set, val_set,
               train_loader(spec, plan, train_set, info, state.iteration),
               Scoring(spec, net, info, multilabel, prepare, autocast, bad), state, gflops, bf16, channels_last,
               started, resumed_from=state.iteration)


def _require_runnable(spec: RunSpec, plan: Plan, choice: Choice, info: DistInfo) -> None:
    """SpecError before any work where the chosen step, the BN kernels or the Plan cannot run here."""
    require_step_device(choice.step, info.device)
    require_bn_kernels_device(choice.sub_batch_bn, spec.train.plain_bn_impl, info.device)
    require_planned_frames(plan)
    require_bn_statistics(plan)
    if info.world_size != spec.num_gpus:
        raise SpecError(f"The plan splits every batch over num_gpus={spec.num_gpus} processes, but "
                        f"{info.world_size} are running. Set num_gpus={info.world_size} (and solver.batch_size "
                        f"to keep the per-GPU batch).")


def _resume(spec: RunSpec, info: DistInfo, plan: Plan, found: tuple[Path, dict[str, Any]] | None, model: nn.Module,
            optimizer: torch.optim.Optimizer, bad: BadVideoLog) -> TrainState:
    """The state to start from: the checkpoint `found` restored into the model, optimizer and RNGs, or a fresh one
    (an earlier run's checkpoints moved aside where resume=false)."""
    out = Path(spec.output_dir)
    if not spec.resume and info.is_main and (aside := ckpt.supersede_earlier_run(out)) is not None:
        # So that a resume of this run can only continue this run (checkpoint.supersede_earlier_run says why).
        log.warning("resume=false: starting afresh; the checkpoints (and record.json) of the earlier run in %s "
                    "were moved to %s", out, aside)
    if found is None:
        if spec.resume and info.is_main:
            log.info("resume=true, but %s holds no checkpoint: starting from scratch", out / "checkpoints")
        return TrainState()
    latest, payload = found
    state = restore(latest, payload, model, optimizer, spec, bad)
    if info.is_main:
        log.info("resuming from %s (iteration %d of %d)", latest, state.iteration, plan.iterations)
    return state


def _epochs_left(plan: Plan, start: int) -> Iterator[tuple[int, int]]:
    """(epoch, iterations of it still to run) for each epoch from global iteration `start` to the end of the run."""
    i = start
    while i < plan.iterations:
        it = iteration(plan, i)
        left = plan.phases[it.phase].iterations_per_epoch - it.step_in_epoch
        yield it.epoch, left
        i += left


def train_one_epoch(run: Run, batches: Iterable[dict[str, Any]], bar: tqdm) -> None:
    """Train on the `batches` of one epoch: each at the BN layout and LR the Plan gives its iteration, measured,
    shown on the progress bar, and checkpointed where one is due before the epoch's end (_end_of_epoch)."""
    state, info = run.state, run.info
    data_start = time.perf_counter()
    for batch in batches:
        it = iteration(run.plan, state.iteration)
        data_s = time.perf_counter() - data_start
        run.scoring.bad.update(batch["failures"])
        _set_bn_layout(run, (it.bn_splits, it.bn_sync))
        clips, labels = run.scoring.prepare(batch["clips"]), batch["labels"].to(info.device, non_blocking=True)
        loss = _step(run, it, clips, labels)
        compute_s = time.perf_counter() - data_start - data_s
        _measure(run, it, len(clips), data_s, compute_s)
        state.iteration += 1
        state.epoch_loss[0] += loss
        state.epoch_loss[1] += 1
        show_iteration(bar, run.plan, it, loss, run.spec.train.log_every)
        last_of_epoch = it.step_in_epoch == run.plan.phases[it.phase].iterations_per_epoch - 1
        if not last_of_epoch:
            _checkpoint_if_due(run, end_of_epoch=False)
        data_start = time.perf_counter()


def _set_bn_layout(run: Run, layout: tuple[int, int]) -> None:
    """Set the model's BN layers to `layout` where it changes; the peak memory is then measured afresh."""
    if layout != run.layout:
        run.layout = layout
        set_bn_layout(run.bns, *layout)
        if run.info.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(run.info.device)


def _step(run: Run, it: Iteration, clips: torch.Tensor, labels: torch.Tensor) -> float:
    """Iteration `it`'s training step, timed to completion (it ends with a device sync); its loss."""
    try:
        return train_iteration(run.step, clips, labels, (it.t, it.s, len(clips), *run.layout), it.lr, run.info)
    except NonFiniteLoss as err:
        raise TrainingDiverged(
            f"{err} at iteration {it.index} (epoch {it.epoch}, phase {it.phase}, "
            f"{it.t}×{it.s}², LR {it.lr:.4g}). The last good checkpoint is kept in "
            f"{run.out / 'checkpoints'}; lower solver.base_lr or check the data.") from None


def _measure(run: Run, it: Iteration, clips: int, data_s: float, compute_s: float) -> None:
    """Add iteration `it` (`clips` on this rank) to the meter of its phase."""
    meter, info = run.state.meter, run.info
    clips_all = clips * info.world_size
    meter.add(it.phase, data_s, compute_s, clips_all, clips_all * run.gflops[(it.t, it.s)])
    meter.note_layout(it.phase, clips, *run.layout)
    if info.device.type == "cuda":
        meter.note_memory(it.phase, torch.cuda.max_memory_allocated(info.device) / 2**30)
    run.state.shape_checks += int(info.distributed)


def _end_of_epoch(run: Run, epoch: int) -> None:
    """Close `epoch`: its mean loss, a validation score where train.eval_every says, a checkpoint."""
    state, every = run.state, run.spec.train.eval_every
    state.losses.append(state.epoch_loss[0] / state.epoch_loss[1])
    state.epoch_loss = [0.0, 0.0]
    if every and (epoch + 1) % every == 0 and state.iteration < run.plan.iterations:
        state.evals.append(_score(run, epoch + 1))
        set_bn_layout(run.bns, *run.layout)
    _checkpoint_if_due(run, end_of_epoch=True)


def _score(run: Run, epoch: int) -> dict[str, Any]:
    """The validation score after `epoch` (precise BN first where train.precise_bn asks)."""
    if run.spec.train.precise_bn:
        run.outside["precise_bn_s"] += precise_bn(run.scoring, run.plan, run.train_set)
    metrics = score_videos(run.scoring, run.val_set, run.state.meter)
    return {"epoch": epoch, "iteration": run.state.iteration, **metrics}


def _checkpoint_if_due(run: Run, end_of_epoch: bool) -> None:
    """Save a checkpoint every train.checkpoint_every iterations, or at the end of each epoch where that is 0."""
    every = run.spec.train.checkpoint_every
    due = every and run.state.iteration % every == 0
    if run.info.is_main and (due or (end_of_epoch and not every)):
        saving = time.perf_counter()
        ckpt.save_checkpoint(run.out / "checkpoints", run.state.iteration,
                             checkpoint_payload(run.model, run.optimizer, run.state, run.spec, run.scoring.bad),
                             run.spec.train.keep_checkpoints)
        run.outside["checkpoint_s"] += time.perf_counter() - saving


def _record(run: Run, final: dict[str, Any]) -> RunRecord:
    """The RunRecord of the finished run, with what this attempt's step and wall-clock outside the steps were."""
    spec, state, summary, step = run.spec, run.state, plan_summary(run.plan), run.step
    compile_cost = step.compile_cost
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
        world_size=run.info.world_size,
        precision="bf16" if run.bf16 else "fp32",
        channels_last=run.channels_last,
        clip_gflops=[{"t": t, "s": s, "gflops": g} for (t, s), g in run.gflops.items()],
        measured=state.meter.summary(),
        shape_checks=state.shape_checks,
        epoch_losses=state.losses,
        evals=state.evals,
        final=final,
        bad_videos=run.scoring.bad.as_dict(),
        # Capture/compile time of this attempt (a resumed run captures again); already inside the phases' compute.
        step={"mode": step.mode, "setup_s": step.setup_s, "specialisations": step.specialisations,
              **({"compile": compile_cost} if compile_cost is not None else {}),
              **({"choice": run.choice.to_dict()} if "auto" in (spec.train.step, spec.train.sub_batch_bn) else {})},
        outside_steps={**run.outside, "total_s": time.perf_counter() - run.started},
        # Where this attempt began: a resumed run's train time also holds earlier attempts' steps (checkpointed
        # meter).
        resumed_from_iteration=run.resumed_from,
    )


def _choose_paths(spec: RunSpec, plan: Plan, device: torch.device) -> Choice:
    """The step mode and sub-batch BN that `auto` picks for this run here (harness.train.choose)."""
    card = torch.cuda.get_device_name(device) if device.type == "cuda" else None
    evidence = card_evidence(card) if card else None
    return choose(spec.train.step, spec.train.sub_batch_bn, run_shapes(plan, spec.model.label, spec.num_gpus), card,
                  evidence)


def _param_groups(model: nn.Module, weight_decay: float) -> list[dict[str, Any]]:
    """No weight decay on BN parameters (the reference's BN.WEIGHT_DECAY = 0)."""
    bn_params, other = [], []
    for module in model.modules():
        target = bn_params if isinstance(module, nn.modules.batchnorm._BatchNorm) else other
        target.extend(p for p in module.parameters(recurse=False) if p.requires_grad)
    return [{"params": other, "weight_decay": weight_decay}, {"params": bn_params, "weight_decay": 0.0}]


def _clip_gflops(model: nn.Module, plan: Plan) -> dict[tuple[int, int], float]:
    """fvcore forward GFLOPs of one clip at every planned (t, s), counted once per shape."""
    return {(t, s): count_flops(model, t, s).gflops for t, s in planned_clip_sizes(plan)}


def _loss_fn(multilabel: bool):
    """Sigmoid cross-entropy per class for multi-label data (Charades), softmax cross-entropy otherwise."""
    return nn.functional.binary_cross_entropy_with_logits if multilabel else nn.functional.cross_entropy
