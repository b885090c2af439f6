"""The typed readers of measurement records: what they read, and the RecordError naming the file and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.records import RecordError, read_scaling_record, read_suite_profile, read_throughput_record

from .helpers import RESULTS, damaged
from .measurement_records import PROFILE, SCALING, THROUGHPUT

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
        read(_written(tmp_path, damaged(record, where, value)))
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
    # records/measurements.py restates the groups (in the order tables show them) because the report layer must not
    # import the profiler, which imports torch
    from harness.measure.kernels import GROUPS
    from harness.records import KERNEL_GROUPS

    assert sorted(KERNEL_GROUPS) == sorted([*(group for group, _ in GROUPS), "other"])
    assert len(set(KERNEL_GROUPS)) == len(KERNEL_GROUPS)
