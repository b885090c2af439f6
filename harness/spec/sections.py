"""The sections of a RunSpec (solver, data, model, multigrid, baseline, train): each setting, its default and what
it means. Plain frozen dataclasses; the rules between settings are in harness.spec.run.validate."""

from __future__ import annotations

from dataclasses import dataclass

SQRT_HALF = 0.5**0.5  # the paper's 1/√2, written as the reference implementation computes it


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

