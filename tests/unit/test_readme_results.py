"""The README's results block is what the committed records generate, and `harness report` keeps it so."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.report import readme
from harness.report.write import readme_results_from_records

ROOT = Path(__file__).resolve().parents[2]


def test_the_readmes_results_block_is_what_the_records_generate():
    committed = readme.current_block((ROOT / "README.md").read_text(encoding="utf-8"))
    generated = readme_results_from_records(ROOT / "results")
    assert committed == generated, ("README.md's results block differs from what results/ generates: run "
                                    "`harness report --suite NAME` for the suites whose records changed")


def test_the_block_is_replaced_between_its_markers_and_nowhere_else(tmp_path):
    path = tmp_path / "README.md"
    path.write_text(f"# title\n\nbefore\n\n{readme.BEGIN}\nold\n{readme.END}\n\nafter\n")
    path.chmod(0o644)
    block = f"{readme.BEGIN}\nnew\n{readme.END}"
    assert readme.write_block(path, block) and path.read_text() == f"# title\n\nbefore\n\n{block}\n\nafter\n"
    assert path.stat().st_mode & 0o777 == 0o644 and not readme.write_block(path, block)  # current: not rewritten
    plain = tmp_path / "PLAIN.md"
    plain.write_text("no block\n")
    assert not readme.write_block(plain, block) and plain.read_text() == "no block\n"
    with pytest.raises(readme.NoBlock):
        readme.replace_block(f"{readme.END}\n{readme.BEGIN}\n", block)


def test_the_headline_says_plainly_what_the_evidence_supports():
    row = {"table": "1a", "paper_row": "4-shape (default)", "suite": "s", "scale": "proxy", "delta": -1.21,
           "interval": 2.3, "df": 3.6, "verdict": "inconclusive", "seeds_needed": 40, "compared": "4 v 4",
           "speedup": 2.44, "speedup_range": "2.39–2.49× (4 pairs)", "paper_speedup": 4.5, "paper_delta": 0.8,
           "margin": 1.0}
    text = readme.headline([row])
    assert "-1.2 ± 2.3" in text and "**inconclusive**" in text and "not yet shown" in text and "about 40" in text
    assert "within 1 point" in readme.headline([{**row, "verdict": "within δ"}])
    assert readme.headline([{**row, "delta": None}]) == ""


def test_the_readme_copies_the_committed_overview_table():
    """The README's results section reproduces reports/overview.md's table (the one `harness report` wrote last):
    a report rendered again must be copied there too, or the README states numbers the records no longer give."""
    root = Path(__file__).resolve().parents[2]

    overview = [line for line in (root / "reports" / "overview.md").read_text(encoding="utf-8").splitlines()
                if line.startswith("|")]
    readme = (root / "README.md").read_text(encoding="utf-8").splitlines()
    assert overview and overview[0] in readme, "README.md lacks the overview table's header"
    start = readme.index(overview[0])
    assert readme[start:start + len(overview) + 1] == [*overview, ""], \
        "copy reports/overview.md's table into README.md"
