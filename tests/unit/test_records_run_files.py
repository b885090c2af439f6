"""The run record reader: the records it reads, and those edited into values no run writes, refused by field."""

from __future__ import annotations

import json

import pytest

from .helpers import RESULTS, damaged


def test_a_run_record_saved_with_a_byte_order_mark_is_still_read(tmp_path):
    """Editors on Windows save UTF-8 with a BOM: the record is whole, so it counts (and its run is not redone)."""
    from harness.records import read_run_record

    from .report_records import make_record

    record = make_record("multigrid")
    path = tmp_path / "multigrid__k400_slowfast_r50_8x8__abc.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(record).encode())
    assert read_run_record(path) == (record, None)


@pytest.mark.parametrize("where, value, problem", [
    ("measured.iterations", -20, "'measured.iterations' is -20, not a count of the run"),
    ("measured.phases.0.clips", -1, "'measured.phases[0].clips' is -1, not a count"),
    ("plan.iterations", float("nan"), "'plan.iterations' is nan, not a count"),
    ("shape_checks", -3, "'shape_checks' is -3"),
    ("world_size", 0, "'world_size' is 0, not a number of processes"),
    ("date", "last tuesday", "'date' is 'last tuesday', not an ISO 8601 date"),
    ("commit", 1234567, "'commit' is a number, not a string or null"),
    ("plan.lr_steps", ["a"], "'plan.lr_steps[0]' is a string, not a number"),
    ("plan.lr_multipliers", [1.0, None], "'plan.lr_multipliers[1]' is null, not a number"),
])
def test_a_run_record_edited_into_values_no_run_writes_is_named_and_refused(tmp_path, where, value, problem):
    from harness.records import read_run_record

    from .report_records import make_record

    path = tmp_path / "r.json"
    path.write_text(json.dumps(damaged({**make_record("multigrid"), "shape_checks": 2}, where, value)))
    record, why = read_run_record(path)
    assert record is None and problem in why and "edited by hand" in why


def test_a_version_3_records_provenance_block_is_checked_too(tmp_path):
    from harness.records import read_run_record

    from .report_records import make_record

    old = make_record("multigrid")
    block = {key: old.pop(key) for key in ("commit", "date", "versions", "hardware")}
    path = tmp_path / "r.json"
    for damage, problem in (({"date": "2026-13-45"}, "'provenance.date' is '2026-13-45'"),
                            ({"commit": ["abc"]}, "'provenance.commit' is a list")):
        path.write_text(json.dumps({**old, "record_version": 3, "provenance": {**block, **damage}}))
        assert problem in read_run_record(path)[1]
    path.write_text(json.dumps({**old, "record_version": 3, "provenance": block}))
    assert read_run_record(path)[1] is None


def test_every_committed_run_record_passes_the_readers_checks():
    from harness.records import read_run_record

    runs = [p for p in sorted(RESULTS.rglob("*.json")) if '"measured"' in p.read_text()
            and '"variant"' in p.read_text()]
    assert len(runs) > 200  # the glob must not pass by finding nothing
    assert [(str(p.relative_to(RESULTS)), read_run_record(p)[1]) for p in runs if read_run_record(p)[1]] == []
