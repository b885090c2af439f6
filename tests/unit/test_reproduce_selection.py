"""harness.reproduce.selection: the runs reproduce trains are those with no record it can read; a damaged or
unfinished record is kept aside and its run trained again, and a dry run finds records as a run does."""

from __future__ import annotations

import json

from harness.report.inputs import load_records, select_records
from harness.reproduce import ReproduceOptions, inputs, pool, reproduce
from tests.unit.report_records import SUITE
from tests.unit.reproduce_stand_in import recording_run_one


def test_a_damaged_record_does_not_count_as_recorded_and_is_kept_aside(monkeypatch, tmp_path, capsys):
    """A record at a run's own path that the report leaves out (cut short by a crash, not UTF-8, another tool's
    JSON) does not make the run done: reproduce names it, keeps it aside and runs the job again. A dry run and
    --prepare-only do not call it recorded either (benchmarks/converged_proxy.sh greps for that)."""
    ran = []
    monkeypatch.setattr(pool, "_run_one", recording_run_one(ran))
    monkeypatch.setattr(inputs, "prepare_synthetic", lambda scale: (None, None))
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path / "data"))
    results = tmp_path / "res"

    def go(**kw) -> str:
        capsys.readouterr()
        assert reproduce(ReproduceOptions("smoke", "smoke", results=results, gpus=1, report=False, seeds=[0, 1],
                                          **kw)) == 0
        return capsys.readouterr().out

    go()
    paths = sorted((results / "smoke" / "smoke").glob("*.json"))
    assert len(ran) == len(paths) == 4
    damage = dict(zip(paths, [paths[0].read_bytes()[:200], b"\xff\xfe{}", b"[1, 2]"]))  # the 4th stays whole
    for path, data in damage.items():
        path.write_bytes(data)
    assert len(load_records(results / "smoke")[1]) == 3  # the report leaves each out
    for out in (go(dry_run=True), go(prepare_only=True)):
        assert out.count("recorded already") == 1
        assert all(f"warning: {path} is no run record the report can read" in out for path in damage)
    ran.clear()
    out = go()
    assert len(ran) == 3 and out.count("recorded already") == 1
    assert load_records(results / "smoke")[1] == []  # the runs' new records, none left out
    for path, data in damage.items():  # kept beside, byte for byte
        (aside,) = path.parent.glob(f"{path.name}.damaged-*")
        assert aside.read_bytes() == data
    assert go().count("recorded already") == 4


def test_an_unfinished_runs_record_is_no_record_for_reproduce_as_for_the_report(monkeypatch, tmp_path, capsys):
    """A record whose status is not "complete" (edited, another tool's) is left out of the report, so reproduce
    does not count its run as done either: it keeps the file aside and runs the job again."""
    ran = []
    monkeypatch.setattr(pool, "_run_one", recording_run_one(ran))
    monkeypatch.setattr(inputs, "prepare_synthetic", lambda scale: (None, None))
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path / "data"))
    results = tmp_path / "res"
    assert reproduce(ReproduceOptions("smoke", "smoke", results=results, gpus=1, report=False, seeds=[0])) == 0
    path = sorted((results / "smoke" / "smoke").glob("baseline__*.json"))[0]
    path.write_text(json.dumps({**json.loads(path.read_text()), "status": "running"}))
    records, _ = load_records(results / "smoke")
    assert "baseline" not in select_records(SUITE, records)[1]  # the report leaves it out
    ran.clear()
    capsys.readouterr()
    assert reproduce(ReproduceOptions("smoke", "smoke", results=results, gpus=1, report=False, seeds=[0])) == 0
    out = capsys.readouterr().out
    assert ran == [("baseline", 0)] and "status 'running'" in out and out.count("recorded already") == 1
    assert list(path.parent.glob(f"{path.name}.damaged-*"))


def test_a_dry_run_finds_the_imagenet_rows_records_as_a_run_does(monkeypatch, tmp_path, capsys):
    """The ImageNet rows' settings name the pre-trained stand-in's file; a dry run names the same file (made or not),
    so a recorded row is "recorded already" there too, not listed as a run to launch."""
    made = []
    monkeypatch.setattr(pool, "_run_one", recording_run_one([]))
    monkeypatch.setattr(inputs, "prepare_synthetic", lambda scale: (None, None))
    monkeypatch.setattr(inputs, "prepare_pretrained", lambda scale, spec: made.append(spec.model.pretrained))
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path / "data"))
    results = tmp_path / "res"

    def go(**kw) -> str:
        capsys.readouterr()
        assert reproduce(ReproduceOptions("kinetics_generalization", "smoke", results=results, gpus=1, report=False,
                                          seeds=[0], only=["imagenet_baseline"], **kw)) == 0
        return capsys.readouterr().out

    before = go(dry_run=True)
    assert "recorded already" not in before and " harness train " in before
    assert "is made before the first run that needs it" in before
    go()
    assert len(made) == 1 and made[0] in before  # the file the dry run named is the one the run was given
    after = go(dry_run=True)
    assert after.count("recorded already") == 1 and " harness train " not in after
