"""Rows of the report's tables for the report tests: one found by its fields."""

from __future__ import annotations


def row_where(table, **match):
    """The first row of `table` whose fields have the values in `match`."""
    return next(r for r in table.rows if all(r.get(k) == v for k, v in match.items()))
