"""Sub-batch BN as one C++ operation (train.sub_batch_bn=cuda_cpp): what it says where it cannot run, and on a GPU,
its kernels against an independent float64 implementation in the cases the Triton tests do not reach. The cases it
shares with the Triton kernels (every k, bf16 under autocast, CUDA graphs, plain BN) are in test_multigrid_bn.py."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from harness.models import MultigridBatchNorm3d
from harness.models.bn import require_bn_kernels_device
from harness.models.cuda_bn import SOURCE, ExtensionUnavailable, cuda_sub_batch_norm, extension
from harness.spec import SpecError

needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def test_the_kernel_source_ships_with_the_package():
    assert SOURCE.is_file() and "PYBIND11_MODULE" in SOURCE.read_text()


def test_a_layer_on_the_cpu_says_what_to_use():
    bn = MultigridBatchNorm3d(3)
    bn.num_splits, bn.sub_batch_impl = 2, "cuda_cpp"
    with pytest.raises(ExtensionUnavailable, match="train.sub_batch_bn=auto"):
        bn(torch.randn(4, 3, 2, 4, 4))


@pytest.mark.parametrize(("sub_batch", "plain", "fix"), [("cuda_cpp", "cudnn", "train.sub_batch_bn=auto"),
                                                          ("auto", "cuda_cpp", "train.plain_bn_impl=cudnn")])
def test_the_trainer_refuses_the_kernels_without_a_gpu_before_work(sub_batch, plain, fix):
    with pytest.raises(SpecError, match=fix):
        require_bn_kernels_device(sub_batch, plain, torch.device("cpu"))


def test_throughput_refuses_the_cpp_kernels_with_compiled_modes_before_timing():
    from harness.measure.throughput import require_plain_bn_device

    with pytest.raises(SpecError, match=re.escape("--modes compile_graphs: torch.compile cannot trace into the C++")):
        require_plain_bn_device(["cudnn", "cuda_cpp"], torch.device("cuda"), ["plain", "cuda_graphs", "compile_graphs"])
    require_plain_bn_device(["cudnn", "triton"], torch.device("cuda"), ["compile_graphs"])  # Triton's BN compiles


def test_throughput_refuses_the_cpp_kernels_where_they_cannot_be_built_before_timing(monkeypatch):
    """On a GPU host without CUDA's compiler (or on a host without a GPU) the refusal comes before any step is timed,
    as the trainer's, profile's and scaling's do, not from the first step."""
    import torch.utils.cpp_extension

    from harness.measure.throughput import require_plain_bn_device

    monkeypatch.setattr(torch.utils.cpp_extension, "CUDA_HOME", None)
    extension.cache_clear()
    try:
        with pytest.raises(SpecError, match="builds CUDA C.. kernels, but .*Use train.sub_batch_bn=triton"):
            require_plain_bn_device(["cuda_cpp"], torch.device("cuda"), ["plain", "eager"])
    finally:
        extension.cache_clear()


@pytest.mark.parametrize("command", [["profile", "--suite", "kinetics_ablation", "--scale", "smoke", "--device", "cpu",
                                      "--sub-batch-bn"],
                                     ["scaling", "--suite", "kinetics_ablation", "--scale", "smoke", "--sub-batch-bn"]],
                         ids=["profile", "scaling"])
