"""The layer rule's promises that the import graph alone does not show: reports and the schedule load no torch, and
the harness's locations come from harness.paths."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import run

REPO = Path(__file__).resolve().parents[2]
# Printed last by the code under test: the torch and torchvision modules loaded by then.
LOADED = "print('loaded:', *sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'torchvision')))"


def _loaded(code: str) -> str:
    """What LOADED prints after `code` runs in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", f"import sys\n{code}\n{LOADED}"], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, check=True).stdout
    return out.strip().splitlines()[-1]


@pytest.mark.parametrize("module", ["harness.report.page", "harness.report.measurements", "harness.report.write",
                                    "harness.report.overview"])
def test_a_report_module_imports_no_torch(module):
    """Reports are pure functions of records (docs/design.md): importing them loads neither torch nor torchvision."""
    assert _loaded(f"import {module}") == "loaded:"


def test_making_a_report_imports_no_torch(tmp_path):
    """Making the committed kinetics_ablation report, its measurement tables included, loads no torch either."""
    code = (f"from pathlib import Path\nfrom harness.report.write import write_report\n"
            f"write_report('kinetics_ablation', out_dir=Path({str(tmp_path)!r}), force=True)")
    assert _loaded(code) == "loaded:"
    assert (tmp_path / "kinetics_ablation" / "index.html").is_file()


def test_schedule_does_not_import_torch():
    code = ("import sys, harness.schedule, harness.config, harness.cli; "
            "assert 'torch' not in sys.modules, 'harness.schedule must stay torch-free'")
    out = run(sys.executable, "-c", code)
    assert out.returncode == 0, out.stderr


def test_locations_follow_their_environment_variables(monkeypatch, tmp_path):
    from harness import paths

    monkeypatch.setenv("HARNESS_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "")  # restored after the test: compile_cache_dir sets it
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR")
    assert paths.results_root() == tmp_path / "results" and paths.reports_dir() == tmp_path / "reports"
    assert paths.data_home() == tmp_path / "data"
    assert paths.compile_cache_dir() == str(tmp_path / "data" / "torch-compile")
    monkeypatch.delenv("HARNESS_RESULTS_DIR")
    assert paths.results_root() == paths.CHECKOUT / "results" == paths.COMMITTED_RESULTS
    assert (paths.suites_dir() / "config.yaml").is_file()
