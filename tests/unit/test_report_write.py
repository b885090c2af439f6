"""The report's files from a results folder: HTML, CSV, Markdown and the index through the CLI; files that are no
records the report reads left out with a note naming them."""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import pytest

from harness import cli_report
from harness.report.inputs import load_suite_def
from harness.suite import paper_rows as load_paper_rows

from .report_records import make_record, tiny_spec


def _results(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    (results / "smoke" / "smoke").mkdir(parents=True)
    for record in (make_record("baseline", kind="baseline", train_s=90.0), make_record("multigrid", train_s=30.0)):
        (results / "smoke" / "smoke" / f"{record['variant']}.json").write_text(json.dumps(record))
    (results / "smoke" / "broken.json").write_text("{not json")
    return results


def test_cli_writes_html_csv_markdown_and_the_index(tmp_path, capsys):
    parser = argparse.ArgumentParser(prog="harness")
    cli_report.register(parser.add_subparsers(dest="command", required=True))
    results, out = _results(tmp_path), tmp_path / "reports"
    args = parser.parse_args(["report", "--suite", "smoke", "--results", str(results), "--out", str(out)])
    assert args.func(args) == 0
    assert f"report: {out / 'smoke' / 'index.html'}" in capsys.readouterr().out
    html = (out / "smoke" / "index.html").read_text()
    assert "broken.json: unreadable" in html and "3.00×" in html and "2-core CPU (Test CPU)" in html
    rows = list(csv.DictReader((out / "smoke" / "tables.csv").open()))
    mg = next(r for r in rows if r["table"] == "1a" and r["variant"] == "multigrid")
    assert float(mg["speedup"]) == pytest.approx(3.0) and float(mg["paper_speedup"]) == 4.5
    assert "## Table 1a" in (out / "smoke" / "tables.md").read_text()
    index = (out / "index.html").read_text()
    assert 'href="smoke/index.html"' in index and "2 of 2" in index
    assert "kinetics_ablation" in index and "no report yet" in index
    with pytest.raises(SystemExit):
        parser.parse_args(["report"])


def test_real_suites_and_paper_rows_load():
    suite = load_suite_def("kinetics_generalization")
    assert suite.tables == ("2a", "2b", "2c")
    assert suite.run("imagenet_baseline").requires == ("model.pretrained",)
    assert {r["table"] for r in load_paper_rows()} >= {"1a", "3", "6"}


def _with(record: dict, section: str, **values) -> dict:
    return {**record, section: {**record[section], **values}}


def test_files_that_are_no_records_the_report_reads_are_left_out_with_a_note(tmp_path, capsys):
    """Run records edited by hand or of another tool (the wrong-typed ones newest, so that they would be chosen),
    profile, scaling and throughput records likewise, another report's damaged summary.json: each is named and
    left out, and the report is built from the good records, instead of ending in a traceback."""
    results, out = _results(tmp_path), tmp_path / "reports"
    scale = results / "smoke" / "smoke"
    newest = {"date": "2027-01-01T00:00:00+00:00"}
    bad = {"measured_str.json": json.dumps({**make_record("multigrid", **newest), "measured": "abc"}),
           "final_null.json": json.dumps({**make_record("multigrid", **newest), "final": None}),
           "train_s_str.json": json.dumps(_with(make_record("multigrid", **newest), "measured", train_s="x")),
           "seed_str.json": json.dumps(make_record("multigrid", spec={**tiny_spec(), "seed": "x"}, **newest)),
           "list.json": "[1, 2]", "another_tool.json": json.dumps({"variant": "x", "measured": {}, "tool": "y"}),
           # Numbers no run measures: shown as a -1.25× speedup and an accuracy of inf.
           "train_s_negative.json": json.dumps(_with(make_record("multigrid", **newest), "measured", train_s=-3)),
           "top1_inf.json": json.dumps(_with(make_record("multigrid", **newest), "final", top1=float("inf")))}
    for name, text in bad.items():
        (scale / name).write_text(text)
    (scale / "latin1.json").write_bytes(b'{"variant": "caf\xe9"}')
    for rel, text in {"profile/paper/smoke.json": '{"runs": "x"}', "throughput/t.json": "[1]",
                      "scaling/smoke/smoke/gpus2.json": '{"scale": "smoke", "shapes": [1]}'}.items():
        (results / rel).parent.mkdir(parents=True, exist_ok=True)
        (results / rel).write_text(text)
    (out / "kinetics_main").mkdir(parents=True)
    (out / "kinetics_main" / "summary.json").write_text('{"suite": "kinetics_main", "overview": "x"')
    parser = argparse.ArgumentParser(prog="harness")
    cli_report.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["report", "--suite", "smoke", "--results", str(results), "--out", str(out)])
    assert args.func(args) == 0
    err = capsys.readouterr().err
    for name in [*bad, "latin1.json"]:
        assert f"{scale / name}: " in err
    assert "'measured' is a string, not an object" in err and "'final' is null" in err
    assert "'measured.train_s' is a string" in err and "'spec.seed' is a string, not an integer" in err
    assert "latin1.json: unreadable" in err and "list.json: not a run record (a list" in err
    assert "'measured.train_s' is -3, not a time in seconds" in err and "'final.top1' is inf, not a percentage" in err
    for rel in ("profile/paper/smoke.json", "throughput/t.json", "scaling/smoke/smoke/gpus2.json"):
        assert f"{results / rel}: not a record the report can read" in err
    html = (out / "smoke" / "index.html").read_text()
    assert "measured_str.json: not a run record" in html and "3.00×" in html  # from the good records
    assert (out / "index.html").is_file()


