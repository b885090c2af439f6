"""Publishing a suite's report folder (reports/<suite>/): never over a report built from more records, or from an
unknown number of them, and all of its files at once.

The report's files are written into a temporary folder beside the report's, which is then swapped in: the old
folder renamed aside, the new one renamed in, the old one removed. A reader, or a run killed at any moment, sees
the old report or the new one, never tables of one and a page of the other. Files in the folder that the report
does not write (`harness report --screenshot`'s screenshot.png, a user's notes) are carried into the new folder.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from harness.spec import SpecError

# The files a report is made of; summary.json says how many run records it was built from.
REPORT_FILES = ("index.html", "tables.csv", "tables.md", "summary.json")


class FewerRecords(SpecError):
    """The report would replace one built from more run records, or from an unknown number of them (`refusal` says
    which, without the fix)."""

    def __init__(self, refusal: str):
        super().__init__(f"{refusal} Check --results, pass --force to replace it anyway, or --out DIR to write the "
                         f"report elsewhere.")
        self.refusal = refusal


def records_behind(folder: Path) -> tuple[int | None, str | None]:
    """(how many run records the report in `folder` was built from, None); (None, why that is unknown) where the
    folder holds a report's files but its summary.json does not say; (None, None) where it holds no report.
    Reports written before summary.json counted records say how many runs they showed ("done")."""
    summary_path = Path(folder) / "summary.json"
    present = [name for name in REPORT_FILES if (Path(folder) / name).exists()]
    if not present:
        return None, None
    try:
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, f"has no summary.json (it holds {', '.join(present)})"
    except (OSError, ValueError) as err:
        return None, f"has a summary.json that cannot be read ({err})"
    count = summary.get("records", summary.get("done")) if isinstance(summary, dict) else None
    if not isinstance(count, int) or isinstance(count, bool):
        return None, "has a summary.json that does not say how many run records it was built from"
    return count, None


def require_not_fewer(folder: Path, records: int, source: Path) -> None:
    """FewerRecords unless a report of `records` run records (from `source`) may replace the report in `folder`:
    where that one was built from more, or from a number its summary.json does not tell (unknown is not fewer)."""
    before, unknown = records_behind(folder)
    report = Path(folder) / "index.html"
    if unknown is not None:
        raise FewerRecords(f"The report in {folder} {unknown}, so how many run records it was built from is "
                           f"unknown: refusing to replace it with a report of the {records} in {source}.")
    if before is not None and records < before:
        raise FewerRecords(f"{report} was built from {before} run records, but {source} holds {records}: refusing "
                           f"to replace it with a report of fewer records.")


def publish(folder: Path, files: Mapping[str, str]) -> Path:
    """Make `folder` hold `files` ({name: text}) and, unchanged, what else it held, all at once: written into a
    temporary folder beside it, which is then swapped in. Return `folder`."""
    folder = _real(folder)
    new = _temporary(folder, "new")
    new.mkdir()
    try:
        for name, text in files.items():
            _write_file(new / name, text)
        if folder.is_dir():
            shutil.copymode(folder, new)
            _carry_others(folder, new, set(files))
        _swap(folder, new)
    finally:
        shutil.rmtree(new, ignore_errors=True)  # gone already where it was swapped in
    return folder


def clean_stale(folder: Path) -> None:
    """Undo what a killed write of the report in `folder` left: the old folder put back where it was renamed aside
    and the new one not yet in; temporary folders beside it, and temporary files in it, of processes that ended."""
    folder = _real(folder)
    aside = sorted(_stale(folder, "old"), key=lambda p: p.stat().st_mtime)
    if aside and not folder.exists():
        try:
            os.rename(aside[-1], folder)
        except OSError as err:
            raise SpecError(f"The report {folder} was moved aside to {aside[-1]} by a write that was stopped, and "
                            f"putting it back failed ({err.strerror or err}). Rename {aside[-1].name} to "
                            f"{folder.name} by hand, then start again.") from None
    for stale in [*_stale(folder, "old"), *_stale(folder, "new")]:
        shutil.rmtree(stale, ignore_errors=True)
    for name in REPORT_FILES:  # the files' own atomic writes (harness.io.write_atomic) of an earlier version
        for tmp in folder.glob(f".{name}.*.tmp") if folder.is_dir() else ():
            tmp.unlink(missing_ok=True)


def _real(folder: Path) -> Path:
    """`folder`, or the folder it links to: the swap renames a folder, which would replace the link."""
    folder = Path(folder)
    return folder.resolve() if folder.is_symlink() else folder


def _temporary(folder: Path, kind: str) -> Path:
    return folder.with_name(f".{folder.name}.{kind}-{os.getpid()}")


def _stale(folder: Path, kind: str) -> list[Path]:
    """The temporary `kind` folders beside `folder` whose process has ended (a running write keeps its own)."""
    found = []
    for path in folder.parent.glob(f".{folder.name}.{kind}-*"):
        pid = path.name.rsplit("-", 1)[1]
        if not (pid.isdigit() and _alive(int(pid))):
            found.append(path)
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except PermissionError:  # another user's process
        return True
    except (ProcessLookupError, OverflowError):  # ended; a number no process has
        return False
    return True


def _write_file(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())  # on disk before the folder is swapped in, so that a power cut leaves no empty file
    os.chmod(path, 0o644)  # a report is for reading (served, shared, opened)


def _carry_others(folder: Path, new: Path, written: set[str]) -> None:
    """Link (or copy) into `new` what `folder` holds that the report does not write (a screenshot, notes)."""
    for entry in folder.iterdir():
        if entry.name in written or entry.name in REPORT_FILES:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, new / entry.name, symlinks=True, copy_function=_link_or_copy)
        else:
            _link_or_copy(entry, new / entry.name)


def _link_or_copy(source: str | Path, target: str | Path) -> None:
    if not os.path.islink(source):
        try:
            os.link(source, target)  # no second copy of a large screenshot
            return
        except OSError:  # another file system, or one without hard links
            pass
    shutil.copy2(source, target, follow_symlinks=False)


def _swap(folder: Path, new: Path) -> None:
    """Rename `folder` aside, `new` in its place, then remove the old one; `folder` put back where `new` fails."""
    if not folder.exists():
        os.rename(new, folder)
    else:
        old = _temporary(folder, "old")
        os.rename(folder, old)
        try:
            os.rename(new, folder)
        except OSError:
            os.rename(old, folder)
            raise
        shutil.rmtree(old, ignore_errors=True)
    _sync_folder(folder.parent)


def _sync_folder(folder: Path) -> None:
    """The renames on disk (a folder's entries are written when it is synced)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems refuse fsync on a folder
        pass
    finally:
        os.close(fd)
