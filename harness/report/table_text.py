"""Tables as the report's text files: one CSV of every table's raw numbers, and GitHub Markdown with the cells
printed as the HTML prints them."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from harness.report.table_model import Table, fmt, shown


def tables_csv(tables: Sequence[Table]) -> str:
    """All tables in one CSV (raw numbers): a 'table' column, then the union of the tables' columns."""
    keys: list[str] = []
    for t in tables:
        keys += [c.key for c in t.columns if c.key not in keys]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=["table", *keys], extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for t in tables:
        for row in t.rows:
            writer.writerow({"table": t.id, **{k: row.get(k) for k in keys}})
    return buf.getvalue()


def _md_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def tables_markdown(tables: Sequence[Table]) -> str:
    """All tables as GitHub Markdown, one section each (cells formatted as in the HTML)."""
    parts = []
    for t in tables:
        columns = shown(t)
        lines = [f"## {_md_cell(t.title)}", "", "| " + " | ".join(_md_cell(c.label) for c in columns) + " |",
                 "|" + "|".join("---" for _ in columns) + "|"]
        lines += ["| " + " | ".join(_md_cell(fmt(row.get(c.key), c.kind)) for c in columns) + " |"
                  for row in t.rows]
        lines += [""] + [f"{_md_cell(n)}" for n in t.notes]
        parts.append("\n".join(lines).rstrip() + "\n")
    return "\n".join(parts)
