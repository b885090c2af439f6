"""Typed readers of the measurement records the report reads (suite profiles, scaling, throughput): a record with
every field its tables need, or a RecordError naming the file and the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.io import read_json_object, unreadable_reason
from harness.records.schema import DIVISOR, NUM, NUM_OR_NULL, STR_OR_NULL, Needed, OrNull, wrong_type


class RecordError(ValueError):
    """A measurement record file the report cannot read: unreadable, no JSON object, or a field the report reads
    missing or of another type. `problem` names the field; the message names the file too."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path, self.problem = Path(path), problem


# The groups of a throughput row's `kernels.groups_ms` (harness.measure.kernels.GROUPS), in the order tables show.
KERNEL_GROUPS = ("convolution", "normalisation", "elementwise", "copy", "matmul", "communication", "other")

# The fields of the measurement records (SuiteProfileRecord, ScalingRecord, ThroughputRecord) the report reads.
# harness.provenance.provenance_of: in a block, or at the top level in records before the block existed.
_PROVENANCE = {"provenance": {"hardware": {"gpu": STR_OR_NULL}, "versions": dict}, "hardware": {"gpu": STR_OR_NULL},
               "versions": dict}
_SUITE_PROFILE: dict[str, Any] = {
    "step": str, "sub_batch_bn": STR_OR_NULL, "loader": OrNull(dict),
    "runs": [{"variant": Needed(str), "loader_bound_speedup": NUM_OR_NULL,
              "paper": [{"table": Needed(str), "row": Needed(str)}],
              **{key: Needed(NUM_OR_NULL) for key in ("iteration_ratio", "predicted_gpu_hours",
                                                      "baseline_predicted_gpu_hours", "predicted_speedup")}}],
    "shapes": [{"model": str, "median_ms": Needed(NUM), "plain_bn_ms": OrNull(DIVISOR),
                **{key: Needed(int) for key in ("t", "s", "batch", "bn_splits")}}],
    **_PROVENANCE}
_SCALING: dict[str, Any] = {
    "world_size": Needed(int), "scale": Needed(str), "step": str, "sub_batch_bn": str, "repeats": int,
    "fixed_per_gpu_batch": OrNull(int),
    "predicted_s": {"multigrid": NUM_OR_NULL, "baseline_of_multigrid": NUM_OR_NULL},
    "shapes": Needed([{"median_ms": Needed(DIVISOR), "bn_splits": Needed(DIVISOR), "clips_per_s": Needed(NUM),
                       **{key: Needed(int) for key in ("t", "s", "global_batch", "per_gpu_batch", "bn_sync")}}]),
    **_PROVENANCE}
_KERNELS = {"device_ms_per_step": Needed(NUM_OR_NULL), "busy_share": Needed(NUM_OR_NULL),
            "groups_ms": Needed({group: NUM_OR_NULL for group in KERNEL_GROUPS}),
            "top": Needed([{"name": Needed(str), "share": Needed(NUM)}])}
# harness.train.compile_cost: summed seconds and cache counts, which the report adds up, and cells it shows
_COMPILE = {**{key: NUM for key in ("compile_s", "inductor_forward_s", "inductor_backward_s", "inductor_cache_hits",
                                    "inductor_cache_misses", "aot_autograd_cache_hits", "aot_autograd_cache_misses")},
            **{key: NUM_OR_NULL for key in ("graphs", "tracing_s", "aot_autograd_s", "guards_s")}}
_THROUGHPUT: dict[str, Any] = {
    "matmul_tflops": NUM,
    "rows": [{"recipe": Needed(str), "model": Needed(str), "mode": Needed(str), "ms_per_step": Needed(DIVISOR),
              "setup_s": Needed(NUM), "pad_stem_channels": OrNull(int), "plain_bn_impl": str,
              "kernels": OrNull(_KERNELS), "compile": OrNull(_COMPILE),
              **{key: Needed(int) for key in ("t", "s", "batch")},
              **{key: Needed(NUM_OR_NULL) for key in ("clips_per_s", "train_tflops", "share_of_matmul")}}],
    **_PROVENANCE}


def _read_measurement(path: Path, schema: dict[str, Any]) -> dict[str, Any]:
    """The record in `path` where it holds every field of `schema` the report needs; RecordError otherwise."""
    try:
        record = read_json_object(path)
    except OSError as err:
        raise RecordError(path, unreadable_reason(path, err)) from None
    except ValueError as err:  # not JSON, not UTF-8, or JSON of another kind than an object
        raise RecordError(path, f"no JSON object: {err}") from None
    problem = wrong_type(record, schema, "")
    if problem:
        raise RecordError(path, problem)
    return record


def read_suite_profile(path: Path) -> dict[str, Any]:
    """A `harness profile --suite` record (SuiteProfileRecord) with the fields its tables, the verdict and the
    overview read; RecordError naming the file and the field otherwise."""
    return _read_measurement(path, _SUITE_PROFILE)


def read_scaling_record(path: Path) -> dict[str, Any]:
    """A `harness scaling` record (ScalingRecord) with the fields its tables read; RecordError otherwise."""
    return _read_measurement(path, _SCALING)


def read_throughput_record(path: Path) -> dict[str, Any]:
    """A `harness throughput` record (ThroughputRecord) with the fields its tables read; RecordError otherwise."""
    return _read_measurement(path, _THROUGHPUT)
