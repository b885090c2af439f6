"""RunSpec, everything one run needs, and validate: the rules between its settings that need no derived value
(RunSpec.replace, spec_from_dict and spec_from_record apply them)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from harness.spec.choices import (
    BATCH_RULES,
    DEVICES,
    EVAL_CROPS,
    GRAPHED_STEP_MODES,
    PLAIN_BN_IMPL,
    POLICIES,
    PRECISIONS,
    SCALES,
    STEP_MODES,
    SUB_BATCH_BN,
    SUB_BATCH_BN_CUDA_ONLY,
    SWITCHES,
)
from harness.spec.errors import SpecError, did_you_mean
from harness.spec.retired import RETIRED, retired_message
from harness.spec.sections import BaselineSpec, DataSpec, ModelSpec, MultigridSpec, SolverSpec, TrainSpec


@dataclass(frozen=True)
class RunSpec:
    """Everything one run needs, validated."""

    solver: SolverSpec = field(default_factory=SolverSpec)
    data: DataSpec = field(default_factory=DataSpec)
    model: ModelSpec = field(default_factory=ModelSpec)
    multigrid: MultigridSpec = field(default_factory=MultigridSpec)
    baseline: BaselineSpec = field(default_factory=BaselineSpec)
    train: TrainSpec = field(default_factory=TrainSpec)
    num_gpus: int = 8
    scale: str = "paper"
    seed: int = 0
    suite: str | None = None
    recipe: str | None = None
    variant: str | None = None
    output_dir: str | None = None
    resume: bool = False

    @property
    def is_multigrid(self) -> bool:
        return self.multigrid.long_cycle or self.multigrid.short_cycle

    def to_dict(self) -> dict[str, Any]:
        """Plain nested dict (tuples as lists), the inverse of :func:`spec_from_dict`."""
        return _plain(dataclasses.asdict(self))

    def replace(self, **sections: Any) -> RunSpec:
        """A copy with whole sections or top-level values replaced, validated again."""
        return validate(dataclasses.replace(self, **sections))


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _require(ok: bool, message: str) -> None:
    if not ok:
        raise SpecError(message)


def _require_choice(key: str, value: str, choices: tuple[str, ...], retired_ok: bool = False) -> None:
    """SpecError unless `value` of `key` is one of `choices`; a retired value's (unless `retired_ok`) says so."""
    if f"{key}={value}" in RETIRED:
        _require(retired_ok, retired_message(f"{key}={value}"))
        return
    _require(value in choices, f"'{key}' must be one of {choices}, got '{value}'." + did_you_mean(value, choices))


