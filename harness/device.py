"""Device choices shared by the trainer and the measurements: which device, bf16, channels-last, and waiting for
queued work. Imports only torch and harness.spec, so the trainer and harness/measure/ both use it."""

from __future__ import annotations

import torch

from harness.spec import SpecError


def pick_device(name: str | None = None) -> torch.device:
    """`name` ("cuda", "cpu", ...), or CUDA when one is visible, else the CPU."""
    return torch.device(name or ("cuda" if torch.cuda.is_available() else "cpu"))


def require_device(name: str | None, flag: str = "--device") -> None:
    """SpecError naming `flag` before any work where it asks for CUDA and no CUDA GPU is visible: torch would fail
    at the first step, with its own traceback."""
    if name == "cuda" and not torch.cuda.is_available():
        raise SpecError(f"{flag} cuda: no CUDA GPU is visible here. Use {flag} cpu.")


def use_bf16(device: torch.device, precision: str = "auto") -> bool:
    """Whether steps run under bf16 autocast: `train.precision` "bf16", or "auto" on a GPU."""
    return precision == "bf16" or (precision == "auto" and device.type == "cuda")


def use_channels_last(device: torch.device, setting: str = "auto") -> bool:
    """Whether models and clips are channels-last: `train.channels_last` "on", or "auto" on a GPU."""
    return setting == "on" or (setting == "auto" and device.type == "cuda")


def memory_format_for(channels_last: bool) -> torch.memory_format:
    """The 5-D clips' memory format: channels-last (faster cuDNN convolutions on GPU) or contiguous."""
    return torch.channels_last_3d if channels_last else torch.contiguous_format


def sync_device(device: torch.device) -> None:
    """Wait for the device's queued work (a no-op on CPU): timings must end when the work does."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
