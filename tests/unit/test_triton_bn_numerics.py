"""The Triton BN kernels (harness.models.triton_bn): sub-batch and plain BN, under the interpreter and on a GPU."""

import os
import subprocess
import sys

import pytest
import torch

from harness.models import MultigridBatchNorm3d

from .sub_bn_oracle import check_against_independent

# Run under TRITON_INTERPRET=1 (it must be set before triton is imported, hence a fresh process): the Triton
# kernels on CPU tensors against sub-batch BN through F.batch_norm per block (itself checked against the loop in
# test_bn_sub_batch.py).
_TRITON_ON_CPU = """
import torch
from harness.models import MultigridBatchNorm3d
from harness.models.triton_bn import triton_sub_batch_norm
cases = [(k, fmt, shape) for k in (2, 3, 4, 8) for fmt in (torch.channels_last_3d, torch.contiguous_format)
         for shape in ((2 * k, 5, 2, 3, 3),)] + [(2, torch.channels_last_3d, (4, 70, 3, 9, 9))]
for k, fmt, shape in cases:
    torch.manual_seed(k)
    x = (torch.randn(shape) * torch.linspace(0.5, 3, shape[0]).view(-1, 1, 1, 1, 1) + 4).contiguous(memory_format=fmt)
    layers = []
    for impl in ("triton", "auto"):  # auto: cuDNN per block up to max_block_splits groups
        bn = MultigridBatchNorm3d(shape[1])
        with torch.no_grad():
            bn.weight.copy_(torch.linspace(0.5, 1.5, shape[1]))
            bn.bias.copy_(torch.linspace(-1, 1, shape[1]))
        bn.num_splits, bn.sub_batch_impl, bn.max_block_splits = k, impl, k
        layers.append(bn)
    inputs = [x.clone().requires_grad_() for _ in layers]
    outs = [bn(xi) for bn, xi in zip(layers, inputs)]
    grad = torch.randn(shape)
    for out in outs:
        out.backward(grad)
    (ours, ref), (bn, ref_bn) = outs, layers
    assert ours.is_contiguous(memory_format=fmt) and inputs[0].grad.is_contiguous(memory_format=fmt), (k, fmt)
    torch.testing.assert_close(ours, ref, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(inputs[0].grad, inputs[1].grad, rtol=1e-4, atol=1e-5)
    for a, b in ((bn.weight.grad, ref_bn.weight.grad), (bn.bias.grad, ref_bn.bias.grad),
                 (bn.running_mean, ref_bn.running_mean), (bn.running_var, ref_bn.running_var)):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
# the network applies in-place ReLU to BN's output: autograd must allow it (no view of a custom op's output)
bn = MultigridBatchNorm3d(4)
bn.num_splits, bn.sub_batch_impl = 2, "triton"
x = torch.randn(4, 4, 2, 3, 3).contiguous(memory_format=torch.channels_last_3d).requires_grad_()
torch.relu_(bn(x)).sum().backward()
assert x.grad is not None
# one group is plain BN
x = torch.randn(3, 4, 2, 5, 5)
out, mean, var = triton_sub_batch_norm(x, torch.ones(4), torch.zeros(4), 1, 1e-5)
torch.testing.assert_close(out, torch.nn.functional.batch_norm(x, None, None, training=True), rtol=1e-4, atol=1e-5)
torch.testing.assert_close(var[0], x.var((0, 2, 3, 4)))
# train.plain_bn_impl=triton: a layer over its whole batch trains as nn.BatchNorm3d does (output, gradients, running
# statistics, a second batch's momentum update), and evaluates as it
ours, plain = MultigridBatchNorm3d(5), torch.nn.BatchNorm3d(5)
ours.plain_impl = "triton"
for step in range(2):
    x = (torch.randn(4, 5, 2, 3, 3) * 2 + step).contiguous(memory_format=torch.channels_last_3d)
    a, b = x.clone().requires_grad_(), x.clone().requires_grad_()
    grad = torch.randn(x.shape)
    ya, yb = ours(a), plain(b)
    ya.backward(grad)
    yb.backward(grad)
    torch.testing.assert_close(ya, yb, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-5)
for p, q in ((ours.weight.grad, plain.weight.grad), (ours.bias.grad, plain.bias.grad),
             (ours.running_mean, plain.running_mean), (ours.running_var, plain.running_var)):
    torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-4)
assert int(ours.num_batches_tracked) == int(plain.num_batches_tracked) == 2
ours.eval(), plain.eval()
torch.testing.assert_close(ours(x), plain(x))
# precise BN (momentum None: the running statistics a cumulative average), and an input that needs no gradient
# (the affine parameters' gradients alone), as the blocks implementation computes them
layers = []
for impl in ("triton", "auto"):
    bn = MultigridBatchNorm3d(6, momentum=None)
    bn.num_splits, bn.sub_batch_impl, bn.max_block_splits = 4, impl, 4
    layers.append(bn)
for step in range(3):
    x = torch.randn(8, 6, 2, 3, 3) * (step + 1) + step
    for bn in layers:
        bn(x).square().sum().backward()
(ours, ref) = layers
for a, b in ((ours.running_mean, ref.running_mean), (ours.running_var, ref.running_var),
             (ours.weight.grad, ref.weight.grad), (ours.bias.grad, ref.bias.grad)):
    torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
# Many partials per group, more than one finishing tile of them and the last shorter than the others, over two blocks
# of channels (the second part masked), and mean ≫ std with partial means that differ (a ramp along the rows): the
# finishing kernels' tiled merge against float64. Small tiles make many partials of a tensor the interpreter runs fast.
import harness.models.triton_bn as triton_bn
triton_bn.TILE, triton_bn.MAX_BLOCK_C, triton_bn.TARGET_PROGRAMS = 64, 8, 128
k, shape = 2, (4, 12, 2, 9, 11)
torch.manual_seed(0)
x = 1000 + torch.randn(shape) * 0.5 + torch.linspace(-1, 1, 2 * 9).view(2, 9, 1)
x = x.contiguous(memory_format=torch.channels_last_3d)
lay = triton_bn._layout(x, k)
assert lay.progs_per_group > lay.block_p and lay.rows_per_group % lay.rows_per_prog and lay.channel_blocks == 2, lay
weight, bias = torch.linspace(0.5, 1.5, 12).requires_grad_(), torch.linspace(-1, 1, 12).requires_grad_()
running_mean, running_var = torch.zeros(12), torch.ones(12)
xs = x.clone().requires_grad_()
out, mean, var = triton_sub_batch_norm(xs, weight, bias, k, 1e-5, running_mean, running_var, 0.1)
xd, wd, bd = (t.detach().double().requires_grad_() for t in (x, weight, bias))
groups, dims = xd.unflatten(0, (k, -1)), (1, 3, 4, 5)
ref_mean, ref_var = groups.mean(dims), groups.var(dims)
ref = (groups - groups.mean(dims, keepdim=True)) / (groups.var(dims, unbiased=False, keepdim=True) + 1e-5).sqrt()
ref = ref.flatten(0, 1) * wd.view(-1, 1, 1, 1) + bd.view(-1, 1, 1, 1)
grad = torch.randn(shape)
out.backward(grad)
ref.backward(grad.double())
torch.testing.assert_close(mean.double(), ref_mean, rtol=1e-6, atol=0)
torch.testing.assert_close(var.double(), ref_var, rtol=1e-4, atol=0)
torch.testing.assert_close(running_mean.double(), 0.1 * ref_mean.mean(0), rtol=1e-6, atol=0)
torch.testing.assert_close(running_var.double(), 0.9 + 0.1 * (ref_var.mean(0) + ref_mean.var(0, unbiased=False)),
                           rtol=1e-5, atol=0)
torch.testing.assert_close(out.double(), ref, rtol=0, atol=2e-3)  # y = x·scale + shift rounds at |x·scale| ≈ 1000
for a, b in ((xs.grad, xd.grad), (weight.grad, wd.grad), (bias.grad, bd.grad)):
    torch.testing.assert_close(a.double(), b, rtol=1e-3, atol=1e-3)
print("ok", len(cases))
"""


