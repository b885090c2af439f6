"""`harness models check`: forward and backward of a model at every shape a Plan produces."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from harness.device import sync_device
from harness.models.bn import multigrid_bns, set_bn_layout
from harness.schedule import Plan
from harness.schedule.trained import planned_clip_sizes
from harness.spec import ModelSpec


@dataclass(frozen=True)
class ShapeCheck:
    t: int
    s: int
    ok: bool
    seconds: float
    error: str = ""


def check_shapes(model: nn.Module, shapes: list[tuple[int, int]], num_classes: int, batch: int = 2,
                 progress=None, device: torch.device | None = None,
                 on_result: Callable[[ShapeCheck], None] | None = None) -> list[ShapeCheck]:
    """Run one training step's forward and backward (plain BN over `batch` clips) at each shape, on `device`
    (default the CPU); `on_result` sees each shape's result as soon as it is known."""
    device = device or torch.device("cpu")
    model.to(device).train()
    bns = multigrid_bns(model)
    set_bn_layout(bns, splits=1, sync=1)
    results = []
    for t, s in shapes:
        start = time.perf_counter()
        try:
            clip = torch.randn(batch, 3, t, s, s, device=device)
            logits = model(clip)
            if tuple(logits.shape) != (batch, num_classes):
                raise ValueError(f"output shape {tuple(logits.shape)}, expected {(batch, num_classes)}")
            logits.float().logsumexp(1).sum().backward()
            model.zero_grad(set_to_none=True)
            sync_device(device)  # the shape's time ends when its work does
            results.append(ShapeCheck(t, s, True, time.perf_counter() - start))
        except Exception as err:  # report every failure, keep checking the other shapes
            results.append(ShapeCheck(t, s, False, time.perf_counter() - start, f"{type(err).__name__}: {err}"))
        if on_result is not None:
            on_result(results[-1])
        if progress is not None:
            progress.update(1)
    return results


def require_planned_frames(plan: Plan) -> None:
    """Raise SpecError if the plan trains at fewer frames than the registered model accepts (e.g. t < α)."""
    from harness.models.registry import get_entry
    from harness.spec import SpecError

    spec = plan.spec
    if spec.model.target:
        return  # a user model states no minimum: `harness models check` tells
    entry = get_entry(spec.model.name)
    shortest = min(t for t, _ in planned_clip_sizes(plan))
    if shortest < entry.min_frames:
        raise SpecError(
            f"The plan trains at {shortest} frames but {entry.name} needs at least {entry.min_frames}. Raise "
            f"data.num_frames (now {spec.data.num_frames}) or the time factors of 'multigrid.long_cycle_factors'.")


def smallest_crop(model: ModelSpec, num_classes: int, frames: int, crop: int) -> int | None:
    """The smallest crop from `crop` up at which `model` runs a clip of `frames` frames (`crop` itself where it runs
    there or the model cannot be probed), or None where no crop up to PROBE_LIMIT px helps. Found by running the model
    on the meta device, shapes without memory or compute, so that a refusal names the size the model's own
    downsampling needs rather than one number for every model."""
    from harness.models.build import build_model

    with torch.device("meta"):
        net = build_model(model, num_classes).eval()

    def runs(s: int) -> bool:
        try:
            with torch.no_grad():
                net(torch.empty(1, 3, frames, s, s, device="meta"))
        except NotImplementedError:  # an operator without a meta kernel: the probe cannot tell, the count will
            return True
        except RuntimeError:  # a pooling or convolution window larger than its input
            return False
        return True

    if runs(crop):
        return crop
    refused, high = crop, 2 * crop
    while not runs(high):  # doubling, then bisecting: the feature maps only grow with the crop
        if high >= PROBE_LIMIT:
            return None
        refused, high = high, min(2 * high, PROBE_LIMIT)
    while high - refused > 1:
        mid = (refused + high) // 2
        refused, high = (refused, mid) if runs(mid) else (mid, high)
    return high


PROBE_LIMIT = 4096  # pixels: a clip refused at every crop up to this is refused for its frames


def require_bn_statistics(plan: Plan) -> None:
    """SpecError, before training, where the plan normalises BN over groups of one clip (multigrid.bn_base_size=1,
    or a per-GPU batch of one) at a shape that the model reduces to one value per channel somewhere: BN in training
    needs more than one, and the step would fail there. Found by running one clip through the model on the meta
    device (shapes only), and only at the shapes with one-clip groups, so other runs pay nothing."""
    from harness.models.build import build_model
    from harness.schedule.trained import iterations_by_layout
    from harness.spec import SpecError

    spec = plan.spec
    # Clips per BN group: the per-GPU batch split into `splits` groups, or synchronised over `sync` GPUs.
    single = sorted({(t, s) for t, s, batch, splits, sync in iterations_by_layout(plan)
                     if (batch // splits if splits > 1 else batch * sync) == 1})
    if not single:
        return
    with torch.device("meta"):
        net = build_model(dataclasses.replace(spec.model, pretrained=None), spec.data.num_classes).train()
    set_bn_layout(multigrid_bns(net), splits=1, sync=1)
    for t, s in single:
        try:
            net(torch.empty(1, 3, t, s, s, device="meta"))
        except ValueError as err:
            if "more than 1 value per channel" not in str(err):
                return  # the probe cannot tell: the run's own check of its shapes will
            raise SpecError(
                f"At {t}×{s}² the plan computes BN statistics over one clip (multigrid.bn_base_size="
                f"{spec.multigrid.bn_base_size}, {spec.solver.batch_size // spec.num_gpus} clips per GPU), which "
                f"{spec.model.target or spec.model.name} reduces to one value per channel at some layer: BN cannot "
                f"train on it. Give BN 2 or more clips: multigrid.bn_base_size=2 or more (the paper's is 8), and "
                f"2 or more clips per GPU (solver.batch_size / num_gpus).") from None
        except Exception:  # an operator without a meta kernel, a user model's own limits: the probe cannot tell
            return
