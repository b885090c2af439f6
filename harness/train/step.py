"""How one training step's forward and backward run: eagerly, or replayed from a CUDA graph per shape (compiled).

Multigrid trains at a handful of batch shapes, all known from the Plan before training starts, so a step may be
specialised per shape (`train.step`):

- ``eager``: zero_grad, forward under autocast, loss in fp32, backward.
- ``cuda_graphs``: the first time a (shape, per-GPU batch, BN layout) comes up, run it a few times on a side stream
  (lazy initialisation happens there), then capture forward + loss + backward into a CUDA graph; every later
  iteration at that shape copies its batch into the graph's input and replays it, one launch instead of thousands.
  All graphs share one memory pool: they never run concurrently, and every tensor read after a replay (the loss, the
  gradients) is read before the next replay. The optimizer step stays eager, so the LR can change every iteration.
  Under DDP (NCCL) the gradient all-reduce and synchronised BN's collectives are captured with the rest, as PyTorch
  allows: DDP built on the capture stream (`distributed.data_parallel`), at least 11 eager DDP iterations before the
  first capture, every rank capturing the same shapes in the same order (the Plan guarantees it), and the graphs
  released before the process group is destroyed (`release`).
- ``compile_graphs``: forward + backward through ``torch.compile`` specialised on each shape, captured into a CUDA
  graph per shape (compiled during the capture's warm-up runs). Its caches live in the data home
  (`harness.paths.compile_cache_dir`), so a later process at the same shapes loads them; where a compiled step's
  compile time went is its `compile_cost`, which the trainer's record and `harness throughput` keep.

``auto`` picks ``eager`` on the CPU and, on a GPU, ``cuda_graphs`` unless a faster mode whose numerics test passed on
that card is predicted to win, its compiling included (harness.train.choose). All compute the same function as
``eager``; the GPU tests compare their losses and weights.

`train_iteration` is the whole iteration around a step (LR, step, loss read and check, optimizer step, sync):
the trainer and the step benchmarks in harness/measure/ run it, so the benchmarks time what the trainer runs.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from harness.device import sync_device
from harness.models.bn import BLOCK_SPLITS_GRAPHED, multigrid_bns, set_bn_block_splits
from harness.paths import compile_cache_dir
from harness.spec import GRAPHED_STEP_MODES, STEP_MODES, SpecError
from harness.train.compile_cost import CompileCostMeter
from harness.train.distributed import DistInfo, agree, capture_stream

StepKey = tuple[Any, ...]  # (t, s, per-GPU batch, BN splits, BN sync): what a graph is specialised to

LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


class EagerStep:
    """zero_grad, forward under autocast, loss in fp32, backward; returns the loss tensor."""

    mode = "eager"

    def __init__(self, net: nn.Module, optimizer: torch.optim.Optimizer, loss_fn: LossFn, bf16: bool,
                 device: torch.device) -> None:
        self.net, self.optimizer, self.loss_fn, self.bf16, self.device = net, optimizer, loss_fn, bf16, device
        self.setup_s = 0.0  # time spent capturing or compiling, included in the run's wall-clock

    @property
    def specialisations(self) -> int:
        """How many shapes got their own graph or compilation."""
        return 0

    @property
    def compile_cost(self) -> dict[str, Any] | None:
        """Where the step's compile time went (harness.train.compile_cost); None for a step that compiles nothing."""
        return None

    def release(self) -> None:
        """Free what the step keeps on the device for later steps (its graphs). Call it before the process group
        is destroyed: NCCL (2.26 and later) waits for every graph that captured its collectives to be gone before
        it destroys its communicator, so a graph still alive then hangs the process at exit."""

    def _autocast(self, cache_enabled: bool = True):
        if not self.bf16:
            return contextlib.nullcontext()
        return torch.autocast(self.device.type, dtype=torch.bfloat16, cache_enabled=cache_enabled)

    def _forward_backward(self, clips: torch.Tensor, labels: torch.Tensor, graph_safe: bool = False) -> torch.Tensor:
        """`graph_safe`: zero the gradients in place (a graph must write the same tensors every replay) and
        keep autocast from caching bf16 weight copies (a cache would outlive the capture)."""
        self.optimizer.zero_grad(set_to_none=not graph_safe)
        with self._autocast(cache_enabled=not graph_safe):
            logits = self.net(clips)
        loss = self.loss_fn(logits.float(), labels)
        loss.backward()
        return loss

    def __call__(self, clips: torch.Tensor, labels: torch.Tensor, key: StepKey) -> torch.Tensor:
        return self._forward_backward(clips, labels)


