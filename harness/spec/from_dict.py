"""Building a RunSpec from a plain nested dict (what Hydra composes from ``suites/``): every key checked, with a
"did you mean" for an unknown one, every value converted to its annotated type or refused naming its key."""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from typing import Any

from harness.spec.errors import SpecError, did_you_mean
from harness.spec.retired import RETIRED, retired_message, without_retired_defaults
from harness.spec.run import RunSpec, validate


def known_keys(cls: type = RunSpec, prefix: str = "") -> list[str]:
    """Every dotted key a RunSpec accepts, e.g. 'solver.base_lr'."""
    keys: list[str] = []
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        key = prefix + f.name
        if dataclasses.is_dataclass(hints[f.name]):
            keys.extend(known_keys(hints[f.name], key + "."))
        else:
            keys.append(key)
    return keys


def check_key(key: str) -> None:
    """Raise SpecError if `key` (dotted) is not a RunSpec key, with a did-you-mean; a retired key's says so."""
    if key in RETIRED:
        raise SpecError(retired_message(key))
    keys = known_keys()
    sections = {k.split(".")[0] for k in keys if "." in k}
    if key in keys or key in sections:
        return
    raise SpecError(f"Unknown config key '{key}'.{did_you_mean(key, keys + sorted(sections))} "
                    f"Run 'harness plan --keys' to list every key.")


def _coerce(value: Any, hint: Any, key: str) -> Any:
    """Convert a YAML/Hydra value to the annotated type, or raise SpecError naming the key."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _coerce(value, inner[0], key)
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            example = f"[{value}]" if args and args[0] is str else "[0,94,154,196]"  # the value itself, as a list
            raise SpecError(f"'{key}' must be a list, got {value!r}. Example: {key}={example}.")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_coerce(v, args[0], f"{key}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise SpecError(f"'{key}' must have {len(args)} entries, got {len(value)}: {list(value)!r}.")
        return tuple(_coerce(v, a, f"{key}[{i}]") for i, (v, a) in enumerate(zip(value, args)))
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise SpecError(f"'{key}' must be true or false, got {value!r}.")
    if hint is int:
        # is_integer() is False for inf and nan, which int() would raise on instead of naming the key.
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not float(value).is_integer():
            raise SpecError(f"'{key}' must be an integer, got {value!r}.")
        return int(value)
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise SpecError(f"'{key}' must be a number, got {value!r}.")
        if not math.isfinite(value):
            raise SpecError(f"'{key}' must be finite, got {value!r}.")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise SpecError(f"'{key}' must be a string, got {value!r}.")
        return value
    raise TypeError(f"unsupported annotation {hint!r} for {key}")  # a bug in this module, not user input


def _build(cls: type, raw: Any, prefix: str) -> Any:
    if not isinstance(raw, dict):
        raise SpecError(f"'{prefix.rstrip('.') or 'config'}' must be a mapping of keys, got {raw!r}.")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    kwargs = {}
    for name, value in raw.items():
        if name not in names:
            key = prefix + str(name)
            if key in RETIRED:
                raise SpecError(retired_message(key))
            raise SpecError(f"Unknown config key '{key}'.{did_you_mean(str(name), names)} "
                            f"Known keys under '{prefix.rstrip('.') or 'the top level'}': {', '.join(names)}.")
        hint = hints[name]
        if dataclasses.is_dataclass(hint):
            kwargs[name] = _build(hint, value, prefix + name + ".")
        else:
            kwargs[name] = _coerce(value, hint, prefix + name)
    return cls(**kwargs)


def spec_from_dict(raw: dict[str, Any]) -> RunSpec:
    """Build and validate a RunSpec from a nested dict; raise SpecError on the first problem."""
    return validate(_build(RunSpec, without_retired_defaults(raw), ""))


def spec_from_record(raw: dict[str, Any]) -> RunSpec:
    """The RunSpec of a committed record's spec: as spec_from_dict, but retired values are kept as the run had
    them (a record is history, not a setting to run)."""
    return validate(_build(RunSpec, without_retired_defaults(raw), ""), retired_ok=True)

