"""The CSV and Markdown text of a report's tables."""

from __future__ import annotations

from harness.report.table_text import tables_csv, tables_markdown
from harness.report.tables import build_tables

from .report_records import PAPER, SUITE, make_record


def test_csv_and_markdown_hold_every_table():
    chosen = {"baseline": make_record("baseline", kind="baseline", train_s=100.0),
              "multigrid": make_record("multigrid|pipe", train_s=20.0)}
    chosen["multigrid"]["variant"] = "multigrid"
    tables = build_tables(SUITE, chosen, PAPER)
    assert [t.id for t in tables] == ["1a", "runs", "data_wait", "provenance"]
    csv_text = tables_csv(tables)
    header = csv_text.splitlines()[0].split(",")
    assert header[0] == "table" and "speedup" in header and "paper_top1" in header
    assert any(line.startswith("1a,4-shape (default),multigrid,ok") for line in csv_text.splitlines())
    md = tables_markdown(tables)
    assert "## Table 1a" in md and "| 4-shape (default) | multigrid |" in md and "5.00×" in md
