"""Where a data-parallel step's time goes at one proxy shape: run under torchrun with 1 or 2 processes.

Times the same training step three ways on every rank (the bare model, the model under DDP, DDP with the
Plan's BN synchronisation) and prints, on rank 0, a torch.profiler table of the DDP step: whether the extra
time over one GPU is GPU work (NCCL, kernels) or the host falling behind.
Usage: torchrun --nproc_per_node=N tools/device/ddp_profile.py T S PER_GPU_BATCH [SYNC]
"""

import sys
import time

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from harness.device import memory_format_for, use_channels_last
from harness.measure.scaling import suite_specs
from harness.models import build_model, multigrid_bns, set_bn_layout
from harness.train.distributed import cleanup, init_distributed
from harness.train.step import EagerStep


def timed(step, optimizer, clips, labels, key, device, n=20) -> float:
    for _ in range(5):
        step(clips, labels, key).item()
        optimizer.step()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    for _ in range(n):
        step(clips, labels, key).item()
        optimizer.step()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return (time.perf_counter() - start) / n * 1e3


def main() -> None:
    t, s, batch = (int(a) for a in sys.argv[1:4])
    sync = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    info = init_distributed("auto")
    on_gpu = info.device.type == "cuda"
    fmt = memory_format_for(use_channels_last(info.device))
    torch.manual_seed(0)
    spec = suite_specs("kinetics_ablation", "proxy", info.world_size, ["baseline"])[0]  # the proxy's model
    model = build_model(spec.model, spec.data.num_classes).to(info.device, memory_format=fmt).train()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-6, momentum=0.9)
    clips = torch.randn(batch, 3, t, s, s, device=info.device).contiguous(memory_format=fmt)
    labels = torch.randint(0, 24, (batch,), device=info.device)
    key = (t, s, batch, 1, sync)
    bns = multigrid_bns(model)
    loss = nn.functional.cross_entropy
    results = {}
    set_bn_layout(bns, 1, 1)
    results["bare model"] = timed(EagerStep(model, optimizer, loss, on_gpu, info.device), optimizer, clips, labels,
                                  key, info.device)
    net = DistributedDataParallel(model, device_ids=[info.device.index] if on_gpu else None) \
        if info.distributed else model
    ddp_step = EagerStep(net, optimizer, loss, on_gpu, info.device)
    results["DDP, plain BN"] = timed(ddp_step, optimizer, clips, labels, key, info.device)
    if sync > 1:
        set_bn_layout(bns, 1, sync)
        results[f"DDP, BN synchronised over {sync}"] = timed(ddp_step, optimizer, clips, labels, key, info.device)
    if info.is_main:
        print(f"{info.world_size} process(es), {t}x{s}^2, {batch} clips per process")
        for name, ms in results.items():
            print(f"  {name:32} {ms:7.1f} ms")
    activities = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if on_gpu else [])
    with torch.profiler.profile(activities=activities) as prof:
        start = time.perf_counter()
        for _ in range(5):
            ddp_step(clips, labels, key).item()
            optimizer.step()
        if on_gpu:
            torch.cuda.synchronize(info.device)
        wall = (time.perf_counter() - start) / 5 * 1e3
    if info.is_main:
        events = prof.key_averages()
        gpu_ms = sum(e.self_device_time_total for e in events) / 1e3 / 5 if on_gpu else 0.0
        print(f"profiled step: {wall:.1f} ms wall, {gpu_ms:.1f} ms of GPU kernels (sum, all streams)")
        sort = "self_cuda_time_total" if on_gpu else "self_cpu_time_total"
        print(events.table(sort_by=sort, row_limit=14, max_name_column_width=48))
    cleanup(info)


if __name__ == "__main__":
    main()
