"""`harness reproduce` refuses arguments that would train the wrong runs, before any data or run."""

import pytest

from harness.cli import main
from harness.reproduce import inputs, pool


@pytest.mark.parametrize(("arguments", "message"), [
    (["--seeds", "0", "1", "0"], "--seeds lists 0 more than once; give each seed once."),
    (["--seeds", "-1"], "'seed' must be in [0, 2**32), got -1."),
    (["--dry-run", "--launcher", "slurm", "--nodes", "0"], "--nodes must be >= 1, got 0."),
    (["--gpus", "-1"], "--gpus must be >= 0"),
    (["scale=proxy"], "scale=proxy: reproduce sets scale for every run; give the scale as --scale NAME."),
    (["variant=baseline"], "pick runs with --only VARIANT"),
    (["output_dir=/tmp/elsewhere"], "reproduce sets output_dir for every run"),
])
def test_unsound_arguments_are_refused_before_any_run(monkeypatch, tmp_path, capsys, arguments, message):
    def no_run(*args, **kwargs):
        raise AssertionError("a run started")

    monkeypatch.setattr(pool, "_run_one", no_run)
    monkeypatch.setattr(inputs, "suite_data", lambda *a, **k: ("/data/never-made", None))
    code = main(["reproduce", "--suite", "smoke", "--scale", "smoke", "--results", str(tmp_path), "--no-report",
                 *arguments])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
