"""RunSpec: the frozen, validated description of one run.

A RunSpec is built from a plain nested dict (what Hydra composes from ``suites/``). Every
key is checked: unknown keys are errors with a "did you mean", wrong types and values are
errors that name the key and say how to fix it. Nothing here is derived or "set
automatically": derived values (shapes, batch sizes, phase boundaries) live in the Plan
(``harness.schedule``). Pure Python; importing this module never imports torch.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import types
import typing
from dataclasses import dataclass, field
from typing import Any

SQRT_HALF = 0.5**0.5  # the paper's 1/√2, written as the reference implementation computes it


class SpecError(ValueError):
    """A setting is wrong. The message names the key and the fix."""


def did_you_mean(name: str, choices: typing.Iterable[str]) -> str:
    """Return ' Did you mean 'x'?' for the closest choice, or '' if nothing is close."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" Did you mean '{close[0]}'?" if close else ""


@dataclass(frozen=True)
class SolverSpec:
    """Optimiser and LR schedule of the baseline recipe (epochs refer to the baseline)."""

    base_lr: float = 0.1
    policy: str = "step"  # "step" (×gamma at each of `steps`) or "cosine"
    steps: tuple[int, ...] = (0, 94, 154, 196)
    max_epoch: int = 239
    gamma: float = 0.1
    warmup_epochs: float = 34.0
    warmup_start_lr: float = 0.01
    momentum: float = 0.9
    weight_decay: float = 1e-4
    batch_size: int = 64  # global mini-batch B (clips), split evenly over `num_gpus`


@dataclass(frozen=True)
class DataSpec:
    """Dataset and the baseline sampling grid (T0 frames at stride r, S0 crop, short-side jitter)."""

    name: str = "kinetics400"
    root: str | None = None
    num_frames: int = 32
    sampling_rate: int = 2
    crop_size: int = 224
    jitter: tuple[int, int] = (256, 340)
    train_videos: int = 240_000  # clips per training epoch; a real dataset root replaces it by its count
    num_classes: int = 400
    cache: str | None = None  # folder of a decoded-frame cache (`harness data cache`) to read clips from
    # Copies of data.root at smaller short sides (`harness data prepare --short-side N`): a training clip whose
    # scale-jitter draw is at most N pixels decodes the smallest such copy (harness.data.low_res).
    low_res_copies: tuple[str, ...] = ()


WIDTH_FAMILIES = ("slowfast_", "i3d_", "x3d_")  # the registered models that model.width narrows (harness.models)


@dataclass(frozen=True)
class ModelSpec:
    """Which network to train: a registered model (`harness models list`) or a user factory (`target`)."""

    name: str = "slowfast_r50_8x8"
    target: str | None = None  # "pkg.module:factory" for a user model
    dropout: float = 0.5
    width: float = 1.0  # channel multiplier; smoke scale shrinks it
    pretrained: str | None = None  # an ImageNet ResNet-50 state dict to inflate, or the same video model's weights
    # With a video model's weights: start the classifier afresh even where the file's has as many classes (fine-tuning
    # on another dataset that happens to have as many); otherwise it is kept where its shape fits, as PySlowFast does.
    fresh_classifier: bool = False
    # On CUDA, the stem convolutions' 3 input channels padded with zeros to this many (e.g. 8, where cuDNN has
    # tensor-core kernels for channels-last bf16): the same convolution, other kernels; 0: off.
    pad_stem_channels: int = 0

    @property
    def takes_width(self) -> bool:
        """Whether `width` narrows this model: the harness's own ResNet-3D families and user factories (which are
        passed it), not the torchvision models."""
        return bool(self.target) or self.name.startswith(WIDTH_FAMILIES)

    @property
    def label(self) -> str:
        """The model that runs: the user factory `pkg.module:factory` where one is set, else the registered name."""
        return self.target or self.name


@dataclass(frozen=True)
class MultigridSpec:
    """Multigrid settings (paper §3: the long and short cycles of §3.2, BN and LR rules). Defaults are the paper's."""

    long_cycle: bool = True
    short_cycle: bool = True
    epoch_factor: float = 1.5
    long_cycle_factors: tuple[tuple[float, float], ...] = (
        (0.25, SQRT_HALF),
        (0.5, SQRT_HALF),
        (0.5, 1.0),
        (1.0, 1.0),
    )
    short_cycle_factors: tuple[float, float] = (0.5, SQRT_HALF)
    bn_base_size: int = 8
    long_cycle_shapes: int | None = None  # S' of Table 1a: keep the last S' long shapes (None = all)
    short_cycle_shapes: int = 3  # Table 1b: 1 = long cycle only, 2 = base + S/√2, 3 = default
    # How a shape's batch is scaled (one of BATCH_RULES): "tokens" keeps b·t·h·w per iteration constant (Eq. 1: the
    # paper's rule, which keeps a convolution's FLOPs constant); "flops" keeps the counted forward FLOPs per iteration
    # constant, which differs where cost grows faster than tokens (attention).
    batch_rule: str = "tokens"
    # batch_rule=flops: [t, s, forward cost of a t×s² clip relative to the data.num_frames×data.crop_size² clip] per
    # shape; composing a spec counts the missing ones by fvcore (harness.models.flops.with_shape_costs).
    shape_costs: tuple[tuple[int, int, float], ...] = ()


