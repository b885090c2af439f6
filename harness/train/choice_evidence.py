"""The evidence `auto` chooses by (harness.train.choose), read from the records committed in results/.

- step times: the suite profiles (`harness profile --suite`, results/profile/<folder>/<suite>.json) made on the
  card, by step mode, sub-batch BN implementation, model and shape; where several time the same, the newest.
  Folders named `*_experiment` hold measurements of settings the trainer does not run (their records do not say
  which), so they are left out;
- compile time per shape: the largest `setup_s` of the compiled-and-graphed rows of `harness throughput` records
  (results/throughput/*.json) made on the card, a machine's first process compiling (the worst case);
- numerics passes: results/numerics/fast_paths.json, written by the numerics GPU test
  (tests/integration/test_fast_path_numerics.py) when asked to record.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from harness.paths import COMMITTED_RESULTS
from harness.provenance import provenance
from harness.schedule.trained import iterations_by_layout, iterations_by_shape
from harness.train.choose import Evidence, RunShapes, ShapeKey

NUMERICS_TABLE = "numerics/fast_paths.json"


def card_evidence(card: str, results: Path = COMMITTED_RESULTS) -> Evidence:
    """Everything the committed records say about `card` (a GPU's name as CUDA gives it, e.g. "NVIDIA H200")."""
    return Evidence(step_ms=profiled_step_ms(card, results), compile_s_per_shape=compile_seconds(card, results),
                    passed=frozenset(numerics_passes(card, results)))


def profiled_step_ms(card: str, results: Path = COMMITTED_RESULTS) -> dict[tuple[str, str, str], dict[ShapeKey, float]]:
    """(step, sub_batch_bn, model) -> shape -> median ms, from the card's suite profiles (newest first wins)."""
    found: dict[tuple[str, str, str], dict[ShapeKey, float]] = {}
    for record in sorted(_suite_profiles(card, results), key=_date, reverse=True):
        path = (record.get("step", "eager"), record.get("sub_batch_bn") or "auto")
        for row in record["shapes"]:
            times = found.setdefault((*path, row["model"]), {})
            key = (row["t"], row["s"], row["batch"], row["bn_splits"])
            if key not in times and math.isfinite(row["median_ms"]):
                times[key] = row["median_ms"]
    return found


def compile_seconds(card: str, results: Path = COMMITTED_RESULTS) -> dict[str, float]:
    """Model -> the largest measured compile-and-capture seconds of one shape on `card`."""
    worst: dict[str, float] = {}
    for record in _json_files(results / "throughput"):
        if record.get("device") != card:
            continue
        for row in record.get("rows", []):
            if row.get("mode") == "compile_graphs" and math.isfinite(row.get("setup_s", math.nan)):
                worst[row["model"]] = max(worst.get(row["model"], 0.0), row["setup_s"])
    return worst


def numerics_passes(card: str, results: Path = COMMITTED_RESULTS) -> set[str]:
    """The fast paths (e.g. "sub_batch_bn=triton", "step=compile_graphs") whose numerics test passed on `card`."""
    table = _read_json(results / NUMERICS_TABLE) or {}
    return {p["path"] for p in table.get("passes", []) if p.get("card") == card}


def record_numerics_pass(path: str, card: str, measured: dict[str, Any], results: Path = COMMITTED_RESULTS) -> None:
    """Add a pass of `path`'s numerics test on `card` to the table (with what it measured and its provenance),
    replacing an earlier pass of the same path on the same card."""
    file = results / NUMERICS_TABLE
    table = _read_json(file) or {"passes": []}
    table["passes"] = [p for p in table["passes"] if (p.get("path"), p.get("card")) != (path, card)]
    table["passes"].append({"path": path, "card": card, **measured, "provenance": provenance()})
    table["provenance"] = provenance()  # of the table's last change
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps(table, indent=2) + "\n")


def run_shapes(plan, model: str, num_gpus: int) -> RunShapes:
    """The rule's view of a Plan: one GPU's iterations at each shape and the step keys it specialises on."""
    return RunShapes(model, dict(iterations_by_shape(plan)), len(iterations_by_layout(plan)), num_gpus)


def _suite_profiles(card: str, results: Path) -> list[dict[str, Any]]:
    profiles = []
    for folder in sorted((results / "profile").glob("*")):
        if not folder.is_dir() or folder.name.endswith("_experiment"):
            continue
        for record in _json_files(folder):
            gpu = record.get("provenance", {}).get("hardware", {}).get("gpu")
            if "suite" in record and record.get("shapes") and gpu == card:
                profiles.append(record)
    return profiles


def _date(record: dict[str, Any]) -> str:
    return record.get("provenance", {}).get("date") or ""


def _json_files(folder: Path) -> list[dict[str, Any]]:
    records = (_read_json(f) for f in sorted(folder.glob("*.json")))
    return [r for r in records if isinstance(r, dict)]


def _read_json(file: Path) -> Any:
    try:
        return json.loads(file.read_text())
    except (OSError, ValueError):
        return None
