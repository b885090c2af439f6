"""What a report is made of: the suite definition, the paper's rows and the run records.

Parsing is pure (`suite_from_mapping`, `select_records`); the `load_*` functions are the I/O edge.
The report parses suite YAML with `harness.suite.suite_from_mapping` but skips the runner's checks, so
that it renders whatever records exist, even for a suite whose recipes no longer compose.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from harness.config import suites_dir
from harness.spec import SpecError, did_you_mean
from harness.suite import SuiteDef, suite_from_mapping


def _suite_folder(root: Path | None) -> Path:
    return (root or suites_dir()) / "experiments"


def suite_names(root: Path | None = None) -> list[str]:
    return sorted(p.stem for p in _suite_folder(root).glob("*.yaml"))


def load_suite_def(name: str, root: Path | None = None) -> SuiteDef:
    """Read suites/experiments/NAME.yaml."""
    path = _suite_folder(root) / f"{name}.yaml"
    if not path.is_file():
        names = suite_names(root)
        raise SpecError(f"Unknown suite '{name}'.{did_you_mean(name, names)} Suites: {', '.join(names)}.")
    return suite_from_mapping(name, yaml.safe_load(path.read_text()) or {})


def load_records(folder: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Every record under `folder` (results/<suite>/, any depth: records may sit in per-scale folders), each with
    its path relative to `folder` under '_source'; and the problems met."""
    records, problems = [], []
    for path in sorted(Path(folder).rglob("*.json")):
        name = str(path.relative_to(folder))
        try:
            record = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as err:
            problems.append(f"{name}: unreadable ({err})")
            continue
        if not isinstance(record, dict) or "variant" not in record or "measured" not in record:
            problems.append(f"{name}: not a run record")
            continue
        records.append({**record, "_source": name})
    return records, problems


def record_scale(record: Mapping[str, Any]) -> str:
    return str((record.get("spec") or {}).get("scale") or "unknown")


def record_setup(record: Mapping[str, Any]) -> str:
    """How a record's run executed, beyond its scale: processes and step mode (timings differ between them)."""
    world = int(record.get("world_size") or 1)
    step = str((record.get("step") or {}).get("mode") or "eager")
    return f"{world} GPU{'s' if world > 1 else ''}, {step} steps"


def select_records(suite: SuiteDef, records: Iterable[Mapping[str, Any]],
                   scale: str | None = None) -> tuple[str | None, dict[str, Mapping[str, Any]], list[str]]:
    """Pick one record per variant: complete, of one scale (`scale`, else the newest record's) and one setup
    (processes and step mode: the newest record's), newest first.

    Mixing scales or setups would turn speedups into nonsense, so records of other scales or setups are left
    out (and said so). Returns (scale, {variant: record}, notes).
    """
    notes: list[str] = []
    complete = []
    for r in records:
        if r.get("status") != "complete":
            notes.append(f"{r.get('_source', r.get('run_id'))}: status {r.get('status')!r}, left out")
        elif suite.run(str(r.get("variant"))) is None:
            notes.append(f"{r.get('_source', r.get('run_id'))}: variant {r.get('variant')!r} is not in the suite, "
                         f"left out")
        else:
            complete.append(r)
    complete.sort(key=lambda r: str(r.get("date", "")), reverse=True)
    if scale is None and complete:
        scale = record_scale(complete[0])
    setup = next((record_setup(r) for r in complete if record_scale(r) == scale), None)
    chosen: dict[str, Mapping[str, Any]] = {}
    other: dict[str, int] = {}
    other_setup: dict[str, int] = {}
    for r in complete:
        if record_scale(r) != scale:
            other[record_scale(r)] = other.get(record_scale(r), 0) + 1
        elif record_setup(r) != setup:
            other_setup[record_setup(r)] = other_setup.get(record_setup(r), 0) + 1
        elif str(r["variant"]) in chosen:
            notes.append(f"{r.get('_source', r.get('run_id'))}: an older record of {r['variant']!r}, left out")
        else:
            chosen[str(r["variant"])] = r
    for name, count in sorted(other.items()):
        notes.append(f"{count} record(s) at {name} scale left out (this report shows {scale} scale; "
                     f"use --scale {name} for those)")
    for name, count in sorted(other_setup.items()):
        notes.append(f"{count} record(s) run with {name} left out (this report shows the newest setup, {setup}; "
                     f"keep other setups' records in another results folder to report them)")
    return scale, chosen, notes


def ordered(suite: SuiteDef, chosen: Mapping[str, Mapping[str, Any]]) -> Sequence[Mapping[str, Any]]:
    """The chosen records in the suite's run order."""
    return [chosen[r.variant] for r in suite.runs if r.variant in chosen]
