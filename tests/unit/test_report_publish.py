"""A report's files change together: `harness report` killed at any point leaves the old report or the new one,
never a mix, and the next run cleans up what the killed one left; files the report does not write stay."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from harness.cli import main

from .report_records import results_folder

REPO = Path(__file__).resolve().parents[2]
# `harness report` that kills itself (SIGKILL: nothing of its own runs after) right after its Nth rename into or
# beside the report's folder (argv[2]; a file's atomic write, or a step of the folder's swap).
KILLED_AFTER_RENAME = """
import os, signal, sys
from pathlib import Path
from harness.cli import main
left, folder = [int(sys.argv[1])], Path(sys.argv[2])
def killing(rename):
    def renamed(source, target, **kwargs):
        rename(source, target, **kwargs)
        target = Path(target)
        if folder in (target, target.parent) or target.name.startswith(f".{folder.name}."):
            left[0] -= 1
            if not left[0]:
                os.kill(os.getpid(), signal.SIGKILL)
    return renamed
os.rename, os.replace = killing(os.rename), killing(os.replace)
sys.exit(main(sys.argv[3:]))
"""
REPORT_FILES = ("index.html", "tables.csv", "tables.md", "summary.json")


def _files(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in REPORT_FILES if (folder / name).exists()}


def _report(results: Path, out: Path) -> None:
    assert main(["report", "--suite", "smoke", "--results", str(results), "--out", str(out)]) == 0


def test_a_killed_report_leaves_the_old_or_the_new_and_the_next_run_cleans_up(tmp_path, capsys):
    old_records, new_records = results_folder(tmp_path / "old", ("baseline",)), results_folder(tmp_path / "new")
    _report(new_records, tmp_path / "new_report")
    _report(old_records, tmp_path / "old_report")
    new, old = _files(tmp_path / "new_report" / "smoke"), _files(tmp_path / "old_report" / "smoke")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for renames in range(1, 10):
        out = tmp_path / f"out{renames}"
        folder = out / "smoke"
        shutil.copytree(tmp_path / "old_report", out)
        (folder / "screenshot.png").write_bytes(b"a screenshot")
        (folder / ".tables.csv.x1y2.tmp").write_text("left by a write killed before its rename")
        (out / ".smoke.new-999999999").mkdir()  # a killed run's half-written report (no such process)
        cmd = [sys.executable, "-c", KILLED_AFTER_RENAME, str(renames), str(folder), "report", "--suite", "smoke",
               "--results", str(new_records), "--out", str(out)]
        killed = subprocess.run(cmd, env=env, capture_output=True, text=True).returncode == -9
        if folder.is_dir():
            assert _files(folder) in (old, new), f"a mixed report after rename {renames}"
            assert _files(folder) == new or killed
        _report(new_records, out)  # the next run finds the old report, or the new one, and replaces it
        assert _files(folder) == new and (folder / "screenshot.png").read_bytes() == b"a screenshot"
        assert sorted(p.name for p in folder.iterdir()) == ["index.html", "screenshot.png", "summary.json",
                                                            "tables.csv", "tables.md"]
        assert not [p.name for p in out.iterdir() if p.name.startswith(".smoke.")]
        if not killed:  # every rename of a whole run was a point to be killed at
            break
    assert renames == 3  # killed with the old folder aside, with the new one in, and not killed
