"""Sub-batch BatchNorm written out as a plain loop over its groups, and a check of MultigridBatchNorm3d against it."""

from __future__ import annotations

import torch

from harness.models import MultigridBatchNorm3d


def independent_sub_bn(x, weight, bias, k, eps=1e-5, blocks=True):
    """Group i = the i-th block of N/k clips (blocks) or clips i mod k, normalised with its own batch statistics,
    shared affine (a plain loop)."""
    out = torch.empty_like(x)
    means, variances = [], []
    n = len(x) // k
    for i in range(k):
        rows = slice(i * n, (i + 1) * n) if blocks else slice(i, None, k)
        group = x[rows]
        dims = [0, 2, 3, 4]
        mean = group.mean(dims)
        var = group.var(dims, unbiased=False)
        shape = (1, -1, 1, 1, 1)
        normalised = (group - mean.view(shape)) / torch.sqrt(var.view(shape) + eps)
        out[rows] = normalised * weight.view(shape) + bias.view(shape)
        means.append(mean)
        variances.append(group.var(dims, unbiased=True))
    means, variances = torch.stack(means), torch.stack(variances)
    return out, means.mean(0), variances.mean(0) + means.var(0, unbiased=False)


def check_against_independent(bn: MultigridBatchNorm3d, k: int, blocks: bool, device: str = "cpu",
                              channels: int = 6) -> None:
    """`bn` split `k` ways matches independent_sub_bn: outputs, gradients and one step of running statistics."""
    torch.manual_seed(k)
    bn.to(device)
    with torch.no_grad():
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.normal_()
    bn.num_splits = k
    fmt = torch.channels_last_3d if device == "cuda" else torch.contiguous_format  # as the trainer's
    x = torch.randn(4 * k, channels, 3, 5, 5) * torch.linspace(0.5, 3, 4 * k).view(-1, 1, 1, 1, 1)
    x = x.to(device).contiguous(memory_format=fmt).requires_grad_()
    x_ref = x.detach().clone().requires_grad_()
    w_ref, b_ref = bn.weight.detach().clone().requires_grad_(), bn.bias.detach().clone().requires_grad_()

    out = bn(x)
    ref, mean, var = independent_sub_bn(x_ref, w_ref, b_ref, k, blocks=blocks)
    torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-5)
    assert out.is_contiguous(memory_format=fmt)
    grad = torch.randn_like(out)
    out.backward(grad)
    ref.backward(grad)
    torch.testing.assert_close(x.grad, x_ref.grad, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(bn.weight.grad, w_ref.grad, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(bn.bias.grad, b_ref.grad, rtol=1e-4, atol=1e-4)
    # Running statistics: one momentum step towards the aggregate of the groups.
    torch.testing.assert_close(bn.running_mean, 0.1 * mean, rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(bn.running_var, 0.9 + 0.1 * var, rtol=1e-4, atol=1e-6)
    assert bn.num_batches_tracked.item() == 1
