"""Read a weights file as other tools write it, without running code from it.

Read: what ``torch.save`` writes (its zip format and the legacy pickle one) through torch's weights-only unpickler,
which builds tensors and plain containers only (and ``argparse.Namespace``, which torchvision's reference scripts
save beside the weights as ``args``); ``.safetensors`` files (Hugging Face, timm), parsed here: an 8-byte
little-endian header length, a JSON header {name: {dtype, shape, data_offsets}}, then the raw little-endian data;
Caffe2 checkpoints ({"blobs": {name: NumPy array}}: Detectron's and PySlowFast's Caffe2 model zoos), through an
unpickler that builds NumPy arrays and plain containers only.
Named instead of read: an empty file, a zip archive cut short, any other plain pickle (``pickle.dump``; never
unpickled: that can run code), a web page, and files that are none of these. Every error is a SpecError that
starts with `what` and the file.
"""

from __future__ import annotations

import argparse
import codecs
import io
import json
import pickle
import pickletools
import re
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import torch

from harness.spec import SpecError

# torch.save's legacy (non-zip) format starts with its magic number, pickled at protocol 2.
TORCH_LEGACY_HEAD = pickle.dumps(torch.serialization.MAGIC_NUMBER, protocol=2)[:-1]
SAFETENSORS_DTYPES = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
                      "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8,
                      "U8": torch.uint8, "BOOL": torch.bool}
SAFE_CLASSES = [argparse.Namespace]


def listed(names: Sequence[str], limit: int = 4) -> str:
    """`names` as an error message shows them: the first `limit`, and how many more."""
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def require_finite(state: Mapping[str, torch.Tensor], keys: Iterable[str], path: Path,
                   what: str = "'model.pretrained'") -> None:
    """SpecError naming `path` where an entry of `keys` holds NaN or infinity: weights saved by a training that
    diverged would start a run whose first steps diverge, which the trainer would report as the run's own."""
    not_finite = [k for k in keys if state[k].is_floating_point() and not torch.isfinite(state[k]).all()]
    if not_finite:
        raise SpecError(f"{what}: {path} holds weights that are not finite numbers (NaN or infinity) in "
                        f"{len(not_finite)} entr{'y' if len(not_finite) == 1 else 'ies'} ({listed(not_finite, 5)}), "
                        f"as a training that diverged saves them. Give the weights of a training that converged.")


def read_weights(path: Path, what: str, how_to_save: str) -> object:
    """The object a weights file holds (tensors in plain containers). SpecError, naming `what` (the setting, e.g.
    "'model.pretrained'") and the file, for a file that is not one of the formats read; `how_to_save` is the fix."""
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    if not head:
        raise SpecError(f"{what}: {path} is not a readable PyTorch checkpoint: it is empty (0 bytes).")
    if path.suffix == ".safetensors" or _looks_like_safetensors(head):
        return _read_safetensors(path, what)
    if head.startswith(b"PK") and not zipfile.is_zipfile(path):
        raise SpecError(f"{what}: {path} is cut short: a zip archive (torch.save's format) without its end, as a copy "
                        f"or download that did not finish leaves it ({path.stat().st_size} bytes); copy or download it "
                        f"again.")
    if head.startswith(b"\x80") and not head.startswith(TORCH_LEGACY_HEAD):
        strings, classes = _pickle_names(head)
        if "blobs" in strings:
            return _read_caffe2(path, what, how_to_save)
        raise SpecError(_pickle_refusal(path, what, classes, how_to_save))
    if head.lstrip()[:1] == b"<":
        raise SpecError(f"{what}: {path} is a web page or other markup, not a checkpoint (a download that saved an "
                        f"error or sign-in page?): it starts with {head.lstrip()[:40]!r}. Download the file itself.")
    try:
        with torch.serialization.safe_globals(SAFE_CLASSES):
            return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as err:
        # torch refuses to unpickle objects other than tensors and plain containers (that could run code), and
        # names the first class it met; anything else is a file that is no pickle at all.
        found = re.search(r"Unsupported global: GLOBAL (\S+)", str(err))
        if found is None:  # torch's advice to retry without the weights-only unpickler does not apply: say what failed
            why = re.search(r"WeightsUnpickler error:\s*(.+)", str(err))
            raise SpecError(f"{what}: {path} is not a readable PyTorch checkpoint (it cannot be unpickled: "
                            f"{why.group(1) if why else type(err).__name__}).") from None
        raise SpecError(f"{what}: {path} holds pickled Python objects ({found.group(1)}: a whole nn.Module or a "
                        f"trainer's checkpoint), which are not loaded, as unpickling them can run code. Save the "
                        f"network's state dict instead: torch.save(model.state_dict(), path).") from None
    except Exception as err:  # torch raises several types for a file that is not a checkpoint
        if head.startswith(b"PK") and not _torch_zip(path):
            why = f"it is a zip archive, but not one torch.save writes (no data.pkl in it: {_zip_names(path)})"
        elif head.startswith((b"PK", b"\x80")):
            why = str(err).split(". ")[0] or type(err).__name__  # torch's first sentence; its advice does not apply
        else:
            why = f"it is neither a zip archive nor a pickle as torch.save writes them (it starts with {head[:16]!r})"
        raise SpecError(f"{what}: {path} is not a readable PyTorch checkpoint: {why}") from err


def _zip_names(path: Path) -> str:
    """A few of the names in zip archive `path`, for a message."""
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
    return listed(names, 3) if names else "it is empty"


