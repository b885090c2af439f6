"""The documentation site: docs/ and the reports built into one static site by MkDocs, opened in Chromium."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.report.browser import dump_dom

ROOT = Path(__file__).resolve().parents[2]


def test_the_docs_site_builds_with_the_reports_and_opens_in_a_browser(chromium, tmp_path):
    pytest.importorskip("mkdocs")
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--quiet", "-f", str(ROOT / "mkdocs.yml"), "-d",
                    str(site)], check=True, cwd=ROOT, timeout=300)
    assert (site / "reports" / "index.html").is_file()  # the reports travel with the docs
    assert not (site / "hooks.py").exists()
    page = dump_dom(site / "usage" / "index.html", chromium)
    assert "Command and key reference" in page.output and "harness reproduce" in page.output
    assert not page.console_errors()
    home = dump_dom(site / "index.html", chromium).output
    assert 'href="reports/index.html"' in home and "statistics" in home
