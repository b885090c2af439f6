"""BN synchronised across 2 CPU processes (gloo) equals plain BN over their joint batch (spec section 3)."""

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn

from harness.models import MultigridBatchNorm3d, set_bn_layout


def _worker(rank: int, world: int, init_file: str, out_dir: str) -> None:
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    try:
        torch.manual_seed(0)
        full = torch.randn(8, 4, 2, 3, 3) * 3 + 1
        grad = torch.randn_like(full)
        bn = MultigridBatchNorm3d(4)
        with torch.no_grad():
            bn.weight.uniform_(0.5, 1.5)
        set_bn_layout([bn], splits=1, sync=2)
        part = full[rank * 4:(rank + 1) * 4].clone().requires_grad_()
        out = bn(part)
        out.backward(grad[rank * 4:(rank + 1) * 4])
        running_var = bn.running_var.clone()
        # Precise BN (momentum None): a cumulative average of synchronised statistics.
        bn.momentum = None
        bn.reset_running_stats()
        with torch.no_grad():
            bn(part)
            bn(part * 2)
        torch.save({"out": out.detach(), "grad": part.grad, "running_var": running_var,
                    "weight_grad": bn.weight.grad, "precise_mean": bn.running_mean.clone()},
                   f"{out_dir}/rank{rank}.pt")
    finally:
        dist.destroy_process_group()


def test_synced_bn_equals_full_batch_bn(tmp_path):
    # fork: the workers need nothing re-imported, which keeps this test to a few seconds.
    mp.start_processes(_worker, args=(2, str(tmp_path / "init"), str(tmp_path)), nprocs=2, join=True,
                       start_method="fork")
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
