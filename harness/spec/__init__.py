"""RunSpec: the frozen, validated description of one run.

A RunSpec is built from a plain nested dict (what Hydra composes from ``suites/``). Every
key is checked: unknown keys are errors with a "did you mean", wrong types and values are
errors that name the key and say how to fix it. Nothing here is derived or "set
automatically": derived values (shapes, batch sizes, phase boundaries) live in the Plan
(``harness.schedule``). Pure Python; importing this package never imports torch.

The sections' settings are in `sections`, RunSpec and its rules in `run`, building from a dict in `from_dict`, the
allowed values in `choices`, retired settings in `retired`; every name is importable from ``harness.spec``.
"""

from harness.spec.choices import (
    BATCH_RULES,
    COMPILED_STEP_MODES,
    DEVICES,
    EVAL_CROPS,
    GRAPHED_STEP_MODES,
    PLAIN_BN_IMPL,
    POLICIES,
    PRECISIONS,
    SCALES,
    STEP_MODES,
    SUB_BATCH_BN,
    SUB_BATCH_BN_CUDA_ONLY,
    SWITCHES,
)
from harness.spec.errors import SpecError, did_you_mean
from harness.spec.from_dict import check_key, known_keys, spec_from_dict, spec_from_record
from harness.spec.retired import RETIRED, Retired, retired_message, without_retired_defaults
from harness.spec.run import RunSpec, validate
from harness.spec.sections import (
    SQRT_HALF,
    WIDTH_FAMILIES,
    BaselineSpec,
    DataSpec,
    ModelSpec,
    MultigridSpec,
    SolverSpec,
    TrainSpec,
)

__all__ = [
    "BATCH_RULES", "COMPILED_STEP_MODES", "DEVICES", "EVAL_CROPS", "GRAPHED_STEP_MODES", "PLAIN_BN_IMPL", "POLICIES",
    "PRECISIONS", "RETIRED", "SCALES", "SQRT_HALF", "STEP_MODES", "SUB_BATCH_BN", "SUB_BATCH_BN_CUDA_ONLY", "SWITCHES",
    "WIDTH_FAMILIES", "BaselineSpec", "DataSpec", "ModelSpec", "MultigridSpec", "Retired", "RunSpec", "SolverSpec",
    "SpecError", "TrainSpec", "check_key", "did_you_mean", "known_keys", "retired_message", "spec_from_dict",
    "spec_from_record", "validate", "without_retired_defaults",
]
