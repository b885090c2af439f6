"""Model FLOPs utilisation of a training step: how far the step is from what the GPU can compute.

Conventions (FLOP_CONVENTION): fvcore counts one fused multiply-add as one "flop" (harness.models.flops), the
number model zoos publish; a multiply-add is 2 FLOPs, and a training step (forward, then backward: gradients of
the activations and of the weights) costs about 3 forward passes, so one clip's training FLOPs are
2 × 3 × its forward multiply-adds. Achieved FLOP/s is that times the clips per second the step trains; its share
of the card's dense bf16 peak (PEAK_BF16_TFLOPS) is the model FLOPs utilisation (MFU), its share of a large bf16
matrix product timed on the same device (`matmul_tflops`) how far it is from the rate the card reaches in practice.
"""

from __future__ import annotations

import math
import time

import torch

from harness.device import sync_device

FLOP_CONVENTION = ("training FLOPs per clip = 2 (FLOPs per multiply-add) × 3 (forward + backward) × fvcore's forward "
                   "multiply-adds of one clip; share_of_peak: of the card's dense BF16 Tensor Core peak (NVIDIA's "
                   "datasheets, without sparsity); share_of_matmul: of a bf16 matrix product timed on the device")

# Dense BF16 Tensor Core peaks in TFLOP/s (the datasheets' figures with sparsity halved), matched in order against
# the name CUDA gives the card: NVIDIA H100 datasheet (SXM 989, NVL 835, PCIe 756), H200 datasheet (SXM 989,
# NVL 835), A100 datasheet (312, SXM and PCIe).
PEAK_BF16_TFLOPS = (("H100 PCIe", 756.0), ("H100 NVL", 835.0), ("H100", 989.0), ("H200 NVL", 835.0),
                    ("H200", 989.0), ("A100", 312.0))
TRAIN_FLOPS_PER_FORWARD_MAC = 2 * 3


def peak_tflops(card: str | None) -> float | None:
    """The dense bf16 peak of the GPU named `card` (e.g. "NVIDIA H200"); None for a CPU or a card not listed."""
    if card is None:
        return None
    return next((peak for name, peak in PEAK_BF16_TFLOPS if name in card), None)


def mfu_fields(forward_gmacs: float, clips_per_s: float, peak: float | None, matmul: float | None) -> dict:
    """One step's FLOPs utilisation: its model's training GFLOP per clip, the TFLOP/s it achieves, and their shares
    of the card's peak and of its measured matmul rate (None where either is unknown)."""
    train_gflop = TRAIN_FLOPS_PER_FORWARD_MAC * forward_gmacs
    achieved = train_gflop * clips_per_s / 1e3

    def share(of: float | None) -> float | None:
        return achieved / of if of and not math.isnan(achieved) else None

    return {"forward_gmacs_per_clip": forward_gmacs, "train_gflop_per_clip": train_gflop,
            "achieved_tflop_s": achieved, "peak_tflop_s": peak, "share_of_peak": share(peak),
            "matmul_tflop_s": matmul, "share_of_matmul": share(matmul)}


def matmul_tflops(device: torch.device, n: int = 8192, repeats: int = 20) -> float:
    """The device's bf16 (GPU) or fp32 (CPU) dense matrix-product rate, measured: the practical ceiling."""
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    n = n if device.type == "cuda" else 1024
    a, b = (torch.randn(n, n, device=device, dtype=dtype) for _ in range(2))
    for _ in range(3):
        a @ b
    sync_device(device)
    start = time.perf_counter()
    for _ in range(repeats):
        a @ b
    sync_device(device)
    return 2 * n**3 * repeats / (time.perf_counter() - start) / 1e12


def card_name(device: torch.device) -> str | None:
    """The GPU's name as CUDA gives it, None for a CPU."""
    return torch.cuda.get_device_name(device) if device.type == "cuda" else None


def gpu_matmul_tflops(device: torch.device) -> float | None:
    """The measured bf16 matmul rate on a GPU; None on a CPU (its fp32 rate says nothing of a bf16 step's ceiling)."""
    return matmul_tflops(device) if device.type == "cuda" else None
