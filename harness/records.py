"""The records the harness writes: one type per kind, each with its version and one provenance block.

A writer builds its kind's record from what it measured and writes `to_dict()`: `record_version`, the fields in
the order declared here, then `provenance` (made by `harness.provenance.provenance`, the same for every kind).
A kind's VERSION moves whenever its fields change, so that a reader can tell which fields a record may lack.
Records written before a kind had a version carry no `record_version` and count as version 1 (run records
always had one). Read a record's provenance with `harness.provenance.provenance_of`, whatever its version.
The report and `reproduce` read run record files with `read_run_record`, which says why a file is none.
"""

from __future__ import annotations

import datetime
import json
import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar

from harness.io import read_json_object, unreadable_reason
from harness.provenance import provenance
from harness.spec import SpecError

# The metadata of a field some records lack: left out of `to_dict()` while None (readers test for the key).
OPTIONAL = {"optional": True}


@dataclass(kw_only=True)
class Record:
    VERSION: ClassVar[int]
    provenance: dict[str, Any] = field(default_factory=provenance)

    def to_dict(self) -> dict[str, Any]:
        body = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "provenance"
                and not (f.metadata.get("optional") and getattr(self, f.name) is None)}
        return {"record_version": self.VERSION, **body, "provenance": self.provenance}


@dataclass(kw_only=True)
class RunRecord(Record):
    """One training run (`harness train`): results/<suite>/<scale>/<variant>__<recipe>__<run id>.json (a rerun's:
    ...__<run id>__2.json, __3, ...).

    Versions: 1, the first records; 2, records that may carry final.train_top1/train_videos, same_run_as,
    resumed_from_iteration and outside_steps (fields added while version 1 was written, so optional in both);
    3, commit, date, versions and hardware moved from the top level into `provenance`; records of compiled steps
    may carry step.compile (harness.train.compile_cost) and step.choice (what `auto` chose and why,
    harness.train.choose), added while version 3 was written, so optional."""

    VERSION: ClassVar[int] = 3
    run_id: str  # hash of the resolved spec without output and logging settings
    suite: str | None
    recipe: str | None
    variant: str | None
    status: str  # "complete": the reports read only complete records
    spec: dict[str, Any]  # every setting
    plan: dict[str, Any]  # kind, lr_steps, lr_multipliers, max_epoch, iterations, baseline_iterations, ...
    world_size: int
    precision: str  # "bf16" or "fp32"
    channels_last: bool
    clip_gflops: list[dict[str, Any]]  # forward GFLOPs of one clip at every planned (t, s)
    measured: dict[str, Any]  # per-phase and total times, data wait, FLOPs, memory (RunMeter.summary)
    shape_checks: int  # iterations at which every rank confirmed the same shape
    epoch_losses: list[float]
    evals: list[dict[str, Any]]
    final: dict[str, Any]  # the last evaluation
    bad_videos: dict[str, Any]
    step: dict[str, Any]  # mode, setup_s, specialisations of this attempt (compiled steps: compile, its stages)
    outside_steps: dict[str, Any]  # this attempt's wall-clock outside the timed steps
    resumed_from_iteration: int  # where this attempt began (0: a fresh run)
    # The record this one copies (`harness reproduce` reuses a record of the identical run under another suite).
    same_run_as: str | None = field(default=None, metadata=OPTIONAL)


@dataclass(kw_only=True)
class SuiteProfileRecord(Record):
    """Predicted wall-clock and speedup of every run of a suite (`harness profile --suite`):
    results/profile/<scale or experiment>/<suite>.json. Version 2: `record_version` and nothing else new."""

    VERSION: ClassVar[int] = 2
    suite: str
    scale: str
    device: str
    step: str  # the step mode timed (absent from version-1 records made before step modes: eager)
    runs: list[dict[str, Any]]
    shapes: list[dict[str, Any]]  # the timed step of every planned shape
    assumptions: str
    # With --data: the loader rates that the loader-bound columns of `runs` assume.
    loader: dict[str, Any] | None = field(default=None, metadata=OPTIONAL)
    # How sub-batch BN ran (train.sub_batch_bn; absent from records made before the choice existed: auto).
    sub_batch_bn: str | None = field(default=None, metadata=OPTIONAL)


