"""Direct launches of the Triton BN kernels: reused only for arguments Triton would compile the same way, and on the
GPU the same results as Triton's own dispatch."""

from __future__ import annotations

import itertools

import pytest
import torch

triton = pytest.importorskip("triton")

from harness.models import triton_bn  # noqa: E402
from harness.models.triton_launch import _hooks_set, _key  # noqa: E402


def _triton_specialisation(arg):
    from triton.backends.compiler import BaseBackend
    from triton.runtime.jit import native_specialize_impl

    return native_specialize_impl(BaseBackend, arg, False, True, True)


def test_arguments_with_one_direct_launch_key_specialise_alike_in_triton():
    base = torch.zeros(64)
    arguments = [0, 1, 2, 15, 16, 17, 32, 48, 2**31 - 1, 2**31, 2**31 + 16, -16, -1, 0.0, 1.0, 1e-5, True, False,
                 base, base[1:], base[4:], base[8:], base.to(torch.bfloat16), base.to(torch.bfloat16)[8:],
                 base.to(torch.bfloat16)[1:]]
    specs = {}
    for arg in arguments:
        specs.setdefault(_key(0, (arg,), {}), []).append(arg)
    assert len(specs) > 8  # the key does tell arguments apart
    for same_key in specs.values():
        for a, b in itertools.combinations(same_key, 2):
            assert _triton_specialisation(a) == _triton_specialisation(b), (a, b)


def test_no_launch_hook_is_seen_where_none_is_set_and_one_is_where_a_profiler_adds_it():
    from triton import knobs

    assert not _hooks_set()  # else every launch would go through Triton's dispatch (its chains are never None)
    hook = lambda *args: None  # noqa: E731
    knobs.runtime.launch_enter_hook.add(hook)
    try:
        assert _hooks_set()
    finally:
        knobs.runtime.launch_enter_hook.remove(hook)
    assert not _hooks_set()


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("splits", [1, 2, 4])
def test_direct_launches_compute_what_tritons_dispatch_computes(splits):
    torch.manual_seed(0)
    x = torch.randn(4 * splits, 24, 3, 6, 6, device="cuda", dtype=torch.bfloat16).contiguous(
        memory_format=torch.channels_last_3d)
    weight = torch.rand(24, device="cuda") + 0.5
    bias = torch.randn(24, device="cuda")
    grad = torch.randn_like(x)

    def forward_backward():
        xs, w, b = (t.detach().clone().requires_grad_() for t in (x, weight, bias))
        running = torch.zeros(24, device="cuda"), torch.ones(24, device="cuda")
        y, mean, var = triton_bn.triton_sub_batch_norm(xs, w, b, splits, 1e-5, *running, 0.1)
        y.backward(grad)
        return [y, mean, var, *running, xs.grad, w.grad, b.grad]

    launchers = triton_bn._launchers()
    for launcher in launchers.values():
        launcher.compiled.clear()
    through_triton = forward_backward()  # first launch of each kernel: Triton compiles and launches it
    assert all(launcher.compiled for launcher in launchers.values())
    direct = forward_backward()  # every kernel now launched by the compiled kernel's own launcher
    for a, b in zip(through_triton, direct, strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
