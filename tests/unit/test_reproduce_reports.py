"""harness.reproduce.reports: the report reproduce writes after its runs goes beside their results folder (or to
--out), and a refusal to replace one names the `harness report` command that can."""

from __future__ import annotations

import json

import pytest

from harness.cli import main
from harness.reproduce import inputs, pool
from harness.reproduce.reports import write_suite_report
from harness.spec import SpecError

from .report_cli import run_report
from .report_records import results_folder
from .reproduce_stand_in import recording_run_one


def test_reproduce_names_the_command_that_replaces_a_report_of_more_records(tmp_path, monkeypatch):
    """reproduce writes the report after its runs but has no --force: its refusal names `harness report`'s."""
    full, partial = results_folder(tmp_path / "full"), results_folder(tmp_path / "partial", ("baseline",))
    monkeypatch.chdir(tmp_path / "full")  # reports/ beside the results, wherever reproduce runs
    write_suite_report("smoke", full, None)
    before = (tmp_path / "reports" / "smoke" / "index.html").read_bytes()
    with pytest.raises(SpecError) as err:
        write_suite_report("smoke", partial, None)
    assert "built from 2 run records" in str(err.value) and "pass --force" not in str(err.value)
    assert f"'harness report --suite smoke --results {partial} --out {tmp_path / 'reports'} --force'" in str(err.value)
    assert (tmp_path / "reports" / "smoke" / "index.html").read_bytes() == before


def test_reproduce_with_a_users_results_writes_their_own_report_beside_them(tmp_path, monkeypatch, capsys):
    """`harness reproduce --results DIR` run in a checkout whose reports/ hold a report of more records: the user's
    report goes to DIR/../reports (or --out), and the checkout's is left alone, with no error."""
    checkout = tmp_path / "checkout"
    run_report(capsys, "--suite", "smoke", "--results", str(results_folder(checkout / "results")), "--out",
            str(checkout / "reports"))
    committed = (checkout / "reports" / "smoke" / "index.html").read_bytes()
    monkeypatch.setattr(pool, "_run_one", recording_run_one([]))
    monkeypatch.setattr(inputs, "prepare_synthetic", lambda scale: (None, None))
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(checkout)
    mine = tmp_path / "mine" / "results"
    for out, report in (([], tmp_path / "mine" / "reports"), (["--out", str(tmp_path / "elsewhere")],
                                                               tmp_path / "elsewhere")):
        code = main(["reproduce", "--suite", "smoke", "--scale", "smoke", "--results", str(mine), *out, "--only",
                     "baseline"])
        assert code == 0, capsys.readouterr()
        assert f"report: {report / 'smoke' / 'index.html'}" in capsys.readouterr().out
        assert json.loads((report / "smoke" / "summary.json").read_text())["records"] == 1
    assert (checkout / "reports" / "smoke" / "index.html").read_bytes() == committed
