"""The Triton BN kernels compile for a Hopper GPU (sm_90) here, without one: Triton's own compiler and ptxas, which
its wheel brings. The interpreter tests (test_triton_bn_numerics.py) check what the kernels compute, in Python; this
checks that the GPU code generation accepts them, with the argument specialisations Triton makes at run time
(integers equal to 1 become constants), which the interpreter never sees."""

from __future__ import annotations

import pytest

triton = pytest.importorskip("triton")
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

from harness.models.triton_bn import _kernels  # noqa: E402

ACTIVATION = {"x_ptr": "*bf16", "dy_ptr": "*bf16", "y_ptr": "*bf16", "dx_ptr": "*bf16"}
STATS = {"part_ptr", "mean_ptr", "invstd_ptr", "scale_ptr", "shift_ptr", "stats_ptr", "sums_ptr", "sum_dy_ptr",
         "sum_dy_xhat_ptr", "weight_ptr", "bias_ptr", "running_mean_ptr", "running_var_ptr", "grad_weight_ptr",
         "grad_bias_ptr"}
FLOATS = {"eps", "var_divisor", "factor"}

# (kernel, constants): the tile sizes the layout picks, and integers that are 1 for some layer or split count
CASES = [
    ("stats", {"BLOCK_R": 64, "BLOCK_C": 64}),
    ("stats", {"BLOCK_R": 512, "BLOCK_C": 8, "progs_per_group": 1}),
    ("finish_stats", {"UPDATE_RUNNING": True, "BLOCK_P": 64, "BLOCK_C": 64}),
    ("finish_stats", {"UPDATE_RUNNING": False, "BLOCK_P": 1, "BLOCK_C": 64, "splits": 1, "progs_per_group": 1}),
    ("normalise", {"BLOCK_R": 64, "BLOCK_C": 64}),
    ("grad_sums", {"BLOCK_R": 64, "BLOCK_C": 64}),
    ("finish_grads", {"BLOCK_P": 64, "BLOCK_C": 64}),
    ("finish_grads", {"BLOCK_P": 1, "BLOCK_C": 32, "splits": 1, "progs_per_group": 1}),
    ("grad_input", {"BLOCK_R": 64, "BLOCK_C": 64}),
]


def _type(name: str) -> str:
    if name in ACTIVATION:
        return ACTIVATION[name]
    if name in STATS:
        return "*fp32"
    return "fp32" if name in FLOATS else "i32"


@pytest.mark.parametrize(("name", "constants"), CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_the_triton_bn_kernels_compile_for_hopper(name, constants):
    fn = _kernels()[name]
    signature = {arg: "constexpr" if arg in constants else _type(arg) for arg in fn.arg_names}
    source = ASTSource(fn, signature, constexprs={(fn.arg_names.index(k),): v for k, v in constants.items()})
    try:
        compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32))
    except RuntimeError as err:  # no ptxas in this Triton install: nothing to check the code generation with
        if "ptxas" in str(err).lower():
            pytest.skip(f"Triton cannot assemble for sm_90 here ({err})")
        raise
    assert "ptx" in compiled.asm and "cubin" in compiled.asm