class GraphedStep(EagerStep):
    """Forward + backward replayed from one CUDA graph per step key (see the module docstring)."""

    mode = "cuda_graphs"
    warmup = 3  # eager runs before a capture: lazy initialisation happens here
    ddp_warmup = 11  # eager DDP iterations before DDP's first capture (its first iterations sync with the host)

    def __init__(self, net: nn.Module, optimizer: torch.optim.Optimizer, loss_fn: LossFn, bf16: bool,
                 device: torch.device) -> None:
        require_step_device(self.mode, device)
        super().__init__(net, optimizer, loss_fn, bf16, device)
        self.graphs: dict[StepKey, tuple[torch.cuda.CUDAGraph, torch.Tensor, torch.Tensor, torch.Tensor]] = {}
        self.pool = torch.cuda.graph_pool_handle()
        self.ddp = isinstance(net, nn.parallel.DistributedDataParallel)
        self.eager_runs = 0  # warm-up iterations so far
        self.captured = 0  # graphs captured, still counted once release() has freed them (the run's record)
        # Launches cost nothing in a replay, so sub-batch BN can use its copy-free blocks for more groups.
        set_bn_block_splits(multigrid_bns(net), BLOCK_SPLITS_GRAPHED)

    def __call__(self, clips: torch.Tensor, labels: torch.Tensor, key: StepKey) -> torch.Tensor:
        if key not in self.graphs:
            self.graphs[key] = self._capture(clips, labels)
            self.captured += 1
        graph, static_clips, static_labels, static_loss = self.graphs[key]
        static_clips.copy_(clips)
        static_labels.copy_(labels)
        graph.replay()
        return static_loss

    @property
    def specialisations(self) -> int:
        return self.captured

    def release(self) -> None:
        torch.cuda.synchronize(self.device)
        for graph, *_ in self.graphs.values():
            graph.reset()
        self.graphs.clear()

    def _capture(self, clips: torch.Tensor, labels: torch.Tensor):
        torch.cuda.synchronize(self.device)
        start = time.perf_counter()
        params = [p for group in self.optimizer.param_groups for p in group["params"]]
        for p in params:  # gradients live outside the graphs' pool, so every graph writes the same tensors
            if p.grad is None:
                p.grad = torch.zeros_like(p)
        static_clips, static_labels = clips.clone(), labels.clone()
        # The warm-up runs are not training steps: BN's running statistics are put back afterwards.
        saved = [b.detach().clone() for b in self.net.buffers()]
        # DDP: warm up and capture on the stream DDP was built on; the loader's pinning thread and NCCL's
        # watchdog may touch CUDA meanwhile, which only this thread's capture has to forbid.
        side = capture_stream(self.device) if self.ddp else torch.cuda.Stream(self.device)
        warmup = max(self.warmup, self.ddp_warmup - self.eager_runs) if self.ddp else self.warmup
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            for _ in range(warmup):
                self._forward_backward(static_clips, static_labels, graph_safe=True)
        self.eager_runs += warmup
        torch.cuda.current_stream(self.device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        where = {"stream": side, "capture_error_mode": "thread_local"} if self.ddp else {}
        with torch.cuda.graph(graph, pool=self.pool, **where):
            static_loss = self._forward_backward(static_clips, static_labels, graph_safe=True)
        with torch.no_grad():
            for buffer, value in zip(self.net.buffers(), saved):
                buffer.copy_(value)
        torch.cuda.synchronize(self.device)
        self.setup_s += time.perf_counter() - start
        return graph, static_clips, static_labels, static_loss


def compiled(net: nn.Module, shapes: int) -> nn.Module:
    """`net` through ``torch.compile``, specialised per shape (no dynamic shapes), with room in Dynamo's cache for
    every planned shape and BN layout, and the compile caches beside the harness's data."""
    import torch._dynamo

    compile_cache_dir()
    # Every planned shape and BN layout is its own specialisation; Dynamo's default limit is 8.
    torch._dynamo.config.cache_size_limit = max(torch._dynamo.config.cache_size_limit, 2 * shapes + 4)
    return torch.compile(net, dynamic=False)


class _CompileCosted:
    """A compiled step's compile stages and cache hits, from its making on (CompileCostMeter)."""

    compile_meter: CompileCostMeter

    @property
    def compile_cost(self) -> dict[str, Any]:
        return self.compile_meter.cost()


class CompiledGraphedStep(_CompileCosted, GraphedStep):
    """The forward + backward through ``torch.compile`` (`compiled`) captured into a CUDA graph per step key
    (GraphedStep's); each shape compiles in the capture's warm-up runs, which setup_s counts."""

    mode = "compile_graphs"

    def __init__(self, net: nn.Module, optimizer: torch.optim.Optimizer, loss_fn: LossFn, bf16: bool,
                 device: torch.device, shapes: int = 8) -> None:
        require_step_device(self.mode, device)
        self.compile_meter = CompileCostMeter()
        super().__init__(compiled(net, shapes), optimizer, loss_fn, bf16, device)


def require_step_device(mode: str, device: torch.device) -> None:
    """Raise SpecError (before any work, in the trainer) if `mode` cannot run on `device`."""
    if mode in GRAPHED_STEP_MODES and device.type != "cuda":
        raise SpecError(f"train.step={mode} replays CUDA graphs, but no CUDA GPU is visible here. "
                        "Use train.step=eager.")


def make_step(mode: str, net: nn.Module, optimizer: torch.optim.Optimizer, loss_fn: LossFn, bf16: bool,
              device: torch.device, shapes: int = 8) -> EagerStep:
    if mode == "eager":
        return EagerStep(net, optimizer, loss_fn, bf16, device)
    if mode == "cuda_graphs":
        return GraphedStep(net, optimizer, loss_fn, bf16, device)
    if mode == "compile_graphs":
        return CompiledGraphedStep(net, optimizer, loss_fn, bf16, device, shapes)
    raise ValueError(f"train.step must be one of {STEP_MODES}, got {mode!r}")


class NonFiniteLoss(RuntimeError):
    """An iteration's loss was NaN or infinite on some rank; raised before the optimizer step applies it."""

    def __init__(self, loss: float) -> None:
        super().__init__(f"Loss became {loss}")
        self.loss = loss


def train_iteration(step: EagerStep, clips: torch.Tensor, labels: torch.Tensor, key: StepKey, lr: float,
                    info: DistInfo | None = None) -> float:
    """One training iteration exactly as the trainer runs it; return its loss.

    The trainer and every step benchmark (`harness profile`, `throughput`, `scaling`) call this, so a benchmark
    times what a run spends per iteration: the LR set on every parameter group, `step`'s forward + loss +
    backward (eager, CUDA graph or compiled, under bf16 autocast if `step` was made so; `clips` already in the
    run's memory format), the loss read (a host sync: it is checked for NaN), the ranks' agreement on the loss
    and the shape (one small all-reduce under DDP; `info` None is one process), the optimizer step, and a device
    sync so that timing the call times the work to completion. Raises NonFiniteLoss (before the optimizer step)
    if any rank's loss is not finite.
    """
    for group in step.optimizer.param_groups:
        group["lr"] = lr
    loss = step(clips, labels, key).item()
    t, s = key[0], key[1]
    finite, same_shape = math.isfinite(loss), True
    if info is not None:
        finite, same_shape = agree(info, finite, t, s, len(clips))
    if not finite:
        raise NonFiniteLoss(loss)
    if not same_shape:
        raise RuntimeError(f"ranks disagree on the shape of an iteration (this rank: {len(clips)}×{t}×{s}²): "
                           "this is a bug")
    step.optimizer.step()
    sync_device(step.device)
    return loss
