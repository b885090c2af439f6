"""Recorded runs (harness.results): one run under two suites is reused, and found where its data folder moved."""

from __future__ import annotations

import json
from pathlib import Path

from harness.config import compose
from harness.results import record_path, recorded, reuse_record, same_run_elsewhere
from tests.unit.report_records import make_record


def test_the_same_run_under_another_suite_is_reused_not_retrained(tmp_path):
    def spec_of(suite: str, variant: str, seed: int = 0):
        return compose(["recipe=k400_slowfast_r50_8x8", "num_gpus=1", "scale=smoke", f"seed={seed}",
                        "multigrid.long_cycle=false", "multigrid.short_cycle=false", f"suite={suite}",
                        f"variant={variant}", f"output_dir=/tmp/{variant}"])
    source_spec = spec_of("figure", "baseline_1.0x")
    record = {**make_record("baseline_1.0x", kind="baseline"), "spec": source_spec.to_dict(), "suite": "figure"}
    source = record_path(source_spec, tmp_path)
    source.parent.mkdir(parents=True)
    source.write_text(json.dumps(record))
    (source.parent / "baseline_1.0x__another_tool.json").write_bytes(b"\xff\xfe[]")  # not UTF-8: passed over
    (source.parent / "baseline_1.0x__list.json").write_text("[1]")
    table_spec = spec_of("table", "baseline")
    assert same_run_elsewhere(table_spec, tmp_path) == source
    assert recorded(spec_of("figure", "baseline_1.0x", seed=1), tmp_path) is None
    assert same_run_elsewhere(spec_of("table", "baseline", seed=1), tmp_path) is None  # another seed: another run
    written = reuse_record(source, table_spec, tmp_path)
    copy = json.loads(Path(written).read_text())
    assert written == record_path(table_spec, tmp_path)
    assert (copy["suite"], copy["variant"], copy["spec"]["variant"]) == ("table", "baseline", "baseline")
    assert copy["same_run_as"] == str(source.relative_to(tmp_path)) and copy["measured"] == record["measured"]


def test_a_record_made_where_the_data_folder_had_another_path_counts_as_recorded(tmp_path):
    """A GPU host generates the same synthetic dataset under its own data folder: its records in this checkout
    are this run's record. A user's dataset at another path is another dataset."""
    def spec_of(root: str, seed: int = 0):
        return compose(["recipe=k400_slowfast_r50_8x8", "num_gpus=1", "scale=smoke", f"seed={seed}",
                        "suite=s", "variant=v", "data.name=synthetic", f"data.root={root}"])
    there = spec_of("/root/hdata/synthetic/smoke-classes4")
    source = record_path(there, tmp_path)
    source.parent.mkdir(parents=True)
    source.write_text(json.dumps({**make_record("v"), "spec": there.to_dict()}))
    here = spec_of("/home/me/.cache/multigrid-harness/synthetic/smoke-classes4")
    assert record_path(here, tmp_path) != source and recorded(here, tmp_path) == source
    assert recorded(there, tmp_path) == source
    assert recorded(spec_of("/home/me/.cache/multigrid-harness/synthetic/smoke-classes8"), tmp_path) is None
    assert recorded(spec_of("/home/me/.cache/multigrid-harness/synthetic/smoke-classes4", seed=1), tmp_path) is None
    user_there, user_here = spec_of("/data/kinetics"), spec_of("/mnt/kinetics")
    path = record_path(user_there, tmp_path)
    path.write_text(json.dumps({**make_record("v"), "spec": user_there.to_dict()}))
    assert recorded(user_here, tmp_path) is None and recorded(user_there, tmp_path) == path
