"""Atomic file writes: a reader never sees a half-written file, an interrupted write leaves the old one."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from harness.spec import SpecError


@contextlib.contextmanager
def naming_the_file(path: Path) -> Iterator[None]:
    """OSErrors raised inside that name no file are raised again naming `path`: a write the disk refuses (no space
    left, a quota) names none, and the message must say which file could not be written."""
    try:
        yield
    except OSError as err:
        if err.filename is not None or err.errno is None:
            raise
        raise OSError(err.errno, err.strerror, str(path)) from err
    except RuntimeError as err:
        # torch.save's C++ writer reports a full disk as an internal assertion, with no errno.
        if not _out_of_space(Path(path).parent):
            raise
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path)) from err


def _out_of_space(folder: Path) -> bool:
    """Whether the file system holding `folder` has (almost) no space left for an ordinary user."""
    try:
        stat = os.statvfs(folder)
    except OSError:
        return False
    return stat.f_bavail * stat.f_frsize < 1 << 20


def write_atomic(path: Path, write: Callable[[Path], None], new: bool = False) -> Path:
    """Call `write(tmp)` on a temporary file beside `path`, fsync it, then rename it onto `path`. With `new`, a file
    at `path` is never replaced: FileExistsError (a second run's file must be written under another name)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        with naming_the_file(path):
            write(tmp)
            with open(tmp, "rb") as f:
                os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        tmp.chmod(0o666 & ~umask)  # mkstemp makes 0600; results and reports are for everyone to read
        (_place_new if new else os.replace)(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def _place_new(tmp: Path, path: Path) -> None:
    """Rename `tmp` to `path` unless a file is there (FileExistsError), even one made meanwhile by another process."""
    try:
        os.link(tmp, path)  # unlike a rename, fails where the name is taken
    except FileExistsError:
        raise
    except OSError:  # a file system without hard links: claim the name first, then rename onto the claim
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        os.replace(tmp, path)


def write_json_atomic(path: Path, obj: Any, new: bool = False) -> Path:
    """Write `obj` as indented JSON to `path` atomically (with `new`, FileExistsError where `path` exists)."""
    return write_atomic(path, lambda tmp: tmp.write_text(json.dumps(obj, indent=2, sort_keys=False) + "\n"), new)


def write_text_atomic(path: Path, text: str) -> Path:
    """Write `text` to `path` atomically, as UTF-8 whatever the locale (the harness reads its files as UTF-8)."""
    return write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def read_json_object(path: Path) -> dict[str, Any]:
    """The JSON object in `path` (UTF-8). OSError where it cannot be read; ValueError where it is no JSON, no UTF-8
    or JSON of another kind than an object (an edited file, or one another tool wrote under the same name)."""
    value = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(value, dict):
        kind = {list: "list", str: "string", bool: "boolean", type(None): "null"}.get(type(value), "number")
        raise ValueError(f"a JSON {kind}, not an object")
    return value


def unreadable_reason(path: str | Path, err: OSError) -> str:
    """Why `path` cannot be read (`err` from opening it, or a folder on its way) and, where the file system's
    permissions refuse it, the fix; for messages that name the file first."""
    why = f"cannot be read: {(err.strerror or str(err)).lower()}"
    if not isinstance(err, PermissionError):
        return why
    return (f"{why}; give the user running the harness read access to it and search access to its folders "
            f"(e.g. chmod a+r {path})")


def aside_path(path: Path) -> Path:
    """`path` with `-<UTC time>` appended to its name (then -2, -3, ... where taken): a free name under which to
    keep what the harness must not use again (a damaged record, an earlier run's checkpoints) rather than delete it."""
    path = Path(path)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    aside, n = path.with_name(f"{path.name}-{stamp}"), 1
    while aside.exists() or aside.is_symlink():
        n += 1
        aside = path.with_name(f"{path.name}-{stamp}-{n}")
    return aside


def require_writable_dir(path: Path, key: str, fix: str | None = None) -> Path:
    """Create folder `path` and test-write a file in it, so that an unwritable folder fails before any work;
    SpecError naming `key`, the folder and `fix` otherwise (default: set `key` to another folder; a folder no
    setting names needs its own)."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-test.", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        fix = fix or f"Set {key} to a folder you can create and write."
        raise SpecError(f"'{key}' {str(path)!r} is not a writable folder ({err.strerror or err}). {fix}") from None
    return path


def require_writable_file(path: Path, key: str, fix: str | None = None) -> Path:
    """SpecError naming `key` before any work where file `path` could not be written at the end of it: a folder
    stands there, or its folder cannot be created or written. `fix` (default: give `key` another file) is for a
    file that `key` names only by its folder."""
    path = Path(path)
    if path.is_dir():
        raise SpecError(f"'{key}' {str(path)!r} is a folder; "
                        + (fix or f"give the path of the file to write in it, e.g. {path / 'record.json'}."))
    require_writable_dir(path.parent, key, fix or f"Give {key} a file in a folder you can create and write.")
    return path
