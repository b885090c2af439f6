"""`harness scaling`: data-parallel step time of every planned shape at a fixed global batch.

Run it once per process count at the same recipe and global batch, e.g.

    harness scaling --suite kinetics_ablation --scale proxy --out one.json
    torchrun --nproc_per_node=2 -m harness scaling --suite kinetics_ablation --scale proxy --out two.json

Each process count re-plans the suite's multigrid and baseline runs for `num_gpus = world size`: by default
at the scale's global batch (strong scaling: N GPUs share the batch of one), or with `per_gpu_batch` at that
many base-shape clips per GPU, the global batch growing with the GPUs (weak scaling, as the paper's recipes
train: 8 clips per GPU on 8 GPUs). Every shape runs at the per-GPU batch and BN layout (sub-batch
splits, or BN synchronised across GPUs when a GPU holds fewer clips than the BN base size) that a
real run at that size would use. Each timed step is the trainer's iteration (train_iteration, with the
ranks' per-iteration agreement all-reduce) through DDP and the trainer's eager step (or, with
`--step cuda_graphs`, one CUDA graph per shape that captures DDP's and synchronised BN's collectives
too) on random clips (no data loading); the median over ranks' synchronised step times is reported
per shape.
"""

from __future__ import annotations

from functools import partial

import torch
from torch import nn

from harness.device import memory_format_for, use_bf16, use_channels_last
from harness.measure.step_bench import median_ms
from harness.models import build_model, multigrid_bns, set_bn_layout
from harness.models.bn import require_bn_kernels_device, set_bn_impls
from harness.schedule import baseline_spec, build_plan
from harness.schedule.trained import iterations_by_layout
from harness.spec import RunSpec, SpecError
from harness.train.distributed import cleanup, data_parallel, init_distributed
from harness.train.step import make_step, require_step_device, train_iteration

Key = tuple[int, int, int, int, int]  # (t, s, per-GPU batch, BN splits, BN sync)


def suite_specs(suite: str, scale: str, world: int, variants: list[str], per_gpu_batch: int | None = None,
                sub_batch_bn: str | None = None) -> list[RunSpec]:
    """The RunSpecs of a suite's `variants` at `scale`, planned for `world` GPUs (no data needed); with
    `per_gpu_batch`, at that many base-shape clips per GPU."""
    from harness.suite import load_scale, load_suite, resolve_suite

    overrides = [f"num_gpus={world}"]
    if per_gpu_batch is not None:
        overrides.append(f"solver.batch_size={per_gpu_batch * world}")
    if sub_batch_bn is not None:
        overrides.append(f"train.sub_batch_bn={sub_batch_bn}")
    suite_def = load_suite(suite)
    suite_def.require_variants(variants, "--variants")
    runs = [r for r in resolve_suite(suite_def, load_scale(scale), overrides, data_root="/nonexistent")
            if r.run.variant in variants]
    if all(r.spec is None for r in runs):
        skipped = "; ".join(f"{r.run.variant} {r.skip_reason}" for r in runs)
        raise SpecError(f"--variants: none of them is timed in suite {suite} at scale {scale} ({skipped}). Name "
                        f"a variant of this suite that needs no such setting, or another --suite.")
    return [r.spec for r in runs if r.spec is not None]


def measure_scaling(suite: str, scale: str, variants: list[str], *, warmup: int = 5, repeats: int = 15,
                    step_mode: str = "eager", per_gpu_batch: int | None = None,
                    sub_batch_bn: str | None = None) -> dict:
    """Time every planned shape; `step_mode` eager or cuda_graphs (a shape's capture falls in its warm-up);
    `per_gpu_batch` for weak scaling (None: the scale's global batch); `sub_batch_bn` the runs' BN kernels."""
    if step_mode not in ("eager", "cuda_graphs"):
        raise SystemExit(f"harness scaling: --step must be eager or cuda_graphs, got {step_mode!r}")
    if per_gpu_batch is not None and per_gpu_batch < 1:
        raise SystemExit(f"harness scaling: --per-gpu-batch must be at least 1, got {per_gpu_batch}")
    info = init_distributed("auto")
    step = None
    try:
        require_step_device(step_mode, info.device)
        specs = suite_specs(suite, scale, info.world_size, variants, per_gpu_batch, sub_batch_bn)
        first = specs[0]
        counts: dict[Key, dict[str, int]] = {}
        for spec in specs:
            for label, plan in ((spec.variant, build_plan(spec)), ("baseline_of_" + str(spec.variant),
                                                                    build_plan(baseline_spec(spec)))):
                for key, n in iterations_by_layout(plan).items():
                    counts.setdefault(key, {})[str(label)] = n
        require_bn_kernels_device(first.train.sub_batch_bn, first.train.plain_bn_impl, info.device)
        on_gpu = info.device.type == "cuda"
        fmt = memory_format_for(use_channels_last(info.device))
        torch.manual_seed(0)
        model = build_model(first.model, first.data.num_classes).to(info.device, memory_format=fmt).train()
        net = data_parallel(model, info, for_graphs=step_mode == "cuda_graphs")
        lr = 1e-6
        optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
        step = make_step(step_mode, net, optimizer, nn.functional.cross_entropy, use_bf16(info.device), info.device)
        bns = multigrid_bns(model)
        set_bn_impls(bns, first.train)
        rows = []
        for key in sorted(counts):
            t, s, batch, splits, sync = key
            set_bn_layout(bns, splits, sync)
            clips = torch.randn(batch, 3, t, s, s, device=info.device).contiguous(memory_format=fmt)
            labels = torch.randint(0, first.data.num_classes, (batch,), device=info.device)
            ms = median_ms(partial(train_iteration, step, clips, labels, key, lr, info), info.device,
                           warmup=warmup, repeats=repeats)
            rows.append({"t": t, "s": s, "per_gpu_batch": batch, "global_batch": batch * info.world_size,
                         "bn_splits": splits, "bn_sync": sync, "median_ms": ms,
                         "clips_per_s": batch * info.world_size / ms * 1e3, "iterations": counts[key]})
        predicted = {}
        for label in sorted({lab for c in counts.values() for lab in c}):
            predicted[label] = sum(r["iterations"].get(label, 0) * r["median_ms"] / 1e3 for r in rows)
        device = torch.cuda.get_device_name(info.device) if on_gpu else "cpu"
        return {"suite": suite, "scale": scale, "world_size": info.world_size, "device": device,
                "global_batch": first.solver.batch_size, "fixed_per_gpu_batch": per_gpu_batch,
                "sub_batch_bn": first.train.sub_batch_bn, "step": step_mode, "warmup": warmup, "repeats": repeats,
                "shapes": rows,
                "predicted_s": predicted,
                "is_main": info.is_main}
    finally:
        if step is not None:
            step.release()  # before the process group: NCCL waits for graphs that captured its collectives
        cleanup(info)