@dataclass(frozen=True)
class BaselineSpec:
    """Variants of the fixed-shape baseline (used only when both multigrid cycles are off)."""

    epoch_factor: float = 1.0  # "Baseline 1/k" trains for max_epoch / k: epoch_factor = 1/k
    shape_factor: tuple[float, float] = (1.0, 1.0)  # (t, s) factors; Figure 3's "smaller shape, larger batch"
    # Progressive resizing (EfficientNetV2 §4, MosaicML Composer's ProgressiveResizing): the crop grows once, from
    # progressive_scale × data.crop_size to the full crop in progressive_stages equal steps over the first
    # (1 − progressive_full_fraction) of the epochs, at a fixed batch; 0 is off.
    progressive_scale: float = 0.0
    progressive_stages: int = 4
    progressive_full_fraction: float = 0.2


@dataclass(frozen=True)
class TrainSpec:
    """How the shared trainer runs (not part of the paper's recipe; "auto" picks by hardware)."""

    device: str = "auto"  # "auto" (cuda if available), "cuda", "cpu"
    precision: str = "auto"  # "auto" (bf16 on GPU, fp32 on CPU), "bf16", "fp32"
    channels_last: str = "auto"  # "auto" (on GPU), "on", "off"
    nesterov: bool = True  # the reference's default SGD
    num_workers: int = 4  # loader processes per GPU
    eval_every: int = 0  # evaluate every K epochs (0: at the end only)
    eval_clips: int | None = None  # temporal views per video at evaluation (None: the dataset's, e.g. 10)
    eval_crops: int | None = None  # spatial crops per view (None: the dataset's, e.g. 3)
    eval_batch_size: int = 8  # videos' clips per evaluation batch (each with all its crops)
    checkpoint_every: int = 0  # iterations between checkpoints (0: at the end of every epoch)
    keep_checkpoints: int = 3
    precise_bn: int = 0  # batches to recompute BN statistics with before each evaluation (0: off)
    log_every: int = 20  # iterations between log lines
    # "eager", "cuda_graphs" (a CUDA graph per planned shape), "compile_graphs" (compiled, then a graph per shape),
    # "auto" (on GPUs the fastest path proven on the card, else graphs: harness.train.choose)
    step: str = "eager"
    sub_batch_bn: str = "auto"  # how sub-batch BN computes its groups: one of SUB_BATCH_BN (harness.models.bn)
    plain_bn_impl: str = "cudnn"  # kernels of training BN over the whole per-GPU batch: one of PLAIN_BN_IMPL
    # Training videos also scored at the end, as the validation set is (0: off): train vs validation top-1 says
    # whether a schedule underfits or memorises.
    train_eval_videos: int = 0


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


SCALES = ("smoke", "proxy", "paper")
DEVICES = ("auto", "cuda", "cpu")
PRECISIONS = ("auto", "bf16", "fp32")
SWITCHES = ("auto", "on", "off")
EVAL_CROPS = (1, 3)  # spatial crops per evaluation view that harness.data.transforms.eval_crop_boxes makes
STEP_MODES = ("eager", "cuda_graphs", "compile_graphs", "auto")  # harness.train.step implements them
GRAPHED_STEP_MODES = ("cuda_graphs", "compile_graphs")  # the modes that replay CUDA graphs: a GPU only
COMPILED_STEP_MODES = ("compile_graphs",)  # the modes that run the step through torch.compile
# Sub-batch BN (harness.models.bn): "auto" (cuDNN per block, or the reference's interleaved layout), "triton" (CUDA).
SUB_BATCH_BN = ("auto", "triton")
SUB_BATCH_BN_CUDA_ONLY = ("triton",)
# Plain (one-group, unsynchronised) training BN: PyTorch's kernels (cuDNN on GPU) or the sub-batch kernels with one
# group (CUDA; harness.models.triton_bn).
PLAIN_BN_IMPL = ("cudnn", "triton")
POLICIES = ("step", "cosine")
BATCH_RULES = ("tokens", "flops")  # multigrid.batch_rule; harness.schedule.shapes applies them


@dataclass(frozen=True)
class Retired:
    """A retired key or value: what the harness uses instead, and (a key) the old default that records' specs hold."""

    instead: str
    default: Any = None


