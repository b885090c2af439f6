"""`harness throughput`: training clips/s of the trainer's step at a recipe's baseline shape, beside a plain loop.

For each recipe and per-GPU batch, on one device, with the same model and the same random clips:

- ``plain``: the textbook PyTorch loop (zero_grad, autocast forward, loss, backward, SGD step) with no
  per-step synchronisation: the upper bound of an eager loop;
- ``eager``, ``eager_autotuned`` (with cuDNN autotuning), ``cuda_graphs``, ``compile``: the trainer's
  iteration (harness.train.step.train_iteration, the function the trainer calls) with `train.step` set so,
  including what the trainer does every iteration besides the step (setting the LR, reading the loss, which
  synchronises: it is checked for NaN, and a device sync: the step is timed to completion).

Each row also gives the achieved TFLOP/s (training ≈ 3× the fvcore forward FLOPs) and its share
of a large bf16 matrix product measured on the same device: how far the step is from the GPU's
limit. Those two count multiply-adds (half the FLOPs); each row's `mfu` counts FLOPs (harness.measure.mfu:
training GFLOP per clip, achieved TFLOP/s, their shares of the card's datasheet peak and of the measured matmul).
Capture/compile time is reported apart from the steady-state step time. With `kernels`, each row also says where
the step's time goes (harness.measure.kernels: the largest kernels, time per kernel group, and how busy the GPU is
during the step).
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import torch
from torch import nn

from harness.device import memory_format_for, pick_device, sync_device, use_bf16, use_channels_last
from harness.measure.mfu import FLOP_CONVENTION, card_name, matmul_tflops, mfu_fields, peak_tflops
from harness.measure.throughput_modes import DEFAULT_RECIPES, MODES
from harness.models import build_model, multigrid_bns, set_bn_layout
from harness.models.bn import set_bn_plain_impl
from harness.models.flops import count_flops
from harness.spec import GRAPHED_STEP_MODES, SpecError
from harness.train.step import make_step, train_iteration

# cuDNN autotuning (torch.backends.cudnn.benchmark) is off in the trainer: it buys nothing at the baseline shapes
# and costs setup time at every new shape, most of a multigrid proxy run's ("eager_autotuned" against "eager" in
# results/throughput/h200_step_modes.json). "eager_autotuned" keeps measuring it.
AUTOTUNED = {"plain": False, "eager": False, "eager_autotuned": True, "cuda_graphs": False, "compile_graphs": False}
KERNEL_STEPS = 3  # steps profiled per mode with --kernels (after the timed ones)


@dataclass(frozen=True)
class ThroughputRow:
    recipe: str
    model: str
    t: int
    s: int
    batch: int
    mode: str
    ms_per_step: float
    clips_per_s: float
    setup_s: float  # capture or compile time (not in ms_per_step)
    train_tflops: float  # 3 × forward FLOPs / step time
    share_of_matmul: float  # train_tflops over the device's measured bf16 matmul rate
    peak_mem_gib: float
    kernels: dict | None = None  # with --kernels: harness.measure.kernels.profile_kernels of this mode's steps
    compile: dict | None = None  # compiled modes: where setup_s's compile time went (harness.train.compile_cost)
    pad_stem_channels: int = 0  # model.pad_stem_channels of the timed model (0: the stem's 3 channels as they are)
    plain_bn_impl: str = "cudnn"  # train.plain_bn_impl of the timed model's BN layers
    mfu: dict | None = None  # FLOPs utilisation, FLOPs counted as 2 × 3 × forward multiply-adds (harness.measure.mfu)

    def to_dict(self) -> dict:
        return asdict(self)


def require_plain_bn_device(plain_bn: Sequence[str], device: torch.device) -> None:
    """SpecError, before any timing, where BN kernels (train.plain_bn_impl=triton) would run on the CPU."""
    if device.type != "cuda" and any(impl != "cudnn" for impl in plain_bn):
        raise SpecError(f"--plain-bn-impl {' '.join(plain_bn)}: the Triton BN kernels run on a CUDA GPU, and this "
                        f"measurement runs on the CPU. Leave out --plain-bn-impl (cudnn) or run it on a GPU.")


def _plain_loop(model: nn.Module, optimizer: torch.optim.Optimizer, clips: torch.Tensor, labels: torch.Tensor,
                bf16: bool, steps: int) -> None:
    """The textbook loop, deliberately not train_iteration: no loss read, no per-step sync, so it bounds what any
    eager loop can reach and shows what the trainer's per-iteration checks and timing cost."""
    autocast = torch.autocast(clips.device.type, dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=True)
        with autocast:
            logits = model(clips)
        nn.functional.cross_entropy(logits.float(), labels).backward()
        optimizer.step()


def time_mode(mode: str, model: nn.Module, optimizer: torch.optim.Optimizer, clips: torch.Tensor,
              labels: torch.Tensor, bf16: bool, *, warmup: int, repeats: int,
              kernels: int = 0) -> tuple[float, float, dict | None, dict | None]:
    """(ms per step over `repeats` steps after `warmup`, setup seconds, the `kernels` largest kernels of a few
    more steps or None, where a compiled mode's compile time went or None) of one mode."""
    device = clips.device
    if mode == "plain":
        def plain_steps(n: int) -> None:
            _plain_loop(model, optimizer, clips, labels, bf16, n)

        plain_steps(warmup)
        sync_device(device)
        start = time.perf_counter()
        plain_steps(repeats)
        sync_device(device)
        ms = (time.perf_counter() - start) / repeats * 1e3
        return ms, 0.0, _kernels(plain_steps, device, ms, kernels), None
    runner = make_step(mode.removesuffix("_autotuned"), model, optimizer, nn.functional.cross_entropy, bf16, device)
    key = (clips.shape[2], clips.shape[3], len(clips), 1, 1)
    lr = optimizer.param_groups[0]["lr"]  # set again every iteration, as the trainer sets its schedule's

    def trainer_steps(n: int) -> None:
        for _ in range(n):
            train_iteration(runner, clips, labels, key, lr)

    trainer_steps(warmup)
    start = time.perf_counter()
    trainer_steps(repeats)
    ms = (time.perf_counter() - start) / repeats * 1e3
    return ms, runner.setup_s, _kernels(trainer_steps, device, ms, kernels), runner.compile_cost


