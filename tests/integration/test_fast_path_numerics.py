"""Numerics first: every fast path `auto` may pick trains as today's default does, before it may be picked (GPU).

Each test trains a small SlowFast for ITERATIONS iterations of the same seed at multigrid shapes (sub-batch BN of 2
and 4 groups, plain BN, the LR changing every iteration) three times: on today's default, on the default again with
every initial weight nudged by NUDGE of itself, and on the fast path:

- the Triton sub-batch BN (train.sub_batch_bn=triton) against cuDNN's per block, both under CUDA graphs (the step
  mode `auto` runs them with);
- compiled-and-graphed steps (train.step=compile_graphs) against eager ones, cuDNN's BN.

The paths differ only in the order their reductions add up, and training amplifies such differences of a few units
in the last place chaotically; how much, the nudged default run measures. The fast path passes where, at every
iteration, its loss and, at the end, every weight and BN statistic lie within ENVELOPE times the nudged run's
distance from the default (plus a floor). A wrong kernel (a group's statistics off by one clip) moves the first
loss by percents, far outside an envelope that starts at a millionth.

A pass makes its path eligible for `auto` on that kind of card (harness.train.choose) once recorded. On a GPU host:

    HARNESS_RECORD_NUMERICS=1 pytest -m gpu tests/integration/test_fast_path_numerics.py

writes each passing path, with what it measured and its provenance, into results/numerics/fast_paths.json
(harness.train.choice_evidence.record_numerics_pass); commit that file. Without the variable nothing is written.
"""

from __future__ import annotations

import os

import pytest
import torch

from harness.models import build_model, multigrid_bns, set_bn_layout
from harness.models.bn import set_bn_sub_batch_impl
from harness.spec import ModelSpec
from harness.train.choice_evidence import record_numerics_pass
from harness.train.step import make_step

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

ITERATIONS = 20
# (t, s, per-GPU batch, BN splits): a multigrid run's kinds of shapes, each coming back after the others. Every path
# compared groups consecutive clips (cuDNN's BN up to 4 groups under CUDA graphs, 2 eagerly: harness.models.bn), so
# each pair draws the same groups.
SHAPES = [(8, 32, 16, 4), (8, 48, 8, 2), (16, 32, 8, 1)]
COMPILED_SHAPES = SHAPES[1:]  # compiling takes about a minute a shape: two shapes, sub-batch BN of 2 groups
NUDGE = 1e-6  # relative nudge of every initial weight: a few units in fp32's last place, as a reordered sum gives
ENVELOPE = 10.0  # how far beyond the nudged run's distance from the default a fast path may be
LOSS_FLOOR = 1e-5  # relative: losses closer than this always agree
WEIGHT_FLOOR = 1e-6  # of the state's norm
MODEL = ModelSpec(name="slowfast_r50_8x8", width=0.25, dropout=0.0)


def _train(step_mode: str, sub_batch_bn: str, shapes, nudge: float = 0.0
           ) -> tuple[list[float], dict[str, torch.Tensor]]:
    """Losses of ITERATIONS iterations and the final state, from seed 0 (weights) and 1 (clips); `nudge` scales
    every initial weight by 1 + nudge × N(0, 1) (seed 2)."""
    device = torch.device("cuda")
    torch.manual_seed(0)
    model = build_model(MODEL, 10).to(device, memory_format=torch.channels_last_3d).train()
    if nudge:
        noise = torch.Generator(device=device).manual_seed(2)
        with torch.no_grad():
            for param in model.parameters():
                param.mul_(1 + nudge * torch.randn(param.shape, device=device, generator=noise))
    bns = multigrid_bns(model)
    set_bn_sub_batch_impl(bns, sub_batch_bn)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, nesterov=True, weight_decay=1e-4)
    runner = make_step(step_mode, model, optimizer, torch.nn.functional.cross_entropy, False, device,
                       shapes=len(shapes))
    generator = torch.Generator(device=device).manual_seed(1)
    losses = []
    try:
        for i in range(ITERATIONS):
            t, s, batch, splits = shapes[i % len(shapes)]
            set_bn_layout(bns, splits, 1)
            clips = torch.randn(batch, 3, t, s, s, device=device, generator=generator)
            labels = torch.randint(0, 10, (batch,), device=device, generator=generator)
            for group in optimizer.param_groups:
                group["lr"] = 0.01 * (1 + i % 3)  # the LR changes every iteration, as under the Plan
            losses.append(runner(clips.contiguous(memory_format=torch.channels_last_3d), labels,
                                 (t, s, batch, splits, 1)).item())
            optimizer.step()
    finally:
        runner.release()
    return losses, {k: v.detach().float().clone() for k, v in model.state_dict().items()}


