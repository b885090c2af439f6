"""Launching Triton kernels at the host cost of a CUDA launch, for eager steps.

`kernel[grid](*args)` goes through Triton's `JITFunction.run` every time: it binds the arguments, specialises each of
them (dtype, 16-byte alignment of pointers, integers equal to 1 or divisible by 16), hashes that into a cache key,
looks the compiled kernel up and only then launches it. For the sub-batch BN kernels (six launches a layer's
forward + backward) that host work is a large part of what makes eager steps with them slower than cuDNN's plain BN.
Under CUDA graphs none of it recurs.

:class:`DirectLaunch` pays that once per specialisation: the first launch goes through Triton, which compiles the
kernel and returns it; later launches whose arguments specialise the same way call the compiled kernel's own
launcher (`CompiledKernel.run`, the C entry point `JITFunction.run` ends in) with the arguments in the same order.
The key it keeps the compiled kernels under covers every property Triton specialises on, and more (integers and
floats by value, every pointer's dtype and 16-byte alignment, the constexprs, the device), so a cached kernel is only
reused for arguments Triton would have given it too. Where the compiled kernel has no such launcher
(Triton's interpreter on CPU tensors, a Triton whose internals differ) or a launch hook is set (Triton's profilers),
every launch goes through Triton; so does every launch while a CUDA graph is captured (it recurs in
no replay).
"""

from __future__ import annotations

from typing import Any

import torch

try:
    from triton import knobs as _knobs
except ImportError:  # pragma: no cover - no Triton, or one without knobs: never launch directly
    _knobs = None


_runtime = getattr(_knobs, "runtime", None)


def _is_set(hook: Any) -> bool:
    # Triton 3.4+ keeps each hook in a chain that is never None, empty when unset
    return hook is not None and bool(getattr(hook, "calls", True))


def _hooks_set() -> bool:
    """Whether a launch hook is set (Triton's profilers set them): launches then go through Triton, which feeds them."""
    return _runtime is None or _is_set(_runtime.launch_enter_hook) or _is_set(_runtime.launch_exit_hook)


def _key(device: int | None, args: tuple, constexprs: dict[str, Any]) -> tuple:
    """What a compiled kernel is kept under: more than Triton specialises on, so two launches with one key compile to
    one kernel. Tensors by dtype and whether their address is 16-byte aligned; everything else by type and value
    (Triton specialises integers on being 1, on divisibility by 16 and on their width: equal values agree on all).
    Cheap on purpose: it is computed at every launch."""
    return (device, *[(a.dtype, not a.data_ptr() & 15) if isinstance(a, torch.Tensor) else (type(a), a) for a in args],
            *constexprs.items())


def _can_launch_directly(kernel: Any) -> bool:
    return all(hasattr(kernel, name) for name in ("run", "function", "packed_metadata"))


class DirectLaunch:
    """`DirectLaunch(jitted)(grid, *args, **constexprs)` launches as `jitted[grid](*args, **constexprs)` does.

    Positional arguments are the kernel's leading parameters; keyword arguments must name all the rest (constexprs
    included), so that the launcher gets every parameter in the kernel's order, as Triton passes them.
    """

    def __init__(self, jitted: Any):
        self.jitted = jitted
        self.compiled: dict[tuple, tuple[Any, tuple[str, ...]]] = {}  # key -> (kernel, names of the keywords)
        self.enabled = _runtime is not None
        self._stream_of = None  # Triton's own way to the current raw CUDA stream, once its driver is up

    def __call__(self, grid: tuple[int, ...], *args: Any, **constexprs: Any) -> None:
        tensor = args[0]
        # A CUDA graph's capture launches each kernel once and replays it for free: there Triton's own dispatch
        # costs nothing that recurs, so it launches as it always has.
        if not (self.enabled and tensor.is_cuda) or _hooks_set() or torch.cuda.is_current_stream_capturing():
            self.jitted[grid](*args, **constexprs)
            return
        device = tensor.get_device()
        key = _key(device, args, constexprs)
        found = self.compiled.get(key)
        if found is None:
            kernel = self.jitted[grid](*args, **constexprs)
            rest = tuple(self.jitted.arg_names[len(args):])
            if _can_launch_directly(kernel) and set(rest) == set(constexprs):
                self.compiled[key] = kernel, rest
            return
        kernel, rest = found
        if self._stream_of is None:
            from triton.runtime import driver

            # PyTorch's current stream (the capture stream inside a CUDA graph), as Triton's dispatch finds it
            self._stream_of = driver.active.get_current_stream
        gx, gy, gz = (*grid, 1, 1)[:3]
        kernel.run(gx, gy, gz, self._stream_of(device), kernel.function, kernel.packed_metadata, None, None, None,
                   *args, *(constexprs[name] for name in rest))