@dataclass(kw_only=True)
class PlanProfileRecord(Record):
    """Step time of every planned shape of one run and its predicted speedup (`harness profile --out` without
    --suite); `harness data bench --consumer` reads its shapes."""

    VERSION: ClassVar[int] = 2
    recipe: str | None
    kind: str  # the plan's kind: baseline or multigrid
    device: str
    step: str
    model: str
    shapes: list[dict[str, Any]]
    predicted_hours: float
    baseline_predicted_hours: float
    predicted_speedup: float
    iteration_ratio: float
    assumptions: str
    spec: dict[str, Any]
    loader_bound: dict[str, Any] | None = field(default=None, metadata=OPTIONAL)  # with --data


@dataclass(kw_only=True)
class ThroughputRecord(Record):
    """Training-step time at each recipe's baseline shape, plain loop vs the trainer's step modes
    (`harness throughput`): results/throughput/*.json. Some rows' fields are optional (`kernels`, `compile`,
    `pad_stem_channels`, `plain_bn_impl`): readers take them with defaults."""

    VERSION: ClassVar[int] = 2
    device: str
    matmul_tflops: float  # the bf16 matrix-product ceiling measured on the device
    precision: str
    warmup: int
    repeats: int
    skipped: list[str]  # step modes that need a GPU, on a CPU
    rows: list[dict[str, Any]]
    notes: str


@dataclass(kw_only=True)
class ScalingRecord(Record):
    """Step time of every planned shape at the scale's global batch over N processes (`harness scaling`):
    results/scaling/<suite>/<scale>/gpus<N>.json."""

    VERSION: ClassVar[int] = 2
    suite: str
    scale: str
    world_size: int
    device: str
    global_batch: int
    step: str  # absent from version-1 records made before step modes: eager
    warmup: int
    repeats: int
    shapes: list[dict[str, Any]]
    predicted_s: dict[str, float]  # seconds of steps of each run and its baseline
    # Base-shape clips per GPU held fixed across process counts (weak scaling, `--per-gpu-batch`); None: the
    # global batch is held fixed. Both absent from records made before they were kept: None and auto.
    fixed_per_gpu_batch: int | None = None
    sub_batch_bn: str = "auto"


@dataclass(kw_only=True)
class DataBenchRecord(Record):
    """Loader clips/s per planned shape and worker count (`harness data bench`): results/data_bench/*.json.
    Version 2: provenance in the block (version 1 kept it at the top level, the commit under `git_commit`); version
    2 records of the retired NVDEC paths also hold nvdec_threads and nvdec_access. Version 3: neither."""

    VERSION: ClassVar[int] = 3
    kind: str = field(default="data-bench", init=False)
    preset: str | None  # the synthetic preset the dataset was made with, if any
    dataset: dict[str, Any]  # name, root, videos
    decode_threads: int | None
    intra_op_threads: int
    cache: dict[str, Any] | None  # the frame cache measured beside PyAV (null: none)
    paths: list[dict[str, Any]]  # every loader path measured, summed up
    shapes: list[dict[str, Any]]
    prepared: str | None = None  # the `harness data prepare` copy measured beside the source, if any
    # Shapes the plan trains: more than len(shapes) where the bench was cut off (None in records made before).
    planned_shapes: int | None = None


@dataclass(kw_only=True)
class PrepareRecord(Record):
    """A re-encoded copy of a dataset (`harness data prepare`): prepare.json in the copy's folder. Version 2:
    `record_version` and `provenance` (version 1 had neither)."""

    VERSION: ClassVar[int] = 2
    settings: dict[str, Any]  # what the copy was made with; a later run into the folder must match it
    complete: bool
    videos: int
    prepared: int
    reused: int  # already in the copy
    bad: list[dict[str, Any]]
    source_bytes: int
    bytes: int
    storage_ratio: float | None
    annotation_files: list[str]
    seconds: float


# What the fields of a record hold, as far as the report reads them: a type or a tuple of types; {field: ...}, an
# object with those fields; [...], a list of such items; Needed(...), OrNull(...) and DIVISOR below. A field not
# Needed may be absent (records of older versions lack some); one of another type is a record edited by hand or
# written by another tool, which would end the report in a traceback halfway through its tables.


@dataclass(frozen=True)
class Needed:
    """A field that every record of the kind holds, as `want` says; the report indexes it without a default."""

    want: Any


@dataclass(frozen=True)
class OrNull:
    """`want`, or null: a field the report tests for a value before it reads it."""

    want: Any


DIVISOR = "a number above 0"  # a field the report divides by


_NUM = (int, float)
_NUM_OR_NULL = (int, float, type(None))
_STR_OR_NULL = (str, type(None))
_EVAL = {key: _NUM_OR_NULL for key in ("epoch", "iteration", "videos", "videos_scored", "top1", "top5", "map",
                                       "train_top1", "train_top5", "train_map", "train_videos",
                                       "train_videos_scored")}
