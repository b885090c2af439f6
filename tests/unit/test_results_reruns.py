"""Every run's record is kept: a rerun of the same settings and seed adds a record file beside the earlier one, and
any complete record of a run makes it done for `reproduce`."""

from __future__ import annotations

import json

from harness.config import compose
from harness.results import record_path, recorded, write_record

from .report_records import make_record


def _spec(tmp_path):
    return compose(["recipe=k400_slowfast_r50_8x8", "num_gpus=1", "scale=smoke", "seed=0", "suite=s",
                    "variant=v", f"output_dir={tmp_path / 'run'}"])


def test_a_rerun_adds_its_record_and_replaces_none(tmp_path):
    spec, results = _spec(tmp_path), tmp_path / "results"
    (tmp_path / "run").mkdir()
    first = {**make_record("v", top1=40.0), "spec": spec.to_dict()}
    second = {**make_record("v", top1=41.0), "spec": spec.to_dict()}
    written = [write_record(record, tmp_path / "run", spec, results)[1] for record in (first, second, second)]
    own = record_path(spec, results)
    assert written == [own, own.with_name(f"{own.stem}__2.json"), own.with_name(f"{own.stem}__3.json")]
    assert json.loads(own.read_text()) == first and json.loads(written[1].read_text()) == second
    assert json.loads((tmp_path / "run" / "record.json").read_text()) == second  # the run's folder: its last
    assert recorded(spec, results) == own
    own.unlink()  # any complete record of the run makes it done
    assert recorded(spec, results) == written[1]