def _profiled(variant: str, speedup: float) -> dict:
    """A run of a `harness profile --suite` record, predicted `speedup`× faster than its baseline."""
    return {"variant": variant, "paper": [], "iteration_ratio": speedup, "predicted_gpu_hours": 1.0,
            "baseline_predicted_gpu_hours": speedup, "predicted_speedup": speedup}


def test_the_index_puts_every_paper_table_in_one_place(tmp_path):
    """reports/overview.md (and the index): one row per paper row in the paper's order; a suite with a report
    gives its measured speedup and accuracy difference, one without gives the profile's predicted speedup; a row
    two suites cover appears once, with the measured numbers."""
    parser = argparse.ArgumentParser(prog="harness")
    cli_report.register(parser.add_subparsers(dest="command", required=True))
    results, out = _results(tmp_path), tmp_path / "reports"
    (results / "profile" / "paper").mkdir(parents=True)
    profile = {"scale": "paper", "step": "eager", "provenance": {"commit": "abc", "hardware": {"gpu": "Card X"}},
               "runs": [_profiled("short_1_shape", 1.87), _profiled("multigrid", 2.91)]}
    (results / "profile" / "paper" / "kinetics_ablation.json").write_text(json.dumps(profile))
    args = parser.parse_args(["report", "--suite", "smoke", "--results", str(results), "--out", str(out)])
    assert args.func(args) == 0
    lines = (out / "overview.md").read_text().splitlines()
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines if line.startswith("| 1")]
    default_1a = [r for r in rows if r[:2] == ["1a", "4-shape (default)"]]
    assert len(default_1a) == 1 and default_1a[0][5] == "3.00×" and default_1a[0][7] == "+0.0 (1 v 1)"
    assert default_1a[0][6] == "3.00× (1 pair)" and default_1a[0][8] == "inconclusive"  # one seed a side
    long_only = next(r for r in rows if r[:2] == ["1b", "1-shape (long cycle only)"])
    assert long_only[3] == "4.20×" and long_only[4] == "1.87× (eager)" and long_only[5] == ""
    assert long_only[9] == "-1.1"  # the paper's 74.5 against its baseline's 75.6
    assert [r[0] for r in rows] == sorted(r[0] for r in rows)  # 1a before 1b
    assert "Every paper table in one place" in (out / "index.html").read_text()
    assert "on one Card X" in lines[-1]
    # A report of predictions only (its summary has no overview rows) still lists its paper rows, predicted.
    (results / "profile" / "paper" / "kinetics_models.json").write_text(json.dumps(
        {**profile, "runs": [_profiled("i3d_multigrid", 3.71)]}))
    (out / "kinetics_models").mkdir(parents=True, exist_ok=True)
    (out / "kinetics_models" / "summary.json").write_text(json.dumps({"suite": "kinetics_models", "overview": []}))
    assert args.func(args) == 0
    table3 = [line for line in (out / "overview.md").read_text().splitlines() if line.startswith("| 3 |")]
    assert any("i3d_multigrid" in line and "3.71× (eager)" in line for line in table3)
    # Another folder of reports beside the suites' (runs of another setting) is linked from the index.
    (out / "finetuned" / "ssv2").mkdir(parents=True)
    (out / "finetuned" / "index.html").write_text("<html></html>")
    assert args.func(args) == 0
    assert '<a href="finetuned/index.html">finetuned</a>' in (out / "index.html").read_text()


