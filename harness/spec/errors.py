"""SpecError, the error every bad setting raises, and the "did you mean" its messages end with."""

from __future__ import annotations

import difflib
import typing


class SpecError(ValueError):
    """A setting is wrong. The message names the key and the fix."""


def did_you_mean(name: str, choices: typing.Iterable[str]) -> str:
    """Return ' Did you mean 'x'?' for the closest choice, or '' if nothing is close."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" Did you mean '{close[0]}'?" if close else ""
