"""A stand-in for the run of one job of `harness reproduce`, for tests of what reproduce does around its runs."""

from __future__ import annotations

import json

from harness.results import record_path

from .report_records import make_record


def recording_run_one(ran: list):
    """A stand-in for reproduce's `_run_one` that trains nothing: it writes the run's record (and notes the run in
    `ran`), as a finished run leaves it."""
    def run_one(run, out_root, gpus, results, port):
        ran.append((run.run.variant, run.spec.seed))
        path = record_path(run.spec, results)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**make_record(run.run.variant), "spec": run.spec.to_dict()}))
        return run.run.variant, 0, 0.0
    return run_one
