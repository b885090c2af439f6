"""Every kind of record is written as its type says: `record_version`, its fields, one provenance block."""

from __future__ import annotations

import json
from dataclasses import fields

import pytest

from harness import cli
from harness.provenance import provenance_of
from harness.records import Record, ScalingRecord, SuiteProfileRecord, ThroughputRecord

from .measurement_records import PROFILE, SCALING, THROUGHPUT

PROVENANCE = {"commit": "abc", "date": "2024-01-01T00:00:00+00:00", "versions": {"python": "3.11"},
              "hardware": {"cpu_count": 2}}


def _fields(kind: type[Record], **given):
    """Every field of `kind` set (to a placeholder unless given), as a measurement function would return them."""
    return {f.name: given.get(f.name, f.name) for f in fields(kind) if f.init and f.name != "provenance"}


@pytest.mark.parametrize("kind", Record.__subclasses__(), ids=lambda k: k.__name__)
def test_a_record_is_its_version_its_fields_and_one_provenance_block(kind):
    written = kind(**_fields(kind), provenance=PROVENANCE).to_dict()
    keys = list(written)
    assert keys[0] == "record_version" and written["record_version"] == kind.VERSION >= 2
    assert keys[-1] == "provenance" and written["provenance"] == PROVENANCE
    assert not {"commit", "git_commit", "hardware", "versions"} & set(keys)


def test_a_field_the_type_does_not_name_is_refused():
    with pytest.raises(TypeError, match="device_name"):
        ThroughputRecord(**_fields(ThroughputRecord), device_name="x")


def test_optional_fields_are_left_out_while_unset():
    record = _fields(SuiteProfileRecord)
    del record["loader"]
    assert "loader" not in SuiteProfileRecord(**record).to_dict()
    assert SuiteProfileRecord(**record, loader={"source": "bench.json"}).to_dict()["loader"]


def test_the_default_block_is_this_machine_s_provenance():
    block = provenance_of(ThroughputRecord(**_fields(ThroughputRecord)).to_dict())
    assert block["commit"] and block["date"] and block["hardware"]["cpu_count"] and block["versions"]["python"]


@pytest.mark.parametrize("module, name, measured, argv, kind", [
    ("harness.measure.throughput", "measure_throughput", THROUGHPUT, ["throughput", "--json"], ThroughputRecord),
    ("harness.measure.scaling", "measure_scaling", {**SCALING, "is_main": True}, ["scaling"], ScalingRecord),
    ("harness.measure.predict", "profile_suite", PROFILE, ["profile", "--suite", "smoke", "--json"],
     SuiteProfileRecord),
], ids=["throughput", "scaling", "profile --suite"])
def test_measurement_commands_write_their_record_type(module, name, measured, argv, kind, monkeypatch, tmp_path,
                                                      capsys):
    monkeypatch.setattr(f"{module}.{name}", lambda *a, **k: dict(measured))
    out = tmp_path / "record.json"
    assert cli.main([*argv, "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["record_version"] == kind.VERSION
    assert {k: v for k, v in record.items() if k not in ("record_version", "provenance")} == \
        {k: v for k, v in measured.items() if k != "is_main"}
    assert provenance_of(record) == record["provenance"] and record["provenance"]["hardware"]["cpu_count"]
