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


class ValuesBeforeOverrides(argparse.Action):
    """A flag's `nargs="+"` values that end at the first key=value token: that token and those after it are the
    command's overrides (argparse would read `--only baseline data.root=DIR` as two variants). They are kept in
    `overrides_among_values`, which `gathered_overrides` adds to the command's overrides. `convert` is the values'
    type (argparse's `type=` would refuse a key=value before this action sees it)."""

    def __init__(self, *args, convert: Callable[[str], object] = str, **kwargs):
        super().__init__(*args, nargs="+", **kwargs)
        self.convert = convert

    def __call__(self, parser, namespace, values, option_string=None):
        end = next((i for i, v in enumerate(values) if "=" in v), len(values))
        if end == 0:
            raise argparse.ArgumentError(self, f"expected at least one {self.metavar or 'value'} before {values[0]}")
        setattr(namespace, self.dest, [self._converted(v) for v in values[:end]])
        namespace.overrides_among_values = [*getattr(namespace, "overrides_among_values", []), *values[end:]]

    def _converted(self, value: str):
        try:
            return self.convert(value)
        except ValueError:
            raise argparse.ArgumentError(self, f"invalid {self.metavar or 'value'}: {value!r}") from None


def gathered_overrides(args: argparse.Namespace) -> list[str]:
    """The command's key=value overrides: its positional ones and those given after a ValuesBeforeOverrides flag."""
    return [*(getattr(args, "overrides", None) or []), *getattr(args, "overrides_among_values", [])]


def require_each_key_once(overrides: list[str]) -> None:
    """SpecError naming a key that `overrides` set twice (`a=1 a=2`), which would otherwise take the last value
    silently, whichever the user meant."""
    from harness.spec import SpecError

    seen: dict[str, str] = {}
    for override in overrides:
        key = override.split("=", 1)[0].lstrip("+~")
        if key in seen:
            raise SpecError(f"'{key}' is given twice ({seen[key]} and {override}): give each key once.")
        seen[key] = override
