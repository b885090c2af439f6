"""BN synchronised across 2 processes equals plain BN over their joint batch (spec section 3): CPU processes
over gloo (the portable path), and on a 2-GPU machine NCCL with the fused CUDA kernels, in fp32 and bf16."""

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn

from harness.models import MultigridBatchNorm3d, set_bn_layout


def _worker(rank: int, world: int, init_file: str, out_dir: str, device: str) -> None:
    backend = "nccl" if device == "cuda" else "gloo"
    if device == "cuda":
        torch.cuda.set_device(rank)
    dist.init_process_group(backend, init_method=f"file://{init_file}", rank=rank, world_size=world)
    try:
        torch.manual_seed(0)
        full = torch.randn(8, 4, 2, 3, 3) * 3 + 1
        grad = torch.randn_like(full)
        bn = MultigridBatchNorm3d(4)
        with torch.no_grad():
            bn.weight.uniform_(0.5, 1.5)
        bn.to(device)
        set_bn_layout([bn], splits=1, sync=2)
        fmt = torch.channels_last_3d if device == "cuda" else torch.contiguous_format  # as the trainer's
        part = full[rank * 4:(rank + 1) * 4].to(device).contiguous(memory_format=fmt).requires_grad_()
        out = bn(part)
        out.backward(grad[rank * 4:(rank + 1) * 4].to(device))
        result = {"out": out.detach().cpu(), "grad": part.grad.cpu(), "running_var": bn.running_var.clone().cpu(),
                  "weight_grad": bn.weight.grad.clone().cpu()}
        if device == "cuda":  # the trainer's precision: bf16 activations under autocast, fp32 parameters
            half = part.detach().clone().requires_grad_()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out16 = bn(half.bfloat16())
            out16.backward(grad[rank * 4:(rank + 1) * 4].to(device, torch.bfloat16))
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


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=needs_two_gpus)])
def test_synced_bn_equals_full_batch_bn(tmp_path, device):
    # CPU: fork, the workers need nothing re-imported (a few seconds). CUDA cannot be forked once initialised.
    mp.start_processes(_worker, args=(2, str(tmp_path / "init"), str(tmp_path), device), nprocs=2, join=True,
                       start_method="fork" if device == "cpu" else "spawn")
    torch.manual_seed(0)
    full = (torch.randn(8, 4, 2, 3, 3) * 3 + 1).requires_grad_()
    grad = torch.randn_like(full)
    plain = nn.BatchNorm3d(4)
    with torch.no_grad():
        plain.weight.uniform_(0.5, 1.5)
    out = plain(full)
    out.backward(grad)
    ranks = [torch.load(tmp_path / f"rank{r}.pt") for r in range(2)]
    torch.testing.assert_close(torch.cat([r["out"] for r in ranks]), out.detach(), rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(torch.cat([r["grad"] for r in ranks]), full.grad, rtol=1e-4, atol=1e-5)
    for r in ranks:
        torch.testing.assert_close(r["running_var"], plain.running_var, rtol=1e-4, atol=1e-5)
    full_mean = full.detach().mean((0, 2, 3, 4))
    for r in ranks:
        torch.testing.assert_close(r["precise_mean"], (full_mean + 2 * full_mean) / 2, rtol=1e-4, atol=1e-5)
    # Each rank's weight gradient covers its own half; DDP would sum them.
    torch.testing.assert_close(ranks[0]["weight_grad"] + ranks[1]["weight_grad"], plain.weight.grad,
                               rtol=1e-4, atol=1e-4)
    if device == "cuda":  # bf16: within bf16 rounding of the fp32 joint-batch result
        torch.testing.assert_close(torch.cat([r["out16"] for r in ranks]), out.detach(), rtol=2e-2, atol=2e-2)
        torch.testing.assert_close(torch.cat([r["grad16"] for r in ranks]), full.grad, rtol=5e-2, atol=5e-2)
