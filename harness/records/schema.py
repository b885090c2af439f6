"""A small schema language for the JSON records the harness reads, and the one check against it, so that a record
edited by hand or written by another tool is named by its field instead of failing halfway through a report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# What the fields of a record hold, as far as the report reads them: a type or a tuple of types; {field: ...}, an
# object with those fields; [...], a list of such items; Needed(...), OrNull(...) and DIVISOR below. A field not
# Needed may be absent (records of older versions lack some); one of another type is a record edited by hand or
# written by another tool, which would end the report in a traceback halfway through its tables.


@dataclass(frozen=True)
class Needed:
    """A field that every record of the kind holds, as `want` says; the report indexes it without a default."""

    want: Any


@dataclass(frozen=True)
class OrNull:
    """`want`, or null: a field the report tests for a value before it reads it."""

    want: Any


DIVISOR = "a number above 0"  # a field the report divides by


NUM = (int, float)
NUM_OR_NULL = (int, float, type(None))
STR_OR_NULL = (str, type(None))
_TYPE_NAMES = {dict: "an object", list: "a list", str: "a string", int: "an integer", bool: "true or false",
               NUM: "a number", NUM_OR_NULL: "a number or null", STR_OR_NULL: "a string or null"}


def json_type(value: Any) -> str:
    return "null" if value is None else {bool: "a boolean", dict: "an object", list: "a list", str: "a string",
                                         int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def wrong_type(value: Any, want: Any, key: str) -> str | None:
    """What is wrong with `value` at `key` ('' for a whole record) against the schema `want`, or None."""
    if isinstance(want, OrNull):
        return None if value is None else wrong_type(value, want.want, key)
    if isinstance(want, dict):
        if not isinstance(value, dict):
            return f"'{key}' is {json_type(value)}, not an object"
        for field, inner in want.items():
            where = f"{key}.{field}" if key else field
            if field not in value:
                if isinstance(inner, Needed):
                    return f"no '{where}'"
                continue
            problem = wrong_type(value[field], inner.want if isinstance(inner, Needed) else inner, where)
            if problem:
                return problem
        return None
    if isinstance(want, list):
        if not isinstance(value, list):
            return f"'{key}' is {json_type(value)}, not a list"
        return next((p for i, item in enumerate(value) for p in [wrong_type(item, want[0], f"{key}[{i}]")] if p),
                    None)
    if want == DIVISOR:  # NaN included: it is not above 0
        number = isinstance(value, NUM) and not isinstance(value, bool)
        return None if number and value > 0 else f"'{key}' is {value if number else json_type(value)}, not {want}"
    kinds = want if isinstance(want, tuple) else (want,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):  # JSON's true is no number
        return f"'{key}' is {json_type(value)}, not {_TYPE_NAMES[want]}"
    return None