# Retired keys ("section.key") and values ("section.key=value"): setting one is an error that says what to use
# instead; the measurements that retired them are in docs/performance.md. Records' specs are read back without a
# retired key at its old default (spec_from_dict) and with retired values as they ran (spec_from_record).
_AUTO_BN = "use train.sub_batch_bn=auto (cuDNN per block or the interleaved layout, as measured) or triton"
RETIRED: dict[str, Retired] = {
    "data.decoder": Retired("PyAV decodes every clip, in the loader's workers; remove the setting", default="pyav"),
    "train.step=compile": Retired("use train.step=auto (CUDA graphs, compiled where compiling pays) or cuda_graphs"),
    **{f"train.sub_batch_bn={v}": Retired(_AUTO_BN) for v in ("blocks", "interleaved", "fused", "compiled")},
    "train.sub_batch_bn=cuda_cpp": Retired("use train.sub_batch_bn=triton (as fast under CUDA graphs) or auto"),
    "train.plain_bn_impl=cuda_cpp": Retired("use train.plain_bn_impl=triton or cudnn"),
}


def retired_message(setting: str) -> str:
    """What a SpecError says of a retired key or value (a key of RETIRED)."""
    return (f"'{setting}' was retired: {RETIRED[setting].instead}. The measurements that retired it are in "
            f"docs/performance.md (Retired).")


def without_retired_defaults(raw: dict[str, Any]) -> dict[str, Any]:
    """A copy of a nested spec dict without the retired keys that hold their old default (committed records' specs
    hold them); a retired key at another value stays, for building to refuse."""
    out = {k: dict(v) if isinstance(v, dict) else v for k, v in raw.items()}
    for setting, retired in RETIRED.items():
        section, _, key = setting.partition(".")
        if "=" not in setting and isinstance(out.get(section), dict) and out[section].get(key, object()) == \
                retired.default:
            del out[section][key]
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def known_keys(cls: type = RunSpec, prefix: str = "") -> list[str]:
    """Every dotted key a RunSpec accepts, e.g. 'solver.base_lr'."""
    keys: list[str] = []
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        key = prefix + f.name
        if dataclasses.is_dataclass(hints[f.name]):
            keys.extend(known_keys(hints[f.name], key + "."))
        else:
            keys.append(key)
    return keys


def check_key(key: str) -> None:
    """Raise SpecError if `key` (dotted) is not a RunSpec key, with a did-you-mean; a retired key's says so."""
    if key in RETIRED:
        raise SpecError(retired_message(key))
    keys = known_keys()
    sections = {k.split(".")[0] for k in keys if "." in k}
    if key in keys or key in sections:
        return
    raise SpecError(f"Unknown config key '{key}'.{did_you_mean(key, keys + sorted(sections))} "
                    f"Run 'harness plan --keys' to list every key.")


def _coerce(value: Any, hint: Any, key: str) -> Any:
    """Convert a YAML/Hydra value to the annotated type, or raise SpecError naming the key."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _coerce(value, inner[0], key)
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            example = f"[{value}]" if args and args[0] is str else "[0,94,154,196]"  # the value itself, as a list
            raise SpecError(f"'{key}' must be a list, got {value!r}. Example: {key}={example}.")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_coerce(v, args[0], f"{key}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise SpecError(f"'{key}' must have {len(args)} entries, got {len(value)}: {list(value)!r}.")
        return tuple(_coerce(v, a, f"{key}[{i}]") for i, (v, a) in enumerate(zip(value, args)))
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise SpecError(f"'{key}' must be true or false, got {value!r}.")
    if hint is int:
        # is_integer() is False for inf and nan, which int() would raise on instead of naming the key.
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not float(value).is_integer():
            raise SpecError(f"'{key}' must be an integer, got {value!r}.")
        return int(value)
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise SpecError(f"'{key}' must be a number, got {value!r}.")
        if not math.isfinite(value):
            raise SpecError(f"'{key}' must be finite, got {value!r}.")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise SpecError(f"'{key}' must be a string, got {value!r}.")
        return value
    raise TypeError(f"unsupported annotation {hint!r} for {key}")  # a bug in this module, not user input


def _build(cls: type, raw: Any, prefix: str) -> Any:
    if not isinstance(raw, dict):
        raise SpecError(f"'{prefix.rstrip('.') or 'config'}' must be a mapping of keys, got {raw!r}.")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    kwargs = {}
    for name, value in raw.items():
        if name not in names:
            key = prefix + str(name)
            if key in RETIRED:
                raise SpecError(retired_message(key))
            raise SpecError(f"Unknown config key '{key}'.{did_you_mean(str(name), names)} "
                            f"Known keys under '{prefix.rstrip('.') or 'the top level'}': {', '.join(names)}.")
        hint = hints[name]
        if dataclasses.is_dataclass(hint):
            kwargs[name] = _build(hint, value, prefix + name + ".")
        else:
            kwargs[name] = _coerce(value, hint, prefix + name)
    return cls(**kwargs)


def spec_from_dict(raw: dict[str, Any]) -> RunSpec:
    """Build and validate a RunSpec from a nested dict; raise SpecError on the first problem."""
    return validate(_build(RunSpec, without_retired_defaults(raw), ""))


def spec_from_record(raw: dict[str, Any]) -> RunSpec:
    """The RunSpec of a committed record's spec: as spec_from_dict, but retired values are kept as the run had
    them (a record is history, not a setting to run)."""
    return validate(_build(RunSpec, without_retired_defaults(raw), ""), retired_ok=True)


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
