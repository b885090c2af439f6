"""Suites (lists of runs tied to the paper's tables) and scales (how a suite is shrunk to fit the hardware).

A suite run is a recipe plus overrides; a scale turns the composed recipe into override strings
(frames, pixels, epochs, widths, batch, data) so that the same suite runs on a CPU (`smoke`),
one GPU (`proxy`) or a cluster (`paper`, unchanged). Everything here is pure; harness.reproduce does I/O.

Suites are read in `definition`, scales in `scales`, a suite's runs at a scale resolved in `resolve`; every name is
importable from ``harness.suite``.
"""

from harness.suite.definition import (
    RUN_KEYS,
    SUITE_KEYS,
    RunDef,
    SuiteDef,
    list_suites,
    load_suite,
    paper_rows,
    suite_from_mapping,
)
from harness.suite.resolve import ResolvedRun, matching_epoch_factor, resolve_suite, suite_scale
from harness.suite.scales import RESCALING_KEYS, SCALE_KEYS, Scale, list_scales, load_scale, scale_overrides
from harness.suite.yaml_file import read_yaml_mapping

__all__ = [
    "RESCALING_KEYS", "RUN_KEYS", "SCALE_KEYS", "SUITE_KEYS", "ResolvedRun", "RunDef", "Scale", "SuiteDef",
    "list_scales", "list_suites", "load_scale", "load_suite", "matching_epoch_factor", "paper_rows",
    "read_yaml_mapping", "resolve_suite", "scale_overrides", "suite_from_mapping", "suite_scale",
]