def _torch_zip(path: Path) -> bool:
    """Whether zip archive `path` is laid out as torch.save writes one (a folder with data.pkl)."""
    try:
        with zipfile.ZipFile(path) as archive:
            return any(name.endswith("data.pkl") for name in archive.namelist())
    except (zipfile.BadZipFile, OSError):
        return True  # let torch's own error say what is wrong


def _looks_like_safetensors(head: bytes) -> bool:
    size = int.from_bytes(head[:8], "little") if len(head) >= 9 else 0
    return 0 < size < 100_000_000 and head[8:9] == b"{"


def _read_safetensors(path: Path, what: str) -> dict[str, torch.Tensor]:
    """The tensors of a .safetensors file; SpecError for a header or data that do not fit the format."""
    data = path.read_bytes()
    size = int.from_bytes(data[:8], "little")
    try:
        header = json.loads(data[8:8 + size])
        if not isinstance(header, dict):
            raise ValueError("the header is not a JSON object")
        state, base = {}, 8 + size
        for name, info in header.items():
            if name == "__metadata__":
                continue
            start, end = info["data_offsets"]
            if not 0 <= start <= end <= len(data) - base:
                raise ValueError(f"{name}'s data lies past the end of the file (cut short?)")
            raw = bytearray(data[base + start:base + end])  # frombuffer needs a writable buffer it may keep
            dtype = SAFETENSORS_DTYPES[info["dtype"]]
            flat = torch.frombuffer(raw, dtype=dtype) if raw else torch.empty(0, dtype=dtype)
            state[name] = flat.reshape(info["shape"])
    except (ValueError, KeyError, TypeError, RuntimeError) as err:  # JSONDecodeError is a ValueError
        raise SpecError(f"{what}: {path} is not a readable safetensors file: {err}") from None
    return state


def _pickle_names(head: bytes) -> tuple[list[str], list[str]]:
    """The strings and the classes a pickle's first opcodes name (read, not run: pickletools only parses)."""
    strings: list[str] = []
    classes: list[str] = []
    try:
        for op, arg, _ in pickletools.genops(io.BytesIO(head)):
            if isinstance(arg, str) and op.name != "GLOBAL":
                strings.append(arg)
            elif op.name in ("GLOBAL", "INST"):
                classes.append(str(arg).replace(" ", "."))
            elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
                classes.append(f"{strings[-2]}.{strings[-1]}")
    except ValueError:  # the head ends mid-opcode, or the file is no pickle after all: what was read is enough
        pass
    return strings, classes


def _pickle_refusal(path: Path, what: str, classes: list[str], how_to_save: str) -> str:
    """Why a plain pickle is not read, naming the first class it names (later names may come from its memo)."""
    named = f" (it names {classes[0]})" if classes else ""
    return (f"{what}: {path} is a plain Python pickle (pickle.dump), not a file torch.save wrote{named}; it is not "
            f"unpickled, as that can run code. Save the weights with torch.save ({how_to_save}).")


# What a pickle of NumPy arrays names: numpy's array and scalar rebuilders and its array and dtype classes, and,
# in pickles Python 3 wrote at protocol 2 (which has no bytes opcode), the codec call that turns text into bytes.
_NUMPY_MODULES = ("numpy", "numpy.core.multiarray", "numpy._core.multiarray")
_NUMPY_GLOBALS = {"_reconstruct": np.zeros(1).__reduce__()[0], "scalar": np.float32(0).__reduce__()[0],
                  "ndarray": np.ndarray, "dtype": np.dtype}


class _NumPyArraysOnly(pickle.Unpickler):
    """Unpickles NumPy arrays in plain containers and nothing else: any other class or function a pickle names is
    refused before it is called, so reading cannot run code."""

    def find_class(self, module: str, name: str):
        if module in _NUMPY_MODULES and name in _NUMPY_GLOBALS:
            return _NUMPY_GLOBALS[name]
        if (module, name) == ("_codecs", "encode"):
            return codecs.encode
        raise pickle.UnpicklingError(f"it names {module}.{name}, which is not a NumPy array's part")


def _read_caffe2(path: Path, what: str, how_to_save: str) -> dict[str, dict[str, torch.Tensor]]:
    """{'blobs': {name: tensor}} of a Caffe2 checkpoint (a pickle of {'blobs': {name: NumPy array}, ...}, as Detectron
    and PySlowFast's Caffe2 model zoo publish them, often from Python 2), unpickled with NumPy's parts only."""
    try:
        with open(path, "rb") as f:
            saved = _NumPyArraysOnly(f, encoding="latin1").load()
    except Exception as err:  # a file cut short, or a pickle that names anything else: never unpickled further
        raise SpecError(f"{what}: {path} looks like a Caffe2 checkpoint (a pickle of {{'blobs': ...}}) but cannot be "
                        f"read as one ({type(err).__name__}: {err}). Give a PyTorch state dict ({how_to_save}) or "
                        f"the Caffe2 file as published.") from None
    blobs = saved.get("blobs") if isinstance(saved, dict) else None
    if not isinstance(blobs, dict):
        raise SpecError(f"{what}: {path} is a pickle that names 'blobs' but holds no {{'blobs': {{name: array}}}} "
                        f"dict, so it is no Caffe2 checkpoint. Give a PyTorch state dict ({how_to_save}).")
    return {"blobs": {str(name): torch.from_numpy(np.array(array)) for name, array in blobs.items()
                      if isinstance(array, np.ndarray) and array.dtype.kind in "fiub"}}