def test_triton_sub_batch_bn_matches_the_block_implementation_under_the_interpreter():
    pytest.importorskip("triton")
    done = subprocess.run([sys.executable, "-c", _TRITON_ON_CPU], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": ""})
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["ok", "9"]


def test_triton_sub_batch_bn_says_it_needs_cuda_on_the_cpu():
    pytest.importorskip("triton")
    code = ("import torch; from harness.models import MultigridBatchNorm3d\n"
            "bn = MultigridBatchNorm3d(3); bn.num_splits, bn.sub_batch_impl = 2, 'triton'\n"
            "bn(torch.randn(4, 3, 2, 2, 2))")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**env, "CUDA_VISIBLE_DEVICES": ""})
    assert done.returncode != 0 and "train.sub_batch_bn=auto" in done.stderr


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("k", [2, 3, 4, 8])
def test_kernel_sub_batch_bn_matches_independent_implementation_on_gpu(k, impl="triton"):
    bn = MultigridBatchNorm3d(6)
    bn.sub_batch_impl = impl
    check_against_independent(bn, k, blocks=True, device="cuda")
    wide = MultigridBatchNorm3d(64)
    wide.sub_batch_impl = impl
    check_against_independent(wide, k, blocks=True, device="cuda", channels=64)
    # bf16 activations under autocast, as in training: within bf16 rounding of the fp32 cuDNN-block result; and
    # the same under a CUDA graph (no host synchronisation inside).
    x = torch.randn(4 * k, 64, 4, 14, 14, device="cuda").contiguous(memory_format=torch.channels_last_3d)
    ours, ref = MultigridBatchNorm3d(64).cuda(), MultigridBatchNorm3d(64).cuda()
    ours.num_splits, ours.sub_batch_impl = k, impl
    ref.num_splits, ref.max_block_splits = k, k  # auto: cuDNN per block
    with torch.autocast("cuda", dtype=torch.bfloat16):
        out = ours(x.bfloat16())
    torch.testing.assert_close(out.float(), ref(x), rtol=2e-2, atol=2e-2)
    static = x.bfloat16()
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        ours(static)  # warm-up on the capture stream (kernels jitted before capture)
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(graph):
        captured = ours(static)
    static.copy_(x.bfloat16() * 2)
    graph.replay()
    torch.testing.assert_close(captured.float(), ref(x * 2).float(), rtol=2e-2, atol=2e-2)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_kernel_plain_bn_trains_as_cudnn_on_gpu(impl="triton"):
    # train.plain_bn_impl=triton: bf16 activations under autocast, as in training, within bf16 rounding
    # of cuDNN's BN
    x = torch.randn(8, 64, 4, 14, 14, device="cuda").contiguous(memory_format=torch.channels_last_3d) * 3 + 1
    ours, ref = MultigridBatchNorm3d(64).cuda(), MultigridBatchNorm3d(64).cuda()
    ours.plain_impl = impl
    a, b = x.bfloat16().requires_grad_(), x.bfloat16().requires_grad_()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        ya, yb = ours(a), ref(b)
    grad = torch.randn_like(ya)
    ya.backward(grad)
    yb.backward(grad)
    torch.testing.assert_close(ya.float(), yb.float(), rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(a.grad.float(), b.grad.float(), rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(ours.running_var, ref.running_var, rtol=1e-3, atol=1e-3)
