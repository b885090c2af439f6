"""Where a training step's time goes: its kernels under torch.profiler, grouped by what they compute.

`profile_kernels(run, steps, ...)` runs `run(steps)` (the already warmed-up steps of one mode) under the profiler
and returns the device time per step, the largest kernels and the time of each group (communication,
convolutions, matrix products, normalisation, elementwise, copies, other). Beside the step's measured wall time
it says what bounds the step: a GPU busy for nearly all of the step is bound by its kernels (then only faster
kernels help, not fewer launches); a GPU idle for much of it is bound by the host launching them (what CUDA
graphs and compiling remove). On the CPU the same is done with the operators' own CPU time.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

# Kernel name patterns per group, first match wins: cuDNN/CUTLASS convolution kernels name their pass
# (fprop/dgrad/wgrad) or "conv"; matrix products are gemm/cublas kernels; the rest by what they do.
GROUPS = (
    ("communication", re.compile(r"nccl", re.I)),  # DDP's all-reduce and synchronised BN
    ("convolution", re.compile(r"conv|fprop|dgrad|wgrad|implicit_?gemm|xmma_.*(fprop|dgrad|wgrad)", re.I)),
    ("matmul", re.compile(r"gemm|cublas|matmul|addmm|\bmm\b|linear", re.I)),
    ("normalisation", re.compile(r"norm|bn_|welford", re.I)),
    ("copy", re.compile(r"copy|memcpy|memset|contiguous|\bcat\b|transpose|nchwToNhwc|nhwcToNchw", re.I)),
    ("elementwise", re.compile(r"elementwise|vectorized|pointwise|triton|relu|add|mul|fill|reduce|sum", re.I)),
)


def kernel_group(name: str) -> str:
    """The group of a kernel or operator name (see GROUPS); 'other' when none matches."""
    return next((group for group, pattern in GROUPS if pattern.search(name)), "other")


def short_name(name: str, width: int = 70) -> str:
    """A kernel's name without its return type and namespaces, cut to `width` characters (for tables)."""
    for noise in ("void ", "at::native::", "(anonymous namespace)::", "cudnn::", "at::"):
        name = name.replace(noise, "")
    return name if len(name) <= width else name[:width - 1] + "…"


def _device_events(prof: Any, on_gpu: bool) -> list[tuple[str, float]]:
    """(name, self time in µs) of every kernel (GPU) or operator (CPU) the profiler saw."""
    import torch

    out = []
    for event in prof.key_averages():
        if on_gpu:
            if event.device_type != torch.autograd.DeviceType.CUDA:
                continue
            micros = getattr(event, "self_device_time_total", None)
            if micros is None:  # older PyTorch
                micros = event.self_cuda_time_total
        else:
            micros = event.self_cpu_time_total
        if micros > 0:
            out.append((event.key, float(micros)))
    return out


def profile_kernels(run: Callable[[int], None], steps: int, device: Any, step_ms: float,
                    top: int = 10) -> dict[str, Any]:
    """Profile `run(steps)` on torch.device `device`; per step: device ms, busy share of `step_ms`, top kernels
    and group totals. (torch is imported here, so reports can use `short_name` without it.)"""
    import torch

    on_gpu = device.type == "cuda"
    activities = [torch.profiler.ProfilerActivity.CPU]
    if on_gpu:
        activities.append(torch.profiler.ProfilerActivity.CUDA)
        torch.cuda.synchronize(device)
    with torch.profiler.profile(activities=activities) as prof:
        run(steps)
        if on_gpu:
            torch.cuda.synchronize(device)
    events = _device_events(prof, on_gpu)
    total_ms = sum(micros for _, micros in events) / 1e3 / steps
    groups: dict[str, float] = {}
    for name, micros in events:
        group = kernel_group(name)
        groups[group] = groups.get(group, 0.0) + micros / 1e3 / steps
    largest = sorted(events, key=lambda e: -e[1])[:top]
    return {
        "device_ms_per_step": total_ms,
        # On the GPU: the share of the step's wall time that kernels run (≈1: kernel-bound; well below: the
        # host's launches leave the GPU waiting). On the CPU operators nest, so this is only indicative.
        "busy_share": total_ms / step_ms if step_ms > 0 else None,
        "groups_ms": dict(sorted(groups.items(), key=lambda kv: -kv[1])),
        "top": [{"name": name[:160], "group": kernel_group(name), "ms_per_step": micros / 1e3 / steps,
                 "share": micros / 1e3 / steps / total_ms if total_ms else 0.0} for name, micros in largest],
    }
