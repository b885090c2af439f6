"""The kinds of record the harness writes: one dataclass a kind, each with its version and one provenance block,
so that every writer's file has the same shape and a reader can tell what an older record lacks."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from harness.provenance import provenance

# The metadata of a field some records lack: left out of `to_dict()` while None (readers test for the key).
OPTIONAL = {"optional": True}


@dataclass(kw_only=True)
class Record:
    """A record as written: `record_version`, the fields in the order declared, then `provenance` (made by
    `harness.provenance.provenance`, the same for every kind). A kind's VERSION moves whenever its fields change, so
    that a reader can tell which fields a record may lack. Records written before a kind had a version carry no
    `record_version` and count as version 1 (run records always had one). Read a record's provenance with
    `harness.provenance.provenance_of`, whatever its version."""

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
