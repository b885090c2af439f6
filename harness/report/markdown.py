"""tables.md's cells as text: strings from records (a variant, a CPU's name, a file name) edited to hold HTML
would otherwise be rendered as HTML by Markdown viewers (GitHub's among them)."""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Sequence
from typing import Any

from harness.report.table_model import Table


def _text(value: Any) -> Any:
    return html.escape(value, quote=False) if isinstance(value, str) else value


def without_html(tables: Sequence[Table]) -> list[Table]:
    """`tables` with `&`, `<` and `>` in every string of their titles, rows and notes written as entities, which
    Markdown shows as those characters."""
    return [dataclasses.replace(t, title=_text(t.title), notes=tuple(_text(n) for n in t.notes),
                                rows=tuple({key: _text(value) for key, value in row.items()} for row in t.rows))
            for t in tables]
