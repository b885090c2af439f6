"""Every kind of record is written as its type says: `record_version`, its fields, one provenance block."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pytest

from harness import cli
from harness.provenance import provenance_of
from harness.records import (
    Record,
    RecordError,
    ScalingRecord,
    SuiteProfileRecord,
    ThroughputRecord,
    read_scaling_record,
    read_suite_profile,
    read_throughput_record,
)

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


# The measurement commands with their measurement replaced: what they write around it.
THROUGHPUT = {"device": "cpu", "matmul_tflops": 1.0, "precision": "fp32", "warmup": 1, "repeats": 2, "skipped": [],
              "rows": [], "notes": "n"}
SCALING = {"suite": "smoke", "scale": "smoke", "world_size": 1, "device": "cpu", "global_batch": 2, "step": "eager",
           "warmup": 1, "repeats": 2, "shapes": [], "predicted_s": {}, "fixed_per_gpu_batch": 8,
           "sub_batch_bn": "triton"}
PROFILE = {"suite": "smoke", "scale": "smoke", "device": "cpu", "step": "eager", "runs": [], "shapes": [],
           "assumptions": "a"}


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


def test_a_run_record_saved_with_a_byte_order_mark_is_still_read(tmp_path):
    """Editors on Windows save UTF-8 with a BOM: the record is whole, so it counts (and its run is not redone)."""
    from harness.records import read_run_record

    from .test_report_tables import make_record

    record = make_record("multigrid")
    path = tmp_path / "multigrid__k400_slowfast_r50_8x8__abc.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(record).encode())
    assert read_run_record(path) == (record, None)


RESULTS = Path(__file__).resolve().parents[2] / "results"


def _damaged(record: dict, where: str, value) -> dict:
    """`record` with the field at dotted path `where` (a list index as a number) set to `value`."""
    record = json.loads(json.dumps(record))
    *parents, last = [int(k) if k.isdigit() else k for k in where.split(".")]
    block = record
    for key in parents:
        block = block[key]
    block[last] = value
    return record


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

    from .test_report_tables import make_record

    path = tmp_path / "r.json"
    path.write_text(json.dumps(_damaged({**make_record("multigrid"), "shape_checks": 2}, where, value)))
    record, why = read_run_record(path)
    assert record is None and problem in why and "edited by hand" in why


def test_a_version_3_records_provenance_block_is_checked_too(tmp_path):
    from harness.records import read_run_record

    from .test_report_tables import make_record

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


PROFILED_RUN = {"variant": "multigrid", "paper": [{"table": "1a", "row": "4-shape (default)", "speedup": "4.5"}],
                "iteration_ratio": 3.4, "predicted_gpu_hours": 1.0, "baseline_predicted_gpu_hours": 3.0,
                "predicted_speedup": 3.0}
SCALED_SHAPE = {"t": 8, "s": 112, "per_gpu_batch": 8, "global_batch": 8, "bn_splits": 1, "bn_sync": 1,
                "median_ms": 50.0, "clips_per_s": 160.0}
TIMED_ROW = {"recipe": "a", "model": "a", "t": 32, "s": 224, "batch": 8, "mode": "eager", "ms_per_step": 60.0,
             "clips_per_s": 133.0, "train_tflops": 1.0, "share_of_matmul": 0.01, "setup_s": 0.0}
READERS = {"profile": (read_suite_profile, {**PROFILE, "runs": [PROFILED_RUN]}),
           "scaling": (read_scaling_record, {**SCALING, "shapes": [SCALED_SHAPE]}),
           "throughput": (read_throughput_record, {**THROUGHPUT, "rows": [TIMED_ROW]})}


def _written(tmp_path: Path, record: dict) -> Path:
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record))
    return path


@pytest.mark.parametrize("kind", READERS)
def test_a_measurement_record_the_report_reads_comes_back_whole(tmp_path, kind):
    read, record = READERS[kind]
    assert read(_written(tmp_path, record)) == record


@pytest.mark.parametrize("kind, where, problem", [
    ("profile", "runs.0.predicted_speedup", "no 'runs[0].predicted_speedup'"),
    ("profile", "runs.0.paper.0.row", "no 'runs[0].paper[0].row'"),
    ("scaling", "world_size", "no 'world_size'"),
    ("scaling", "shapes.0.median_ms", "no 'shapes[0].median_ms'"),
    ("throughput", "rows.0.ms_per_step", "no 'rows[0].ms_per_step'"),
])
def test_a_measurement_record_missing_a_field_is_a_record_error_naming_the_file_and_the_field(tmp_path, kind,
                                                                                              where, problem):
    read, record = READERS[kind]
    damaged = json.loads(json.dumps(record))
    *parents, last = [int(k) if k.isdigit() else k for k in where.split(".")]
    block = damaged
    for key in parents:
        block = block[key]
    del block[last]
    path = _written(tmp_path, damaged)
    with pytest.raises(RecordError) as caught:
        read(path)
    assert caught.value.problem == problem and caught.value.path == path and str(path) in str(caught.value)


@pytest.mark.parametrize("kind, where, value, problem", [
    ("profile", "runs", "x", "'runs' is a string, not a list"),
    ("profile", "step", 3, "'step' is a number, not a string"),
    ("profile", "shapes", [{"t": 8, "s": 112, "batch": 8, "bn_splits": 1, "median_ms": 1.0, "plain_bn_ms": 0}],
     "'shapes[0].plain_bn_ms' is 0, not a number above 0"),
    ("scaling", "shapes.0.median_ms", float("nan"), "'shapes[0].median_ms' is nan, not a number above 0"),
    ("scaling", "world_size", "2", "'world_size' is a string, not an integer"),
    ("throughput", "rows.0.ms_per_step", 0, "'rows[0].ms_per_step' is 0, not a number above 0"),
    ("throughput", "rows.0.kernels", {"device_ms_per_step": 1.0, "busy_share": 0.5, "groups_ms": {"copy": "x"},
                                      "top": []}, "'rows[0].kernels.groups_ms.copy' is a string, not a number"),
    ("throughput", "provenance", {"hardware": {"gpu": 100}}, "'provenance.hardware.gpu' is a number"),
])
def test_a_measurement_field_of_another_type_is_a_record_error(tmp_path, kind, where, value, problem):
    read, record = READERS[kind]
    with pytest.raises(RecordError, match="^.*record.json: ") as caught:
        read(_written(tmp_path, _damaged(record, where, value)))
    assert caught.value.problem.startswith(problem)


@pytest.mark.parametrize("text, problem", [("{not json", "no JSON object: "), ("[1]", "no JSON object: a JSON list")])
def test_a_measurement_file_that_is_no_json_object_is_a_record_error(tmp_path, text, problem):
    path = tmp_path / "t.json"
    path.write_text(text)
    with pytest.raises(RecordError) as caught:
        read_throughput_record(path)
    assert caught.value.problem.startswith(problem)
    with pytest.raises(RecordError, match="cannot be read"):
        read_throughput_record(tmp_path / "missing.json")


def test_every_committed_measurement_record_passes_its_reader():
    found = {read_suite_profile: sorted((RESULTS / "profile").glob("*/*.json")),
             read_scaling_record: sorted((RESULTS / "scaling").glob("*/*/*.json")),
             read_throughput_record: sorted((RESULTS / "throughput").glob("*.json"))}
    suites = {p.stem for p in (RESULTS.parent / "suites" / "experiments").glob("*.yaml")}
    found[read_suite_profile] = [p for p in found[read_suite_profile] if p.stem in suites]  # the suites' profiles
    found[read_scaling_record] = [p for p in found[read_scaling_record] if p.parts[-3] in suites]
    assert all(len(paths) > 5 for paths in found.values())  # the globs must not pass by finding nothing
    for read, paths in found.items():
        for path in paths:
            read(path)


def test_the_kernel_groups_records_read_are_those_the_profiler_sorts_into():
    # records.py restates the groups (in the order tables show them) because the report layer must not import the
    # profiler, which imports torch
    from harness.measure.kernels import GROUPS
    from harness.records import KERNEL_GROUPS

    assert sorted(KERNEL_GROUPS) == sorted([*(group for group, _ in GROUPS), "other"])
    assert len(set(KERNEL_GROUPS)) == len(KERNEL_GROUPS)
