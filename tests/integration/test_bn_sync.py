"""BN synchronised across 2 processes equals plain BN over their joint batch (paper §3): CPU processes
over gloo (the portable path), and on a 2-GPU machine NCCL with the fused CUDA kernels, in fp32 and bf16."""

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn

from harness.models import MultigridBatchNorm3d, set_bn_layout

CLIPS = 4  # per rank


def _worker(rank: int, world: int, sync: int, init_file: str, out_dir: str, device: str) -> None:
    backend = "nccl" if device == "cuda" else "gloo"
    if device == "cuda":
        torch.cuda.set_device(rank)
    else:  # a forked child must not use the parent's OpenMP pool (seen failing once on a 32-core machine)
        torch.set_num_threads(1)
    dist.init_process_group(backend, init_method=f"file://{init_file}", rank=rank, world_size=world)
    try:
        torch.manual_seed(0)
        full = torch.randn(CLIPS * world, 4, 2, 3, 3) * 3 + 1
        grad = torch.randn_like(full)
        bn = MultigridBatchNorm3d(4)
        with torch.no_grad():
            bn.weight.uniform_(0.5, 1.5)
        bn.to(device)
        set_bn_layout([bn], splits=1, sync=sync)
        fmt = torch.channels_last_3d if device == "cuda" else torch.contiguous_format  # as the trainer's
        part = full[rank * CLIPS:(rank + 1) * CLIPS].to(device).contiguous(memory_format=fmt).requires_grad_()
        out = bn(part)
        out.backward(grad[rank * CLIPS:(rank + 1) * CLIPS].to(device))
        result = {"out": out.detach().cpu(), "grad": part.grad.cpu(), "running_var": bn.running_var.clone().cpu(),
                  "weight_grad": bn.weight.grad.clone().cpu()}
        if device == "cuda":  # the trainer's precision: bf16 activations under autocast, fp32 parameters
            half = part.detach().clone().requires_grad_()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out16 = bn(half.bfloat16())
            out16.backward(grad[rank * CLIPS:(rank + 1) * CLIPS].to(device, torch.bfloat16))
            result |= {"out16": out16.detach().float().cpu(), "grad16": half.grad.cpu()}
        # Precise BN (momentum None): a cumulative average of synchronised statistics.
        bn.momentum = None
        bn.reset_running_stats()
        with torch.no_grad():
            bn(part)
            bn(part * 2)
        torch.save(result | {"precise_mean": bn.running_mean.cpu()}, f"{out_dir}/rank{rank}.pt")
    finally:
        dist.destroy_process_group()


needs_two_gpus = pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 CUDA GPUs")


@pytest.mark.parametrize(("device", "world", "sync"), [
    ("cpu", 2, 2),
    ("cpu", 4, 2),  # groups of 2 among 4 ranks, as an 8-GPU plan's "sync 2" and "sync 4" phases make them
    pytest.param("cuda", 2, 2, marks=[pytest.mark.gpu, needs_two_gpus]),
])
def test_synced_bn_equals_bn_over_the_groups_joint_batch(tmp_path, device, world, sync):
    # CPU: fork, the workers need nothing re-imported (a few seconds). CUDA cannot be forked once initialised.
    mp.start_processes(_worker, args=(world, sync, str(tmp_path / "init"), str(tmp_path), device), nprocs=world,
                       join=True, start_method="fork" if device == "cpu" else "spawn")
    torch.manual_seed(0)
    full = torch.randn(CLIPS * world, 4, 2, 3, 3) * 3 + 1
    grad = torch.randn_like(full)
    weight = torch.empty(4).uniform_(0.5, 1.5)  # the workers' draw, in the same order
    ranks = [torch.load(tmp_path / f"rank{r}.pt") for r in range(world)]
    for first in range(0, world, sync):
        group = ranks[first:first + sync]
        joint = full[first * CLIPS:(first + sync) * CLIPS].clone().requires_grad_()
        plain = nn.BatchNorm3d(4)
        with torch.no_grad():
            plain.weight.copy_(weight)
        out = plain(joint)
        out.backward(grad[first * CLIPS:(first + sync) * CLIPS])
        torch.testing.assert_close(torch.cat([r["out"] for r in group]), out.detach(), rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(torch.cat([r["grad"] for r in group]), joint.grad, rtol=1e-4, atol=1e-5)
        joint_mean = joint.detach().mean((0, 2, 3, 4))
        for r in group:
            torch.testing.assert_close(r["running_var"], plain.running_var, rtol=1e-4, atol=1e-5)
            # Precise BN (momentum None) over x and 2x: the average of the two batch means.
            torch.testing.assert_close(r["precise_mean"], (joint_mean + 2 * joint_mean) / 2, rtol=1e-4, atol=1e-5)
        # Each rank's weight gradient covers its own clips; DDP sums them.
        torch.testing.assert_close(sum(r["weight_grad"] for r in group), plain.weight.grad, rtol=1e-4, atol=1e-4)
        if device == "cuda":  # bf16: within bf16 rounding of the fp32 joint-batch result
            torch.testing.assert_close(torch.cat([r["out16"] for r in group]), out.detach(), rtol=2e-2, atol=2e-2)
            torch.testing.assert_close(torch.cat([r["grad16"] for r in group]), joint.grad, rtol=5e-2, atol=5e-2)