def _kernels(run, device: torch.device, step_ms: float, top: int) -> dict | None:
    if top <= 0:
        return None
    from harness.measure.kernels import profile_kernels

    return profile_kernels(run, KERNEL_STEPS, device, step_ms, top)


def measure_throughput(recipes=DEFAULT_RECIPES, batches=(8, 32), modes=MODES, *, device: str | None = None,
                       warmup: int = 5, repeats: int = 20, kernels: int = 0, progress=None,
                       on_row: Callable[[dict], None] | None = None, pad_stem: Sequence[int] = (0,),
                       plain_bn: Sequence[str] = ("cudnn",)) -> dict:
    """Every (recipe, stem padding, plain BN kernels, batch, mode) at the recipe's baseline shape; JSON-ready.
    `kernels` > 0: each row also profiles a few steps and keeps that many of the largest kernels. `pad_stem`: the
    values of model.pad_stem_channels to time the model with; `plain_bn` those of train.plain_bn_impl. `on_row`
    gets the record so far after every row (a measurement cut off keeps its rows)."""
    from harness.config import compose

    dev = pick_device(device)
    on_gpu = dev.type == "cuda"
    require_plain_bn_device(plain_bn, dev)
    bf16, fmt = use_bf16(dev), memory_format_for(use_channels_last(dev))
    skipped = [] if on_gpu else [m for m in modes if m in GRAPHED_STEP_MODES]  # CUDA graphs need a GPU
    modes = [m for m in modes if m not in skipped]
    ceiling = matmul_tflops(dev)
    # MFU's shares: of the card's datasheet peak and of its bf16 matmul (a CPU's fp32 one is no bf16 ceiling)
    peak, bf16_matmul = peak_tflops(card_name(dev)), ceiling if on_gpu else None
    rows: list[ThroughputRow] = []

    def record() -> dict:
        return {"device": torch.cuda.get_device_name(dev) if on_gpu else "cpu", "matmul_tflops": ceiling,
                "precision": "bf16" if bf16 else "fp32", "warmup": warmup, "repeats": repeats, "skipped": skipped,
                "rows": [r.to_dict() for r in rows],
                "notes": "plain: textbook loop without per-step sync; eager/cuda_graphs/compile: the trainer's "
                         "iteration (train_iteration) incl. its per-step loss read and synchronisation; setup_s: "
                         "capture/compile, not in ms; train_tflops and share_of_matmul count 3 × forward "
                         f"multiply-adds; mfu: {FLOP_CONVENTION}"}

    for recipe, pad, plain_impl in itertools.product(recipes, pad_stem, plain_bn):
        spec = compose([f"recipe={recipe}", f"model.pad_stem_channels={pad}"])
        t, s = spec.data.num_frames, spec.data.crop_size
        torch.manual_seed(0)
        model = build_model(spec.model, spec.data.num_classes)
        gflops = count_flops(model, t, s).gflops
        model = model.to(dev, memory_format=fmt).train()
        set_bn_layout(multigrid_bns(model), 1, 1)
        set_bn_plain_impl(multigrid_bns(model), plain_impl)
        for batch in batches:
            clips = torch.randn(batch, 3, t, s, s, device=dev).contiguous(memory_format=fmt)
            labels = torch.randint(0, spec.data.num_classes, (batch,), device=dev)
            for mode in modes:
                optimizer = torch.optim.SGD(model.parameters(), lr=1e-6, momentum=0.9, nesterov=True)
                if on_gpu:
                    torch.cuda.empty_cache()
                    torch.cuda.reset_peak_memory_stats(dev)
                torch.backends.cudnn.benchmark = AUTOTUNED[mode]
                try:
                    ms, setup, where, compile_cost = time_mode(mode, model, optimizer, clips, labels, bf16,
                                                               warmup=warmup, repeats=repeats, kernels=kernels)
                except torch.OutOfMemoryError:
                    ms, setup, where, compile_cost = float("nan"), float("nan"), None, None
                peak_mem = torch.cuda.max_memory_allocated(dev) / 2**30 if on_gpu else 0.0
                tflops = 3 * gflops * batch / ms  # GFLOP per ms = TFLOP/s
                mfu = mfu_fields(gflops, batch / ms * 1e3, peak, bf16_matmul)
                rows.append(ThroughputRow(recipe, spec.model.name, t, s, batch, mode, ms, batch / ms * 1e3, setup,
                                          tflops, tflops / ceiling, peak_mem, where, compile_cost, pad, plain_impl,
                                          mfu))
                for p in model.parameters():
                    p.grad = None
                del optimizer
                if progress is not None:
                    progress.update(1)
                if on_row is not None:
                    on_row(record())
        del model
    torch.backends.cudnn.benchmark = False
    return record()
