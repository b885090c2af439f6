"""Files and folders the file system refuses to the harness, for real: chmod, made to bite under root too."""

from __future__ import annotations

import contextlib
import ctypes
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

_CAPS_VERSION_3 = 0x20080522  # linux/capability.h: 64-bit capability sets, as two 32-bit words
# CAP_DAC_OVERRIDE (1) and CAP_DAC_READ_SEARCH (2) are what let root read, write and search whatever the modes say.
_DAC_CAPS = (1 << 1) | (1 << 2)


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


@contextlib.contextmanager
def _without_dac_override() -> Iterator[None]:
    """Root's file-permission override off for this thread (and processes it forks), back on afterwards: the
    capabilities leave the effective set only, so the permitted set can restore them. Skips the test where the
    kernel does not let them go (no capget/capset)."""
    if os.geteuid() != 0:
        yield
        return
    libc = ctypes.CDLL(None, use_errno=True)
    header, data = _Header(_CAPS_VERSION_3, 0), (_Data * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        pytest.skip("running as root and capget failed: chmod cannot be made to deny anything here")
    before = data[0].effective
    data[0].effective &= ~_DAC_CAPS
    if libc.capset(ctypes.byref(header), data) != 0:
        pytest.skip("running as root and CAP_DAC_OVERRIDE cannot be dropped: chmod cannot deny anything here")
    try:
        yield
    finally:
        data[0].effective = before
        libc.capset(ctypes.byref(header), data)


@contextlib.contextmanager
def denied(*paths: Path, mode: int = 0) -> Iterator[None]:
    """`paths` chmod-ed to `mode` (default: no access at all) and the denial in force, modes restored after."""
    modes = {Path(p): Path(p).stat().st_mode & 0o7777 for p in paths}
    for path in modes:
        path.chmod(mode)
    try:
        with _without_dac_override():
            yield
    finally:
        for path, old in modes.items():
            path.chmod(old)
