"""Config files of suites/ (a suite, a scale) read as mappings, by path or by name with their keys checked; a
SpecError names the file and what is wrong."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from harness.io import unreadable_reason
from harness.spec import SpecError, did_you_mean


def read_yaml_mapping(path: Path) -> dict[str, Any]:
    """The mapping a config file (a suite, a scale) holds; SpecError naming the file where it cannot be read, is
    not UTF-8, not YAML or not a mapping."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise SpecError(f"{path} {unreadable_reason(path, err)}") from None
    except UnicodeDecodeError as err:  # saved by an editor in a legacy encoding
        raise SpecError(f"{path} is not UTF-8 text ({err.reason} at byte {err.start}); re-save it as UTF-8.") from None
    except yaml.YAMLError as err:
        raise SpecError(f"{path} is not valid YAML: {err}") from err
    if not isinstance(data, dict):
        raise SpecError(f"{path} must hold a mapping of keys.")
    return data


def read_named_mapping(kind: str, folder: Path, names: list[str], name: str, keys: set[str]
                       ) -> tuple[Path, dict[str, Any]]:
    """The path and mapping of FOLDER/NAME.yaml, for `name` one of the `names` of this `kind` ('suite', 'scale');
    SpecError for any other name (with a did-you-mean) and for a key outside `keys`."""
    if name not in names:
        raise SpecError(f"Unknown {kind} '{name}'.{did_you_mean(name, names)} "
                        f"{kind.capitalize()}s: {', '.join(names)}.")
    path = folder / f"{name}.yaml"
    data = read_yaml_mapping(path)
    unknown = set(data) - keys
    if unknown:
        raise SpecError(f"{path}: unknown key(s) {sorted(unknown)}; allowed: {sorted(keys)}.")
    return path, data