_PHASE = {"phase": int, "per_gpu_batches": [int], "bn_splits": int, "bn_sync": int,
          **{key: _NUM for key in ("iterations", "clips", "data_wait_s", "compute_s", "wall_s", "clips_per_s",
                                   "data_wait_share", "forward_gflops", "peak_memory_gib")}}
_RUN_RECORD: dict[str, Any] = {
    "run_id": str, "suite": _STR_OR_NULL, "recipe": _STR_OR_NULL, "variant": _STR_OR_NULL, "status": str,
    "spec": {"scale": str, "seed": int, "suite": _STR_OR_NULL, "variant": _STR_OR_NULL, "recipe": _STR_OR_NULL,
             **{key: dict for key in ("data", "model", "train", "solver", "multigrid", "baseline")}},
    "plan": {"kind": str, "lr_steps": [_NUM], "lr_multipliers": [_NUM],
             **{key: _NUM for key in ("max_epoch", "iterations", "baseline_iterations", "iteration_ratio",
                                      "warmup_epochs")}},
    "world_size": int, "precision": str, "channels_last": bool,
    "clip_gflops": [{"t": int, "s": int, "gflops": _NUM}],
    "measured": {"phases": [_PHASE], **{key: _NUM_OR_NULL for key in (
        "iterations", "clips", "train_s", "data_wait_s", "compute_s", "data_wait_share", "eval_s", "forward_gflops",
        "peak_memory_gib")}},
    "shape_checks": int, "epoch_losses": [_NUM_OR_NULL], "evals": [_EVAL], "final": _EVAL,
    "bad_videos": {"bad_videos": int, "failed_reads": int, "files": list, "by_reason": dict},
    "step": {"mode": str, "setup_s": _NUM, "specialisations": int, "compile": dict, "choice": dict},
    "outside_steps": {key: _NUM for key in ("setup_s", "checkpoint_s", "precise_bn_s", "total_s")},
    "resumed_from_iteration": int, "same_run_as": str,
    # harness.provenance.provenance_of: in a block, or at the top level in records before version 3
    "provenance": {"commit": _STR_OR_NULL, "date": _STR_OR_NULL, "versions": dict, "hardware": dict},
    "commit": _STR_OR_NULL, "date": _STR_OR_NULL, "versions": dict, "hardware": dict,
}
_TYPE_NAMES = {dict: "an object", list: "a list", str: "a string", int: "an integer", bool: "true or false",
               _NUM: "a number", _NUM_OR_NULL: "a number or null", _STR_OR_NULL: "a string or null"}


