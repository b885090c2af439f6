"""Every committed run record's id is what its settings hash to today: a new setting at its default, or a retired
one (harness.spec.RETIRED), must not change the ids of runs made before, or `harness reproduce` would redo every
recorded run."""

from __future__ import annotations

import json
from pathlib import Path

from harness.results import run_id
from harness.spec import spec_from_record

ROOT = Path(__file__).resolve().parents[2]


def test_committed_run_records_keep_their_run_ids():
    checked, moved = 0, []
    for path in sorted((ROOT / "results").rglob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(record, dict) or "run_id" not in record or "spec" not in record:
            continue
        checked += 1
        if run_id(spec_from_record(record["spec"])) != record["run_id"]:
            moved.append(str(path.relative_to(ROOT)))
    assert checked > 200 and not moved, f"{len(moved)} record(s) whose settings hash to another id: {moved[:5]}"
