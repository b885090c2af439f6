"""Host-side cost of one BN layer's training forward + backward, per sub-batch BN implementation (GPU).

Eager steps with the Triton sub-batch BN take about twice as long as under CUDA graphs, where the same kernels run
(docs/gpu-notes.md). That points at the host: the time the CPU spends issuing a layer's work. This probe measures it
directly: one `MultigridBatchNorm3d` on an activation so small that the GPU's work is negligible, so a loop's wall
time per iteration is the host's time per layer. It then profiles the Triton and C++ paths' host time with cProfile,
which says what the time is spent on (launches, small tensor ops, autograd).

Usage (on a GPU machine): python3 tools/device/bn_host_cost.py [OUT.json]
"""

import cProfile
import io
import json
import pstats
import sys
import time

import torch

from harness.models.bn import MultigridBatchNorm3d
from harness.provenance import provenance

# (train.sub_batch_bn, k); ("triton", 1) and ("cuda_cpp", 1) are plain BN through those kernels
# (train.plain_bn_impl=triton or cuda_cpp)
KERNELS = ("triton", "cuda_cpp")
CONFIGS = [("plain", 1), ("triton", 1), ("cuda_cpp", 1), ("auto", 2), ("auto", 4), ("blocks", 4), ("interleaved", 4),
           ("triton", 2), ("triton", 4), ("triton", 8), ("cuda_cpp", 2), ("cuda_cpp", 4), ("cuda_cpp", 8),
           ("compiled", 4)]
ITERATIONS = 300


def layer_and_input(impl: str, splits: int) -> tuple[MultigridBatchNorm3d, torch.Tensor, torch.Tensor]:
    bn = MultigridBatchNorm3d(64).cuda()
    bn.num_splits = splits
    bn.sub_batch_impl = "auto" if impl == "plain" else impl
    bn.plain_impl = impl if impl in KERNELS and splits == 1 else "cudnn"
    x = torch.randn(8, 64, 4, 8, 8, device="cuda", dtype=torch.bfloat16).contiguous(
        memory_format=torch.channels_last_3d).requires_grad_()
    grad = torch.randn_like(x)
    return bn, x, grad


def step(bn: MultigridBatchNorm3d, x: torch.Tensor, grad: torch.Tensor) -> None:
    with torch.autocast("cuda", dtype=torch.bfloat16):
        y = bn(x)
    torch.autograd.backward(y, grad)


def host_us_per_layer(impl: str, splits: int) -> float:
    bn, x, grad = layer_and_input(impl, splits)
    for _ in range(20):
        step(bn, x, grad)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(ITERATIONS):
        step(bn, x, grad)
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / ITERATIONS * 1e6


def profile(impl: str, splits: int) -> str:
    bn, x, grad = layer_and_input(impl, splits)
    for _ in range(20):
        step(bn, x, grad)
    torch.cuda.synchronize()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(ITERATIONS):
        step(bn, x, grad)
    torch.cuda.synchronize()
    profiler.disable()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(30)
    return text.getvalue()


def main() -> None:
    rows = []
    for impl, splits in CONFIGS:
        try:
            us = host_us_per_layer(impl, splits)
        except Exception as error:  # one implementation failing must not hide the others' numbers
            print(f"{impl} k={splits}: {type(error).__name__}: {error}")
            continue
        rows.append({"impl": impl, "splits": splits, "host_us_per_layer": round(us, 1)})
        print(f"{impl:12s} k={splits}: {us:8.1f} us per layer (forward + backward)")
    report = profile("triton", 4)
    print(report)
    try:
        report_cpp = profile("cuda_cpp", 4)
    except Exception as error:  # the C++ kernels failing to build must not lose the record
        report_cpp = f"{type(error).__name__}: {error}"
    print(report_cpp)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows, "activation": [8, 64, 4, 8, 8],
                       "cprofile_triton_k4": report, "cprofile_cuda_cpp_k4": report_cpp, "provenance": provenance()},
                      f, indent=1)


if __name__ == "__main__":
    main()