def loss_excess(losses: list[float], reference: list[float], nudged: list[float]) -> float:
    """The largest share of its allowance by which an iteration's loss differs from the reference (<= 1 passes).
    The allowance at iteration i is ENVELOPE × the nudged run's largest relative distance up to i, plus LOSS_FLOOR."""
    worst, envelope = 0.0, 0.0
    for loss, ref, nudge in zip(losses, reference, nudged, strict=True):
        envelope = max(envelope, abs(nudge - ref) / abs(ref))
        worst = max(worst, abs(loss - ref) / abs(ref) / (ENVELOPE * envelope + LOSS_FLOOR))
    return worst


def weight_excess(state: dict[str, torch.Tensor], reference: dict[str, torch.Tensor],
                  nudged: dict[str, torch.Tensor]) -> float:
    """By what share of its allowance the final state differs from the reference (<= 1 passes): the distance over
    all floating tensors together (weights and BN statistics), against ENVELOPE × the nudged run's distance plus
    WEIGHT_FLOOR of the state's norm. One distance over the whole state, since a tensor's own nudged distance can
    come out near zero by chance."""
    keys = [k for k, v in reference.items() if v.dtype.is_floating_point]

    def distance(other: dict[str, torch.Tensor]) -> float:
        return torch.cat([(other[k] - reference[k]).flatten() for k in keys]).norm().item()

    norm = torch.cat([reference[k].flatten() for k in keys]).norm().item()
    return distance(state) / (ENVELOPE * distance(nudged) + WEIGHT_FLOOR * norm)


def _compare_and_record(path: str, candidate: tuple[str, str], reference: tuple[str, str], shapes) -> None:
    """Train the reference, the nudged reference and the candidate; assert the candidate lies within the envelope,
    and record the pass where asked."""
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    try:
        ref_losses, ref_state = _train(*reference, shapes)
        nudged_losses, nudged_state = _train(*reference, shapes, nudge=NUDGE)
        losses, state = _train(*candidate, shapes)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
    loss_share = loss_excess(losses, ref_losses, nudged_losses)
    weight_share = weight_excess(state, ref_state, nudged_state)
    assert loss_share <= 1, (path, loss_share, losses, ref_losses, nudged_losses)
    assert weight_share <= 1, (path, weight_share)
    if os.environ.get("HARNESS_RECORD_NUMERICS") == "1":
        record_numerics_pass(path, torch.cuda.get_device_name(), {
            "test": "tests/integration/test_fast_path_numerics.py", "model": MODEL.label, "iterations": ITERATIONS,
            "shapes": [list(s) for s in shapes], "against": {"step": reference[0], "sub_batch_bn": reference[1]},
            "precision": "fp32, TF32 off", "nudge": NUDGE, "envelope": ENVELOPE, "loss_floor": LOSS_FLOOR,
            "max_loss_share_of_allowance": loss_share, "state_share_of_allowance": weight_share,
            "max_loss_rel_diff": max(abs(a - b) / abs(b) for a, b in zip(losses, ref_losses)),
            "max_nudged_loss_rel_diff": max(abs(a - b) / abs(b) for a, b in zip(nudged_losses, ref_losses))})


@pytest.mark.gpu
@needs_cuda
def test_triton_sub_batch_bn_trains_like_cudnn_bn():
    _compare_and_record("sub_batch_bn=triton", ("cuda_graphs", "triton"), ("cuda_graphs", "auto"), SHAPES)


@pytest.mark.gpu
@needs_cuda
def test_compiled_graphed_steps_train_like_eager_steps():
    _compare_and_record("step=compile_graphs", ("compile_graphs", "auto"), ("eager", "auto"), COMPILED_SHAPES)


# The envelope itself, on the CPU: what passes and what fails.
def test_a_loss_that_drifts_with_the_nudged_run_passes():
    reference = [2.0, 2.1, 2.2, 2.3]
    nudged = [2.0, 2.1 + 1e-6, 2.2 + 1e-4, 2.3 + 1e-2]
    assert loss_excess([2.0, 2.1 + 5e-6, 2.2 - 5e-4, 2.3 + 5e-2], reference, nudged) <= 1


def test_a_loss_off_from_the_first_iteration_fails():
    reference = [2.0, 2.1, 2.2, 2.3]
    nudged = [2.0, 2.1 + 1e-6, 2.2 + 1e-4, 2.3 + 1e-2]
    assert loss_excess([2.02, 2.1, 2.2, 2.3], reference, nudged) > 1


def test_a_state_beyond_the_nudged_runs_distance_fails():
    reference = {"w": torch.ones(4), "steps": torch.tensor(3)}
    nudged = {"w": torch.ones(4) + 1e-4, "steps": torch.tensor(3)}
    assert weight_excess({"w": torch.ones(4) + 5e-4, "steps": torch.tensor(3)}, reference, nudged) <= 1
    assert weight_excess({"w": torch.ones(4) + 1e-2, "steps": torch.tensor(3)}, reference, nudged) > 1
