"""Real smoke-scale training runs → records → report → rendered by a real headless Chromium."""

from __future__ import annotations

import json
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
import torch

from harness.config import compose
from harness.report.browser import dump_dom, screenshot
from harness.report.smoke_view import SMOKE_SPEEDUP_LABEL
from harness.report.write import write_report
from harness.train.loop import train

from .conftest import smoke_overrides

BASELINE = ["multigrid.long_cycle=false", "multigrid.short_cycle=false"]


@pytest.fixture(scope="module")
def smoke_results(synth_root, tmp_path_factory) -> Path:
    """results/smoke/ with the records of a real baseline and a real multigrid run (no suite set: the trainer
    writes nothing into the repository's results/; we copy each record.json ourselves)."""
    results = tmp_path_factory.mktemp("results")
    # One intra-op thread: on a 2-core machine with anything else running, two OpenMP threads spin-wait for
    # each other and the two runs take ~40 s instead of ~10 s. The report reads whatever time was measured.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for variant, extra in (("baseline", BASELINE), ("multigrid", [])):
            out = tmp_path_factory.mktemp(variant)
            train(compose(smoke_overrides(synth_root, out, f"variant={variant}", *extra)))
            dest = results / "smoke" / "smoke" / f"{variant}.json"
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(out / "record.json", dest)
    finally:
        torch.set_num_threads(threads)
    return results


class _Tables(HTMLParser):
    """Rows (cell texts) of every table in a DOM, under the id of the heading before it, with each row's class."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[tuple[str, list[str]]]] = {}
        self.images: list[str] = []
        self._heading, self._row, self._cell, self._row_class = "", None, None, ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "h2":
            self._heading = a.get("id", "")
        elif tag == "tr":
            self._row, self._row_class = [], a.get("class", "")
        elif tag in ("td", "th") and self._row is not None:
            self._cell = ""
        elif tag == "img":
            self.images.append(a.get("src", "")[:30])

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append(self._cell.strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables.setdefault(self._heading, []).append((self._row_class, self._row))
            self._row = None


def test_report_of_real_runs_renders_in_chromium(smoke_results, chromium, tmp_path):
    records = {p.stem: json.loads(p.read_text()) for p in (smoke_results / "smoke" / "smoke").glob("*.json")}
    page = write_report("smoke", smoke_results, tmp_path / "reports")

    rendered = dump_dom(page, chromium)
    assert rendered.console_errors() == []
    dom = _Tables()
    dom.feed(rendered.output)
    assert "Smoke scale" in rendered.output and "2 of 2 runs" in rendered.output
    assert len(dom.images) == 3 and all(src.startswith("data:image/png;base64,") for src in dom.images)

    header, *rows = dom.tables["t-1a"]
    columns = header[1]
    by_row = {cells[0]: dict(zip(columns, cells)) for _, cells in rows}
    wall_clock = SMOKE_SPEEDUP_LABEL  # at smoke scale the ratios lead and wall-clock speedups say they mislead
    assert columns.index("× fewer iters") < columns.index("× fewer FLOPs") < columns.index(wall_clock)
    assert by_row["baseline"]["our run"] == "baseline" and by_row["baseline"][wall_clock] == "1.00×"
    multigrid = by_row["4-shape (default)"]
    assert multigrid["our run"] == "multigrid" and multigrid["paper speedup"] == "4.50×"
    assert multigrid["iterations"] == str(records["multigrid"]["measured"]["iterations"])
    speedup = records["baseline"]["measured"]["train_s"] / records["multigrid"]["measured"]["train_s"]
    assert multigrid[wall_clock] == f"{speedup:.2f}×"
    assert multigrid["top-1"] == f"{records['multigrid']['final']['top1']:.1f}"
    assert sum("status-not-in-this-suite" in cls for cls, _ in rows) == 3
    assert {"t-runs", "t-data_wait", "t-provenance"} <= set(dom.tables)
    waits = [cells for _, cells in dom.tables["t-data_wait"][1:]]
    assert {c[0] for c in waits} == {"baseline", "multigrid"} and sum(c[1] == "all" for c in waits) == 2

    shot = screenshot(page, tmp_path / "screenshot.png", browser=chromium)  # kept with the test's tmp files
    png = (tmp_path / "screenshot.png").read_bytes()
    assert shot.console_errors() == [] and png.startswith(b"\x89PNG")
    assert int.from_bytes(png[16:20], "big") == 1400 and int.from_bytes(png[20:24], "big") == 3000

    index = dump_dom(tmp_path / "reports" / "index.html", chromium)
    assert 'href="smoke/index.html"' in index.output and index.console_errors() == []
