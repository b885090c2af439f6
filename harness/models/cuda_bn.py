"""Sub-batch BN as one C++ operation (`train.sub_batch_bn=cuda_cpp`): the Triton path's computation with its host
side in C++.

Eagerly, the Triton kernels (:mod:`harness.models.triton_bn`) pay a Python autograd function per layer, forward and
backward, which at the paper's shapes makes the host, not the GPU, set the step's pace
(results/profile/sub_batch_bn_bench_h100/bn_host_cost_*.json). Here the kernels are CUDA C++ (`csrc/sub_batch_bn.cu`:
groups are contiguous blocks of the batch read straight from channels-last memory, statistics in fp32, the running
statistics moved inside a kernel) behind a C++ autograd function, so a layer costs the host a few CUDA launches and
allocations.

The extension is built with PyTorch's extension builder the first time a process uses it (later processes load the
build from PyTorch's extensions folder), which needs CUDA's compiler (nvcc) and a GPU.
"""

from __future__ import annotations

import logging
import time
from functools import cache
from pathlib import Path
from types import ModuleType

import torch

log = logging.getLogger("harness.models")

SOURCE = Path(__file__).parent / "csrc" / "sub_batch_bn.cu"
EXTENSION = "harness_sub_batch_bn"
_ACTIVATION_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


class ExtensionUnavailable(RuntimeError):
    """The C++ sub-batch BN cannot be built or run here; the message says what to use instead."""


def _no_compiler_reason() -> str | None:
    """Why the extension cannot be built here (no GPU, no nvcc), or None."""
    if not torch.cuda.is_available():
        return "no CUDA GPU is visible here"
    from torch.utils.cpp_extension import CUDA_HOME

    if CUDA_HOME is None or not (Path(CUDA_HOME) / "bin" / "nvcc").exists():
        return "CUDA's compiler (nvcc) was not found: set CUDA_HOME to a CUDA toolkit"
    return None


@cache
def extension() -> ModuleType:
    """The built extension (building it on first use in this process, or loading an earlier build)."""
    reason = _no_compiler_reason()
    if reason is not None:
        raise ExtensionUnavailable(f"train.sub_batch_bn=cuda_cpp (and train.plain_bn_impl=cuda_cpp) builds CUDA C++ "
                                   f"kernels, but {reason}. Use train.sub_batch_bn=triton (the same computation in "
                                   "Triton) or auto, and train.plain_bn_impl=cudnn.")
    from torch.utils.cpp_extension import load

    # (for the visible GPUs' architectures, unless TORCH_CUDA_ARCH_LIST names others)
    log.info("sub-batch BN: building the C++ kernels, or loading an earlier build (the first build on a machine "
             "takes about a minute)")
    start = time.perf_counter()
    try:
        module = load(EXTENSION, sources=[str(SOURCE)], extra_cuda_cflags=["-O3"], verbose=False)
    except (RuntimeError, OSError, ImportError) as error:
        raise ExtensionUnavailable(f"building the C++ sub-batch BN ({SOURCE}) failed: {error}. "
                                   "Use train.sub_batch_bn=triton or auto.") from error
    log.info("sub-batch BN: C++ kernels ready in %.1f s", time.perf_counter() - start)
    return module


def cuda_sub_batch_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, splits: int, eps: float,
                        running_mean: torch.Tensor | None = None, running_var: torch.Tensor | None = None,
                        factor: float = 0.0, stats: bool = True
                        ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
    """(y, block means, block unbiased variances) of sub-batch BN over `splits` contiguous blocks of the batch, as
    :func:`harness.models.triton_bn.triton_sub_batch_norm` returns them (without `stats`, (y, None, None): less for
    autograd to keep where the running statistics are all the caller needs); with `running_mean` and `running_var`
    the kernels also move them towards the batch's statistics by `factor`."""
    if not x.is_cuda:
        raise ExtensionUnavailable("train.sub_batch_bn=cuda_cpp runs on CUDA tensors; use train.sub_batch_bn=auto "
                                   "on the CPU.")
    # What the kernels cannot take is refused here, in Python, rather than by the extension's own checks.
    if x.dim() not in (2, 4, 5) or x.dtype not in _ACTIVATION_DTYPES:
        raise ValueError(f"sub-batch BN's CUDA kernels take N×C, N×C×H×W or N×C×T×H×W activations in float32, "
                         f"float16 or bfloat16, got {tuple(x.shape)} in {x.dtype}")
    if splits < 1 or x.shape[0] % splits:
        raise ValueError(f"sub-batch BN: a batch of {x.shape[0]} clips cannot be split into {splits} equal groups")
    return extension().sub_batch_bn(x, weight, bias, splits, eps, running_mean, running_var, factor, stats)