@pytest.mark.parametrize("impl", ["cuda_cpp", "triton"])
def test_timing_gpu_kernels_on_the_cpu_is_refused_before_timing(command, impl):
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run([sys.executable, "-m", "harness", *command, impl], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 2 and f"train.sub_batch_bn={impl} runs CUDA kernels" in done.stderr
    assert "Traceback" not in done.stderr and "timing" not in done.stderr


@pytest.mark.skipif(torch.cuda.is_available(), reason="on a GPU machine the extension builds")
def test_building_without_a_gpu_names_the_alternatives():
    with pytest.raises(ExtensionUnavailable, match="no CUDA GPU") as err:
        extension()
    assert "train.sub_batch_bn=triton" in str(err.value)


def test_a_gpu_machine_without_a_cuda_compiler_is_told_before_work(monkeypatch):
    # PyTorch's pip wheels bring no nvcc: on such a machine the trainer refuses train.sub_batch_bn=cuda_cpp before it
    # starts, naming the variable to set and the implementations that need no compiler.
    import torch.utils.cpp_extension as cpp_extension

    from harness.models import cuda_bn

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(cpp_extension, "CUDA_HOME", None)
    cuda_bn.extension.cache_clear()
    try:
        with pytest.raises(SpecError) as err:
            require_bn_kernels_device("cuda_cpp", "cudnn", torch.device("cuda"))
    finally:
        cuda_bn.extension.cache_clear()
    assert "nvcc" in str(err.value) and "CUDA_HOME" in str(err.value) and "train.sub_batch_bn=triton" in str(err.value)


def _cuda_toolkit_from_wheels() -> Path | None:
    """NVIDIA's pip wheels of CUDA's compiler for PyTorch's CUDA major version (the test extra installs them), or
    None."""
    if torch.version.cuda is None:
        return None
    try:
        import nvidia
    except ImportError:
        return None
    for base in nvidia.__path__:
        home = Path(base) / f"cu{torch.version.cuda.split('.')[0]}"
        if (home / "bin" / "nvcc").is_file() and (home / "lib").is_dir():
            return home
    return None


@pytest.mark.skipif(_cuda_toolkit_from_wheels() is None,
                    reason="needs PyTorch with CUDA and CUDA's compiler wheels of its version (pip install .[test])")
def test_the_kernels_build_with_pytorchs_extension_builder(tmp_path):
    # No GPU is needed to build: the source compiles and links with the PyTorch this project installs, as it will on
    # a GPU machine, and the module's checks run on the host (a CPU tensor is refused in plain words).
    home = _cuda_toolkit_from_wheels()
    libs = tmp_path / "lib"
    libs.mkdir()
    (libs / "libcudart.so").symlink_to(next((home / "lib").glob("libcudart.so.*")))  # the wheel has no link name
    code = (
        "import torch\n"
        "from torch.utils.cpp_extension import load\n"
        f"m = load('harness_sub_batch_bn', sources=[{str(SOURCE)!r}], extra_cuda_cflags=['-O3'],\n"
        f"         extra_ldflags=['-L{libs}'], build_directory={str(tmp_path)!r})\n"
        "try:\n"
        "    m.sub_batch_bn(torch.randn(4, 8), torch.ones(8), torch.zeros(8), 2, 1e-5, None, None, 0.0, False)\n"
        "except RuntimeError as error:\n"
        "    print('refused:', error)\n")
    env = {**os.environ, "CUDA_HOME": str(home), "TORCH_CUDA_ARCH_LIST": "9.0", "MAX_JOBS": str(os.cpu_count() or 1),
           "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "refused:" in done.stdout and "runs on CUDA tensors" in done.stdout


def reference(x, weight, bias, k, eps=1e-5):
    """(y, block means, block unbiased variances), in float64, groups = k contiguous blocks of the batch."""
    x64 = x.double()
    groups = x64.unflatten(0, (k, -1))
    dims = [d for d in range(1, groups.dim()) if d != 2]
    mean = groups.mean(dims, keepdim=True)
    var = groups.var(dims, unbiased=False, keepdim=True)
    shape = [1, 1, -1] + [1] * (groups.dim() - 3)
    y = (groups - mean) / torch.sqrt(var + eps) * weight.double().view(shape) + bias.double().view(shape)
    return y.flatten(0, 1), mean.flatten(), groups.var(dims, unbiased=True).flatten()


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize(("dtype", "channels"), [(torch.bfloat16, 24), (torch.bfloat16, 12), (torch.float16, 8),
                                                 (torch.float32, 3)])
@pytest.mark.parametrize("memory_format", [torch.channels_last_3d, torch.contiguous_format])
def test_kernels_against_float64_where_the_mean_dwarfs_the_spread(dtype, channels, memory_format):
    # bf16 24 channels: eight per load; 12: one at a time; float16 8: eight; float32 3: one
    torch.manual_seed(channels)
    k = 4
    # mean 50, std 0.5: sums of x and x² in float32 would lose the variance; the kernels' shifted sums keep it
    x = (torch.randn(2 * k, channels, 3, 6, 5, device="cuda") * 0.5 + 50).to(dtype)
    x = x.contiguous(memory_format=memory_format).requires_grad_()
    weight = torch.rand(channels, device="cuda") + 0.5
    bias = torch.randn(channels, device="cuda")
    y, mean, var = cuda_sub_batch_norm(x, weight, bias, k, 1e-5)
    ref_y, ref_mean, ref_var = reference(x.detach(), weight, bias, k)
    tol = {torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 3e-2}[dtype]
    torch.testing.assert_close(y.double(), ref_y, rtol=tol, atol=tol)
    torch.testing.assert_close(mean.double().view(k, channels), ref_mean.view(k, channels), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(var.double().view(k, channels), ref_var.view(k, channels), rtol=1e-3, atol=1e-5)
    assert y.is_contiguous(memory_format=memory_format) and y.dtype == dtype
    grad = torch.randn_like(y)
    y.backward(grad)
    x64 = x.detach().double().requires_grad_()
    ref_y, _, _ = reference(x64, weight, bias, k)
    ref_y.backward(grad.double())
    assert x.grad.is_contiguous(memory_format=memory_format) and x.grad.dtype == dtype
    torch.testing.assert_close(x.grad.double(), x64.grad, rtol=tol, atol=tol)
    # without the statistics as outputs (as the BN layer calls it): the same output and gradient
    x2 = x.detach().clone().requires_grad_()
    y2, no_mean, no_var = cuda_sub_batch_norm(x2, weight, bias, k, 1e-5, stats=False)
    assert no_mean is None and no_var is None
    y2.backward(grad)
    torch.testing.assert_close(y2, y.detach(), rtol=0, atol=0)
    torch.testing.assert_close(x2.grad, x.grad, rtol=0, atol=0)


@pytest.mark.gpu
@needs_gpu
def test_bad_groups_are_named():
    x = torch.randn(6, 8, 2, 4, 4, device="cuda")
    with pytest.raises(ValueError, match="cannot be split into 4 equal groups"):
        cuda_sub_batch_norm(x, torch.ones(8, device="cuda"), torch.zeros(8, device="cuda"), 4, 1e-5)
    with pytest.raises(RuntimeError, match="equal groups"):  # the extension's own check, past the Python one
        extension().sub_batch_bn(x, torch.ones(8, device="cuda"), torch.zeros(8, device="cuda"), 4, 1e-5, None, None,
                                 0.0, True)
    with pytest.raises(ValueError, match="float64"):
        cuda_sub_batch_norm(x.double(), torch.ones(8, device="cuda"), torch.zeros(8, device="cuda"), 2, 1e-5)