def _json_type(value: Any) -> str:
    return "null" if value is None else {bool: "a boolean", dict: "an object", list: "a list", str: "a string",
                                         int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def _wrong_type(value: Any, want: Any, key: str) -> str | None:
    """What is wrong with `value` at `key` ('' for a whole record) against the schema `want`, or None."""
    if isinstance(want, OrNull):
        return None if value is None else _wrong_type(value, want.want, key)
    if isinstance(want, dict):
        if not isinstance(value, dict):
            return f"'{key}' is {_json_type(value)}, not an object"
        for field, inner in want.items():
            where = f"{key}.{field}" if key else field
            if field not in value:
                if isinstance(inner, Needed):
                    return f"no '{where}'"
                continue
            problem = _wrong_type(value[field], inner.want if isinstance(inner, Needed) else inner, where)
            if problem:
                return problem
        return None
    if isinstance(want, list):
        if not isinstance(value, list):
            return f"'{key}' is {_json_type(value)}, not a list"
        return next((p for i, item in enumerate(value) for p in [_wrong_type(item, want[0], f"{key}[{i}]")] if p),
                    None)
    if want == DIVISOR:  # NaN included: it is not above 0
        number = isinstance(value, _NUM) and not isinstance(value, bool)
        return None if number and value > 0 else f"'{key}' is {value if number else _json_type(value)}, not {want}"
    kinds = want if isinstance(want, tuple) else (want,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):  # JSON's true is no number
        return f"'{key}' is {_json_type(value)}, not {_TYPE_NAMES[want]}"
    return None


def run_record_problem(record: Any) -> str | None:
    """Why `record` (parsed JSON) is no run record the report can read, or None where it is one."""
    missing = [key for key in ("variant", "spec", "measured") if key not in record] if isinstance(record, dict) \
        else None
    if missing is None or missing:
        lacks = f"no {', '.join(repr(k) for k in missing)}" if missing else f"{_json_type(record)}, not an object"
        return f"not a run record ({lacks}; a file of another tool?)"
    problem = _wrong_type(record, _RUN_RECORD, "")
    if problem:
        return f"not a run record the harness wrote: {problem} (edited by hand, or of another tool?)"
    impossible = _impossible_value(record)
    if impossible:
        return f"not a run record the harness wrote: {impossible} (edited by hand, or of another tool?)"
    return None


_PERCENTS = ("top1", "top5", "map", "train_top1", "train_top5", "train_map")  # of an evaluation
_SECONDS = ("train_s", "data_wait_s", "compute_s", "eval_s")  # of `measured`
# Counts and sizes no run makes negative, per block of the record ("": the top level).
_NON_NEGATIVE = {"": ("shape_checks", "resumed_from_iteration"),
                 "measured": ("iterations", "clips", "forward_gflops", "peak_memory_gib"),
                 "plan": ("max_epoch", "iterations", "baseline_iterations", "iteration_ratio", "warmup_epochs")}
_PHASE_COUNTS = ("iterations", "clips", "wall_s", "data_wait_s", "compute_s", "forward_gflops", "peak_memory_gib")


def _impossible_value(record: dict[str, Any]) -> str | None:
    """A number no run measures (a score outside [0, 100], a negative or infinite time, NaN), which a report
    would show as a speedup or accuracy; None where there is none."""
    evals = record.get("evals") if isinstance(record.get("evals"), list) else []
    blocks = [("final", record.get("final")), *((f"evals[{i}]", e) for i, e in enumerate(evals))]
    for where, block in blocks:
        for key in _PERCENTS if isinstance(block, dict) else ():
            value = block.get(key)
            if isinstance(value, _NUM) and not 0 <= value <= 100:
                return f"'{where}.{key}' is {value}, not a percentage"
    measured = record.get("measured")
    for key in _SECONDS if isinstance(measured, dict) else ():
        value = measured.get(key)
        if isinstance(value, _NUM) and not 0 <= value < math.inf:
            return f"'measured.{key}' is {value}, not a time in seconds"
    return _negative_count(record) or _not_a_date(record) or _not_a_world_size(record)


def _negative_count(record: dict[str, Any]) -> str | None:
    """A count or size of the run (iterations, clips, epochs, GFLOPs) below 0, infinite or NaN; None where none is."""
    measured = record.get("measured")
    phases = measured.get("phases") if isinstance(measured, dict) else None
    blocks = [*((name, record.get(name) if name else record, keys) for name, keys in _NON_NEGATIVE.items()),
              *((f"measured.phases[{i}]", phase, _PHASE_COUNTS) for i, phase in enumerate(phases or []))]
    for where, block, keys in blocks:
        for key in keys if isinstance(block, dict) else ():
            value = block.get(key)
            if isinstance(value, _NUM) and not 0 <= value < math.inf:
                return f"'{where + '.' if where else ''}{key}' is {value}, not a count of the run"
    return None


def _not_a_world_size(record: dict[str, Any]) -> str | None:
    world = record.get("world_size")
    return None if not isinstance(world, int) or world >= 1 else f"'world_size' is {world}, not a number of processes"


def _not_a_date(record: dict[str, Any]) -> str | None:
    """The record's date (in its provenance block, or at the top level before version 3) where it is no ISO 8601
    date and time, which the report sorts records by and shows; None where it is one or there is none."""
    block = record.get("provenance") if isinstance(record.get("provenance"), dict) else record
    key = "provenance.date" if block is not record else "date"
    date = block.get("date")
    if not isinstance(date, str):
        return None
    try:
        datetime.datetime.fromisoformat(date)
    except ValueError:
        return f"'{key}' is {date!r}, not an ISO 8601 date and time (e.g. 2026-01-31T12:00:00+00:00)"
    return None


def read_run_record(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """(the run record in `path`, None), or (None, why it is none: unreadable, not JSON or not UTF-8, truncated,
    another tool's file). The one test of a record file: the report leaves out what fails it, and `reproduce` does
    not count a run as recorded by it, so the two always agree on which runs are done. SpecError naming the file
    where the file system refuses it: that says nothing of its content."""
    try:
        # utf-8-sig: a record saved again by an editor that adds a byte-order mark (Windows tools do) is still one.
        record = json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except PermissionError as err:
        # Perhaps a whole record: counted as damaged, it would be moved aside and its run trained again.
        raise SpecError(f"Run record {path} {unreadable_reason(path, err)}; then start again.") from None
    except (OSError, ValueError) as err:  # ValueError: invalid JSON (a truncated write), or bytes that are not UTF-8
        return None, f"unreadable ({err})"
    problem = run_record_problem(record)  # JSON of another kind than an object included, named as such
    return (None, problem) if problem else (record, None)


COMPLETE = "complete"  # the status of a finished run's record (harness.train writes no other)


def incomplete_reason(record: dict[str, Any]) -> str | None:
    """Why the run record `record` (one read_run_record returns) is no finished run's, or None where it is one:
    the report shows only finished runs, and `reproduce` counts only those as done."""
    status = record.get("status")
    return None if status == COMPLETE else f"status {status!r}, not {COMPLETE!r}: not a finished run's record"


def read_complete_run_record(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """As read_run_record, and a record of an unfinished run (incomplete_reason) is none either: the one test of
    whether a file records a run done, for `reproduce` and the report alike."""
    record, problem = read_run_record(path)
    problem = problem or incomplete_reason(record)
    return (None, problem) if problem else (record, None)


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
_PROVENANCE = {"provenance": {"hardware": {"gpu": _STR_OR_NULL}, "versions": dict}, "hardware": {"gpu": _STR_OR_NULL},
               "versions": dict}
_SUITE_PROFILE: dict[str, Any] = {
    "step": str, "sub_batch_bn": _STR_OR_NULL, "loader": OrNull(dict),
    "runs": [{"variant": Needed(str), "loader_bound_speedup": _NUM_OR_NULL,
              "paper": [{"table": Needed(str), "row": Needed(str)}],
              **{key: Needed(_NUM_OR_NULL) for key in ("iteration_ratio", "predicted_gpu_hours",
                                                       "baseline_predicted_gpu_hours", "predicted_speedup")}}],
    "shapes": [{"model": str, "median_ms": Needed(_NUM), "plain_bn_ms": OrNull(DIVISOR),
                **{key: Needed(int) for key in ("t", "s", "batch", "bn_splits")}}],
    **_PROVENANCE}
_SCALING: dict[str, Any] = {
    "world_size": Needed(int), "scale": Needed(str), "step": str, "sub_batch_bn": str, "repeats": int,
    "fixed_per_gpu_batch": OrNull(int),
    "predicted_s": {"multigrid": _NUM_OR_NULL, "baseline_of_multigrid": _NUM_OR_NULL},
    "shapes": Needed([{"median_ms": Needed(DIVISOR), "bn_splits": Needed(DIVISOR), "clips_per_s": Needed(_NUM),
                       **{key: Needed(int) for key in ("t", "s", "global_batch", "per_gpu_batch", "bn_sync")}}]),
    **_PROVENANCE}
_KERNELS = {"device_ms_per_step": Needed(_NUM_OR_NULL), "busy_share": Needed(_NUM_OR_NULL),
            "groups_ms": Needed({group: _NUM_OR_NULL for group in KERNEL_GROUPS}),
            "top": Needed([{"name": Needed(str), "share": Needed(_NUM)}])}
# harness.train.compile_cost: summed seconds and cache counts, which the report adds up, and cells it shows
_COMPILE = {**{key: _NUM for key in ("compile_s", "inductor_forward_s", "inductor_backward_s", "inductor_cache_hits",
                                     "inductor_cache_misses", "aot_autograd_cache_hits", "aot_autograd_cache_misses")},
            **{key: _NUM_OR_NULL for key in ("graphs", "tracing_s", "aot_autograd_s", "guards_s")}}
_THROUGHPUT: dict[str, Any] = {
    "matmul_tflops": _NUM,
    "rows": [{"recipe": Needed(str), "model": Needed(str), "mode": Needed(str), "ms_per_step": Needed(DIVISOR),
              "setup_s": Needed(_NUM), "pad_stem_channels": OrNull(int), "plain_bn_impl": str,
              "kernels": OrNull(_KERNELS), "compile": OrNull(_COMPILE),
              **{key: Needed(int) for key in ("t", "s", "batch")},
              **{key: Needed(_NUM_OR_NULL) for key in ("clips_per_s", "train_tflops", "share_of_matmul")}}],
    **_PROVENANCE}


def _read_measurement(path: Path, schema: dict[str, Any]) -> dict[str, Any]:
    """The record in `path` where it holds every field of `schema` the report needs; RecordError otherwise."""
    try:
        record = read_json_object(path)
    except OSError as err:
        raise RecordError(path, unreadable_reason(path, err)) from None
    except ValueError as err:  # not JSON, not UTF-8, or JSON of another kind than an object
        raise RecordError(path, f"no JSON object: {err}") from None
    problem = _wrong_type(record, schema, "")
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
