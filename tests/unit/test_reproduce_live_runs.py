"""A killed `harness reproduce` leaves no train running unwatched, and a restarted one waits for a run it finds still
running (its output folder's lock held) instead of failing on that lock and training the run twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import harness.reproduce as rep
from harness.results import record_path

from .test_report_tables import make_record

REPO = Path(__file__).resolve().parents[2]
# `harness reproduce` of one run whose train stands in as a process that notes its pid and, on SIGTERM, that it was
# stopped; it would otherwise run far longer than the test waits.
REPRODUCE = """
import os, signal, sys, time
import harness.reproduce as rep
from harness.cli import main
TRAIN = '''
import os, signal, sys, time
def stopped(signum, frame):
    open(os.path.join(sys.argv[1], 'stopped'), 'w').close()
    sys.exit(143)
signal.signal(signal.SIGTERM, stopped)
open(os.path.join(sys.argv[1], 'started'), 'w').write(str(os.getpid()))
time.sleep(60)
'''
rep.prepare_synthetic = lambda scale: (None, None)
rep.train_command = lambda run, out, port=29500: [sys.executable, '-c', TRAIN, str(out)]
sys.exit(main(["reproduce", "--suite", "smoke", "--scale", "smoke", "--gpus", "1", "--no-report", "--only", "baseline",
               "--results", sys.argv[1]]))
"""


def _wait_for(paths, seconds: float) -> list[Path]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not (found := [p for p in paths() if p.exists()]):
        time.sleep(0.05)
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_killed_reproduce_stops_its_train(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO), "HARNESS_DATA_DIR": str(tmp_path / "data")}
    reproduce = subprocess.Popen([sys.executable, "-c", REPRODUCE, str(tmp_path / "results")], cwd=tmp_path, env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    outputs = tmp_path / "outputs" / "smoke"
    started = _wait_for(lambda: outputs.glob("*/started"), 60)
    assert started, "the run did not start"
    reproduce.kill()  # SIGKILL: reproduce itself stops nothing
    reproduce.wait()
    stopped = _wait_for(lambda: [started[0].with_name("stopped")], 10)
    train = int(started[0].read_text())
    if not stopped:
        os.kill(train, signal.SIGKILL)
    assert stopped, "the train went on running without its reproduce"


def test_a_restarted_reproduce_waits_for_the_run_it_finds_running(monkeypatch, tmp_path, capsys):
    """The run a killed reproduce left running holds its folder's lock: the next reproduce says so, waits, and takes
    the record it writes, starting no second train."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(rep, "prepare_synthetic", lambda scale: (None, None))
    monkeypatch.setattr(rep, "LIVE_RUN_POLL_S", 0.05, raising=False)
    started = []
    monkeypatch.setattr(rep, "train_command", lambda run, out, port=29500: started.append(out) or
                        [sys.executable, "-c", "raise SystemExit(3)"])
    suite = rep.load_suite("smoke")
    (run,) = [r for r in rep.resolved_runs(suite, rep.suite_scale(suite, rep.load_scale("smoke")), [], [0], True)[0]
              if r.run.variant == "baseline"]
    out, results = run.output_dir(Path("outputs") / "smoke"), tmp_path / "results"
    out.mkdir(parents=True)
    # The run left running: it holds the folder's lock, then writes its record and ends.
    record = record_path(run.spec, results)
    holder = subprocess.Popen([sys.executable, "-c", (
        "import json, sys, time\nfrom pathlib import Path\nfrom harness.results import output_dir_lock\n"
        "with output_dir_lock(Path(sys.argv[1])):\n    print('locked', flush=True)\n    time.sleep(1)\n"
        "    Path(sys.argv[2]).parent.mkdir(parents=True)\n    Path(sys.argv[2]).write_text(sys.argv[3])\n"),
        str(out), str(record), json.dumps({**make_record("baseline"), "spec": run.spec.to_dict()})],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert holder.stdout.readline() == "locked\n"
    failed = rep.reproduce("smoke", "smoke", results=results, gpus=1, report=False, only=["baseline"], seeds=[0])
    holder.wait()
    text = capsys.readouterr().out
    assert failed == 0 and started == [] and record.is_file()
    assert f"baseline                 seed 0 is running in pid {holder.pid} on " in text and f"({out}): waiting" in text