def _on_card(record: dict, gpu: str, **measured) -> dict:
    spec = {**record["spec"], "train": {**record["spec"].get("train", {}), "device": "cuda"}}
    return {**_with(record, "measured", **measured), "spec": spec, "run_id": f"{record['run_id']}-{gpu}",
            "hardware": {**record["hardware"], "gpu": gpu}}


@pytest.mark.parametrize("records", [
    # A baseline that timed nothing on a second card: its runs' times were divided by zero.
    lambda: [_on_card(make_record("baseline", kind="baseline"), "A"), _on_card(make_record("multigrid"), "A"),
             _on_card(make_record("multigrid"), "A"), _on_card(make_record("multigrid"), "B"),
             _on_card(make_record("baseline", kind="baseline"), "B", train_s=0)],
    # Python's json writes NaN; a phase's iteration count of NaN was int()-ed.
    lambda: [make_record("baseline", kind="baseline"),
             _with(make_record("multigrid"), "measured",
                   phases=[{**make_record("multigrid")["measured"]["phases"][0], "iterations": float("nan")}])],
    # A null Figure-3 shape factor, as another writer leaves a default: was "'NoneType' object is not iterable".
    lambda: [make_record("baseline", kind="baseline", spec={**tiny_spec(False), "baseline": {"shape_factor": None}}),
             make_record("multigrid")],
], ids=["train_s_0_on_a_second_card", "nan_iterations", "null_shape_factor"])
def test_records_holding_odd_values_of_the_right_type_still_make_a_report(tmp_path, capsys, records):
    scale = tmp_path / "results" / "smoke" / "smoke"
    scale.mkdir(parents=True)
    for i, record in enumerate(records()):
        (scale / f"{i}.json").write_text(json.dumps(record))
    parser = argparse.ArgumentParser(prog="harness")
    cli_report.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["report", "--suite", "smoke", "--results", str(tmp_path / "results"), "--out",
                              str(tmp_path / "reports")])
    assert args.func(args) == 0
    assert (tmp_path / "reports" / "smoke" / "index.html").is_file()


def test_a_measurement_record_missing_a_field_is_left_out_with_a_note_naming_the_file_and_the_field(tmp_path,
                                                                                                   capsys):
    results, out = _results(tmp_path), tmp_path / "reports"
    run = _profiled("multigrid", 2.5)
    del run["predicted_speedup"]
    files = {"profile/paper/smoke.json": {"scale": "smoke", "runs": [run]},
             "scaling/smoke/smoke/gpus2.json": {"scale": "smoke", "world_size": 2, "shapes": [{"t": 8}]},
             "throughput/t.json": {"rows": [{"recipe": "a", "ms_per_step": 0}]}}
    for rel, record in files.items():
        (results / rel).parent.mkdir(parents=True, exist_ok=True)
        (results / rel).write_text(json.dumps(record))
    parser = argparse.ArgumentParser(prog="harness")
    cli_report.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["report", "--suite", "smoke", "--results", str(results), "--out", str(out)])
    assert args.func(args) == 0
    html, err = (out / "smoke" / "index.html").read_text(), capsys.readouterr().err
    for rel, field in (("profile/paper/smoke.json", "runs[0].predicted_speedup"),
                       ("scaling/smoke/smoke/gpus2.json", "shapes[0].median_ms"),
                       ("throughput/t.json", "rows[0].model")):
        note = f"{rel}: not a record the report can read (no &#39;{field}&#39;), left out"
        assert note in html and f"{results / rel}: not a record the report can read (no '{field}')" in err
    assert "3.00×" in html  # from the run records
