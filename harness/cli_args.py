"""argparse types of the commands' numeric flags: a count or size out of range is named by argparse (exit 2)
before any work, not met later as a traceback (a median of no repeats, a tensor of negative size)."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def int_at_least(minimum: int) -> Callable[[str], int]:
    """The type of a flag that takes an integer >= `minimum`."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value

    parse.__name__ = f"integer >= {minimum}"  # what argparse's own messages call the type
    return parse


COUNT = int_at_least(1)  # repeats, clips, frames, pixels, channels, groups
NON_NEGATIVE = int_at_least(0)  # warm-up steps, padding channels, kernels to list


def path(text: str) -> str:
    """The type of a flag that names a file or folder. An empty value (`--out "$DIR"` with DIR unset) is refused:
    read as a path it is the current folder, where the command would write a dataset or a report unasked."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must name a file or folder, got an empty value (an unset shell variable?)")
    return text
