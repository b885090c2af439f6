"""A report table as data: raw values per row (what the CSV holds) and, per column, the kind that says how a value
prints in the HTML and the Markdown."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    kind: str = "text"  # text | int | float | ratio | seconds | gflops | pct | share
    paper: bool = False  # a number copied from the paper (shown shaded)
    show: bool = True  # False: in the CSV only (the HTML and Markdown say it otherwise, e.g. by row style)


@dataclass(frozen=True)
class Table:
    id: str
    title: str
    columns: tuple[Column, ...]
    rows: tuple[Mapping[str, Any], ...]
    notes: tuple[str, ...] = field(default_factory=tuple)


def fmt(value: Any, kind: str) -> str:
    """How a cell prints in HTML and Markdown ('' for missing)."""
    if value is None or value == "" or (isinstance(value, float) and math.isnan(value)):
        return ""
    if kind == "int":
        return f"{int(value):,}"
    if kind == "float":
        return f"{float(value):.2f}"
    if kind == "ratio":
        return f"{float(value):.2f}×"
    if kind == "pct":
        return f"{float(value):.1f}"
    if kind == "share":
        return f"{100 * float(value):.1f}%"
    if kind == "gflops":
        v = float(value)
        return f"{v / 1000:,.1f} T" if v >= 1000 else f"{v:.3g} G"
    if kind == "seconds":
        return format_duration(float(value))
    if kind == "commit":  # a full hash stays in the CSV; people read the first 12 digits
        text = str(value)
        return text[:12] + ("+dirty" if text.endswith("+dirty") else "")
    return str(value)


def format_duration(seconds: float) -> str:
    if seconds >= 2 * 86400:
        return f"{seconds / 86400:.1f} d"
    if seconds >= 2 * 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 120:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.1f} s"


def shown(table: Table) -> tuple[Column, ...]:
    """The columns of `table` that HTML and Markdown show."""
    return tuple(c for c in table.columns if c.show)
