"""Numerics first: every fast path `auto` may pick trains as today's default does, before it may be picked (GPU).

Each test trains a small SlowFast for ITERATIONS iterations of the same seed at multigrid shapes (sub-batch BN of 2
and 4 groups, plain BN, the LR changing every iteration), once on today's default and once on the fast path, and
compares every iteration's loss and, at the end, every weight and BN statistic:

- the Triton and C++ sub-batch BN (train.sub_batch_bn=triton, cuda_cpp) against cuDNN's per block, both under
  CUDA graphs (the step mode `auto` runs them with);
- compiled-and-graphed steps (train.step=compile_graphs) against eager ones, cuDNN's BN.

They run in fp32 with TF32 off, so the paths differ only in the order their reductions add up (about 1e-7 of a
value per operation); the tolerance, LOSS_REL of each loss and WEIGHT_REL of each tensor's norm plus WEIGHT_ABS
(a BN bias that barely moves), leaves room for 20 iterations to grow that by four orders of magnitude and is still
far below what a wrong kernel gives (a group's statistics off by one clip moves the loss by percents).

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
LOSS_REL = 1e-3
WEIGHT_REL, WEIGHT_ABS = 1e-3, 1e-5
MODEL = ModelSpec(name="slowfast_r50_8x8", width=0.25, dropout=0.0)


def _train(step_mode: str, sub_batch_bn: str, shapes) -> tuple[list[float], dict[str, torch.Tensor]]:
    """Losses of ITERATIONS iterations and the final state, from seed 0 (weights) and 1 (clips)."""
    device = torch.device("cuda")
    torch.manual_seed(0)
    model = build_model(MODEL, 10).to(device, memory_format=torch.channels_last_3d).train()
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


def _loss_error(losses: list[float], reference: list[float]) -> float:
    """The largest relative difference of an iteration's loss."""
    return max(abs(a - b) / abs(b) for a, b in zip(losses, reference))


def _weight_error(state: dict[str, torch.Tensor], reference: dict[str, torch.Tensor]) -> tuple[float, str]:
    """The largest difference of a tensor as a share of its tolerance (<= 1 passes), and the tensor's name."""
    return max((((state[k] - v).norm() / (WEIGHT_REL * v.norm() + WEIGHT_ABS)).item(), k)
               for k, v in reference.items() if v.dtype.is_floating_point)


def _compare_and_record(path: str, candidate: tuple[str, str], reference: tuple[str, str], shapes) -> None:
    """Train both, assert they agree within the tolerance, and record the pass where asked."""
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    try:
        ref_losses, ref_state = _train(*reference, shapes)
        losses, state = _train(*candidate, shapes)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
    loss_error = _loss_error(losses, ref_losses)
    weight_error, worst = _weight_error(state, ref_state)
    assert loss_error <= LOSS_REL, (path, losses, ref_losses)
    assert weight_error <= 1, (path, worst, weight_error)
    if os.environ.get("HARNESS_RECORD_NUMERICS") == "1":
        record_numerics_pass(path, torch.cuda.get_device_name(), {
            "test": "tests/integration/test_fast_path_numerics.py", "model": MODEL.label, "iterations": ITERATIONS,
            "shapes": [list(s) for s in shapes], "against": {"step": reference[0], "sub_batch_bn": reference[1]},
            "precision": "fp32, TF32 off", "loss_rel_tolerance": LOSS_REL, "max_loss_rel_diff": loss_error,
            "weight_tolerance": f"{WEIGHT_REL} x norm + {WEIGHT_ABS}", "max_weight_diff_share_of_tolerance":
                weight_error, "worst_tensor": worst})


@pytest.mark.gpu
@needs_cuda
@pytest.mark.parametrize("impl", ["triton", "cuda_cpp"])
def test_fast_sub_batch_bn_trains_like_cudnn_bn(impl):
    if impl == "cuda_cpp":
        from harness.models.cuda_bn import ExtensionUnavailable, extension

        try:
            extension()
        except ExtensionUnavailable as error:
            pytest.skip(f"the C++ sub-batch BN does not build here: {error}")
    _compare_and_record(f"sub_batch_bn={impl}", ("cuda_graphs", impl), ("cuda_graphs", "auto"), SHAPES)


@pytest.mark.gpu
@needs_cuda
def test_compiled_graphed_steps_train_like_eager_steps():
    _compare_and_record("step=compile_graphs", ("compile_graphs", "auto"), ("eager", "auto"), COMPILED_SHAPES)