def validate(spec: RunSpec, retired_ok: bool = False) -> RunSpec:
    """Check every rule that needs no derived value; return the spec unchanged. `retired_ok`: a retired value
    (RETIRED) passes, as a record's spec holds it.

    Shape rules that need the rounding of the schedule (a long-cycle shape rounding to zero
    frames, a short-cycle size above its base) are checked when the Plan is built.
    """
    s, d, m, b = spec.solver, spec.data, spec.multigrid, spec.baseline
    _require(len(s.steps) >= 1 and s.steps[0] == 0,
             f"'solver.steps' must start at epoch 0, got {list(s.steps)}. Example: solver.steps=[0,94,154,196].")
    _require(all(a < c for a, c in zip(s.steps, s.steps[1:])),
             f"'solver.steps' must be strictly increasing, got {list(s.steps)}.")
    _require(s.max_epoch > s.steps[-1],
             f"'solver.max_epoch' ({s.max_epoch}) must be greater than the last LR step ({s.steps[-1]}): "
             f"the last LR stage would be empty. Raise solver.max_epoch or drop the last step.")
    _require(s.base_lr > 0, f"'solver.base_lr' must be > 0, got {s.base_lr}.")
    _require(s.policy in POLICIES, f"'solver.policy' must be one of {POLICIES}, got '{s.policy}'."
             + did_you_mean(s.policy, POLICIES))
    _require(0 < s.gamma <= 1, f"'solver.gamma' must be in (0, 1], got {s.gamma}.")
    _require(0 <= s.warmup_epochs < s.max_epoch,
             f"'solver.warmup_epochs' must be in [0, solver.max_epoch={s.max_epoch}), got {s.warmup_epochs}.")
    _require(s.warmup_start_lr >= 0, f"'solver.warmup_start_lr' must be >= 0, got {s.warmup_start_lr}.")
    _require(0 <= s.momentum < 1, f"'solver.momentum' must be in [0, 1) (SGD's velocity grows without bound from 1 "
                                  f"on; the paper's is 0.9), got {s.momentum}.")
    _require(s.weight_decay >= 0, f"'solver.weight_decay' must be >= 0, got {s.weight_decay}.")
    _require(spec.num_gpus >= 1, f"'num_gpus' must be >= 1, got {spec.num_gpus}.")
    # numpy's seed sequences take no negative seed: the data order would fail at the first batch, not here.
    _require(0 <= spec.seed < 2**32, f"'seed' must be in [0, 2**32), got {spec.seed}.")
    _require(s.batch_size >= 1, f"'solver.batch_size' must be >= 1, got {s.batch_size}.")
    _require(s.batch_size % spec.num_gpus == 0,
             f"'solver.batch_size' ({s.batch_size}) must be divisible by 'num_gpus' ({spec.num_gpus}): "
             f"every GPU gets the same number of clips. Use a multiple of {spec.num_gpus}.")
    _require(d.num_frames >= 1, f"'data.num_frames' must be >= 1, got {d.num_frames}.")
    _require(d.sampling_rate >= 1, f"'data.sampling_rate' must be >= 1, got {d.sampling_rate}.")
    _require(d.crop_size >= 1, f"'data.crop_size' must be >= 1, got {d.crop_size}.")
    _require(0 < d.jitter[0] <= d.jitter[1],
             f"'data.jitter' must be [min, max] short-side sizes with 0 < min <= max, got {list(d.jitter)}.")
    _require(d.train_videos >= 1, f"'data.train_videos' must be >= 1, got {d.train_videos}.")
    _require(d.num_classes >= 1, f"'data.num_classes' must be >= 1, got {d.num_classes}.")
    _require(not d.low_res_copies or d.cache is None,
             "'data.low_res_copies' are copies of videos to decode, but data.cache serves decoded frames, so nothing "
             "is decoded. Unset one: data.low_res_copies=[] or data.cache=null.")
    _require(0 <= spec.model.dropout < 1, f"'model.dropout' must be in [0, 1), got {spec.model.dropout}.")
    _require(spec.model.width > 0, f"'model.width' must be > 0, got {spec.model.width}.")
    _require(not spec.model.fresh_classifier or spec.model.pretrained,
             "'model.fresh_classifier' starts the classifier of pre-trained weights afresh, but model.pretrained is "
             "not set: set model.pretrained=PATH, or leave model.fresh_classifier unset.")
    _require(spec.model.pad_stem_channels >= 0, f"'model.pad_stem_channels' must be >= 0 (0: off), got "
             f"{spec.model.pad_stem_channels}.")
    _require(m.epoch_factor > 0, f"'multigrid.epoch_factor' must be > 0, got {m.epoch_factor}.")
    _require(len(m.long_cycle_factors) >= 1, "'multigrid.long_cycle_factors' must hold at least one [t, s] pair.")
    for i, (tf, sf) in enumerate(m.long_cycle_factors):
        _require(0 < tf <= 1 and 0 < sf <= 1,
                 f"'multigrid.long_cycle_factors[{i}]' = [{tf}, {sf}]: both factors must be in (0, 1] "
                 f"(a long-cycle shape is never larger than the baseline shape).")
    for i, a in enumerate(m.short_cycle_factors):
        _require(0 < a <= 1, f"'multigrid.short_cycle_factors[{i}]' = {a} must be in (0, 1].")
    _require(m.bn_base_size >= 1, f"'multigrid.bn_base_size' must be >= 1, got {m.bn_base_size}.")
    n_long = len(m.long_cycle_factors)
    _require(m.long_cycle_shapes is None or 1 <= m.long_cycle_shapes <= n_long,
             f"'multigrid.long_cycle_shapes' must be in [1, {n_long}] (or null for all), got {m.long_cycle_shapes}.")
    n_short = len(m.short_cycle_factors) + 1
    _require(1 <= m.short_cycle_shapes <= n_short,
             f"'multigrid.short_cycle_shapes' must be in [1, {n_short}], got {m.short_cycle_shapes}.")
    _require(m.batch_rule in BATCH_RULES, f"'multigrid.batch_rule' must be one of {BATCH_RULES}, got "
             f"'{m.batch_rule}'." + did_you_mean(m.batch_rule, BATCH_RULES))
    _require(not m.shape_costs or m.batch_rule == "flops",
             f"'multigrid.shape_costs' are read by multigrid.batch_rule=flops only, and the rule is "
             f"{m.batch_rule}: set multigrid.batch_rule=flops, or multigrid.shape_costs=[].")
    for i, (t, size, cost) in enumerate(m.shape_costs):
        _require(t >= 1 and size >= 1 and cost > 0,
                 f"'multigrid.shape_costs[{i}]' = [{t}, {size}, {cost}]: frames and pixels must be >= 1 and the "
                 f"relative cost > 0.")
    shapes = [(t, size) for t, size, _ in m.shape_costs]
    _require(len(set(shapes)) == len(shapes), f"'multigrid.shape_costs' gives a shape twice: {shapes}.")
    _require(b.epoch_factor > 0, f"'baseline.epoch_factor' must be > 0, got {b.epoch_factor}.")
    for i, f in enumerate(b.shape_factor):
        _require(0 < f <= 1, f"'baseline.shape_factor[{i}]' = {f} must be in (0, 1].")
    _require(0 <= b.progressive_scale < 1, f"'baseline.progressive_scale' = {b.progressive_scale}: the starting crop's "
             f"share of data.crop_size must be in (0, 1), or 0 for no progressive resizing.")
    _require(b.progressive_stages >= 1, f"'baseline.progressive_stages' must be >= 1, got {b.progressive_stages}.")
    _require(0 <= b.progressive_full_fraction < 1, f"'baseline.progressive_full_fraction' = "
             f"{b.progressive_full_fraction} must be in [0, 1): the share of the epochs trained at the full crop.")
    _require(not b.progressive_scale or tuple(b.shape_factor) == (1.0, 1.0),
             "'baseline.progressive_scale' grows the crop to the recipe's: leave 'baseline.shape_factor' at [1, 1].")
    if spec.is_multigrid:
        _require(b == BaselineSpec(),
                 "'baseline.*' settings apply only to a baseline run, but multigrid is on. Either reset them or "
                 "turn multigrid off with multigrid.long_cycle=false multigrid.short_cycle=false.")
    t = spec.train
    for key, value, choices in (("device", t.device, DEVICES), ("precision", t.precision, PRECISIONS),
                                ("channels_last", t.channels_last, SWITCHES)):
        _require(value in choices, f"'train.{key}' must be one of {choices}, got '{value}'."
                 + did_you_mean(value, choices))
    for key, choices in (("step", STEP_MODES), ("sub_batch_bn", SUB_BATCH_BN), ("plain_bn_impl", PLAIN_BN_IMPL)):
        _require_choice(f"train.{key}", getattr(t, key), choices, retired_ok)
    _require(t.sub_batch_bn not in SUB_BATCH_BN_CUDA_ONLY or t.device != "cpu",
             f"'train.sub_batch_bn={t.sub_batch_bn}' runs CUDA kernels, but train.device=cpu. Use "
             f"train.sub_batch_bn=auto.")
    _require(t.plain_bn_impl == "cudnn" or t.device != "cpu",
             f"'train.plain_bn_impl={t.plain_bn_impl}' runs CUDA kernels, but train.device=cpu. Use "
             f"train.plain_bn_impl=cudnn.")
    _require(t.step not in GRAPHED_STEP_MODES or t.device != "cpu",
             f"'train.step={t.step}' needs a CUDA GPU, but train.device=cpu. Use train.step=eager.")
    # Compiled graphs under DDP (its hooks inside a compiled and captured step) have not been tested.
    _require(t.step != "compile_graphs" or spec.num_gpus == 1,
             f"'train.step=compile_graphs' runs on one GPU, but num_gpus={spec.num_gpus}. Use train.step=cuda_graphs "
             f"(graphed DDP) for several GPUs.")
    for key in ("num_workers", "eval_every", "checkpoint_every", "precise_bn", "train_eval_videos"):
        _require(getattr(t, key) >= 0, f"'train.{key}' must be >= 0, got {getattr(t, key)}.")
    for key in ("keep_checkpoints", "eval_batch_size", "log_every"):
        _require(getattr(t, key) >= 1, f"'train.{key}' must be >= 1, got {getattr(t, key)}.")
    _require(t.eval_clips is None or t.eval_clips >= 1, "'train.eval_clips' must be >= 1 or null.")
    _require(t.eval_crops is None or t.eval_crops in EVAL_CROPS,
             f"'train.eval_crops' must be one of {EVAL_CROPS} (a centre crop, or three along the long side) or null "
             f"(the dataset's), got {t.eval_crops}.")
    _require(spec.scale in SCALES, f"'scale' must be one of {SCALES}, got '{spec.scale}'." +
             did_you_mean(spec.scale, SCALES))
    return spec
