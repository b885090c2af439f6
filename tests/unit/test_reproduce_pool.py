"""harness.reproduce.pool: runs on GPU slots of their own; an interrupted `harness reproduce` (Ctrl-C, SIGTERM) ends
its running train and starts no further run; a killed one leaves no train running unwatched, and a restarted one waits
for a run it finds still running (its output folder's lock held) instead of failing on that lock and training the run
twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from harness.cli import main
from harness.config import compose
from harness.reproduce import ReproduceOptions, inputs, pool, reproduce
from harness.reproduce.selection import resolved_runs
from harness.results import record_path
from harness.suite import ResolvedRun, load_scale, load_suite, suite_scale

from .report_records import SUITE, make_record

REPO = Path(__file__).resolve().parents[2]
# `harness reproduce` of one run whose train stands in as a process that notes its pid and, on SIGTERM, that it was
# stopped; it would otherwise run far longer than the test waits.
REPRODUCE = """
import os, signal, sys, time
from harness.reproduce import inputs, pool
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
inputs.prepare_synthetic = lambda scale: (None, None)
pool.train_command = lambda run, out, port=29500: [sys.executable, '-c', TRAIN, str(out)]
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
    monkeypatch.setattr(inputs, "prepare_synthetic", lambda scale: (None, None))
    monkeypatch.setattr(pool, "LIVE_RUN_POLL_S", 0.05, raising=False)
    started = []
    monkeypatch.setattr(pool, "train_command", lambda run, out, port=29500: started.append(out) or
                        [sys.executable, "-c", "raise SystemExit(3)"])
    suite = load_suite("smoke")
    (run,) = [r for r in resolved_runs(suite, suite_scale(suite, load_scale("smoke")), [], [0], True)[0]
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
    failed = reproduce(ReproduceOptions("smoke", "smoke", results=results, gpus=1, report=False, only=["baseline"],
                                        seeds=[0]))
    holder.wait()
    text = capsys.readouterr().out
    assert failed == 0 and started == [] and record.is_file()
    assert f"baseline                 seed 0 is running in pid {holder.pid} on " in text and f"({out}): waiting" in text

# Stands in for `harness train` (the subprocess is what is under test, not training): notes its pid, then runs
# far longer than the test waits.
RUN = "import os, sys, time; open(os.path.join(sys.argv[1], 'started'), 'w').write(str(os.getpid())); time.sleep(60)"


def _signal_once_started(outputs: Path, signum: int) -> threading.Thread:
    """Send `signum` to this process as soon as the first run's process has started (and said so)."""
    def watch():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not list(outputs.glob("*/started")):
            time.sleep(0.01)
        os.kill(os.getpid(), signum)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_suite_ends_its_running_train_and_starts_no_other(monkeypatch, tmp_path, capsys, signum):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(inputs, "prepare_synthetic", lambda scale: (None, None))
    monkeypatch.setattr(pool, "train_command", lambda run, out, port=29500: [sys.executable, "-c", RUN, str(out)])
    # Ctrl-C as at a terminal: a process started in the background (CI's runner, `nohup … &`) inherits SIGINT
    # ignored, and Python then raises nothing on it.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler), signal.getsignal(signal.SIGTERM)
    watcher = _signal_once_started(tmp_path / "outputs" / "smoke", signum)
    start = time.monotonic()
    try:
        code = main(["reproduce", "--suite", "smoke", "--scale", "smoke", "--gpus", "1", "--no-report",
                     "--results", str(tmp_path / "results")])
        watcher.join()
    finally:
        signal.signal(signal.SIGINT, previous[0])
    seconds = time.monotonic() - start
    assert code == 130 and seconds < 45, (code, seconds)  # not after the run's 60 s
    err = capsys.readouterr().err
    assert "harness reproduce: interrupted" in err and "Traceback" not in err
    started = list((tmp_path / "outputs" / "smoke").glob("*/started"))
    assert len(started) == 1, "a run started after the interrupt"
    with pytest.raises(ProcessLookupError):  # ended and reaped, not left running without its parent
        os.kill(int(started[0].read_text()), 0)
    assert signal.getsignal(signal.SIGTERM) is previous[1]  # this process's handler is given back


def test_runs_take_free_gpu_slots_so_no_two_share_a_gpu(monkeypatch, tmp_path):
    busy: dict[str, int] = {}
    clash = []
    lock = threading.Lock()

    def fake_run_one(run, out_root, gpus, results, port):
        key = ",".join(map(str, gpus))
        with lock:
            busy[key] = busy.get(key, 0) + 1
            clash.append(busy[key] > 1)
        time.sleep(0.2 if run.run.variant == "baseline_0.25x" else 0.02)  # one long run, several short ones
        with lock:
            busy[key] -= 1
        return run.run.variant, 0, 0.0

    monkeypatch.setattr(pool, "_run_one", fake_run_one)
    monkeypatch.setattr(inputs, "prepare_synthetic", lambda scale: (None, None))
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path / "data"))
    failed = reproduce(ReproduceOptions("kinetics_main", "smoke", results=tmp_path / "res", gpus=2, report=False,
                                        only=["baseline_0.25x", "baseline_0.5x", "long_cycle_0.5x",
                                              "short_cycle_0.5x"], seeds=[0, 1]))
    assert failed == 0 and len(clash) == 8 and not any(clash)


def test_gpu_indices_go_through_cuda_visible_devices(monkeypatch, tmp_path):
    seen = {}

    class Started:  # the train process, started and done at once
        def __init__(self, cmd, env, stdout, stderr):
            seen["gpus"] = env["CUDA_VISIBLE_DEVICES"]

        def wait(self) -> int:
            return 0

    monkeypatch.setattr(pool.subprocess, "Popen", Started)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    spec = compose(["recipe=k400_slowfast_r50_8x8", "num_gpus=1", "suite=s", "variant=v"])
    run = ResolvedRun(SUITE.runs[0], ("recipe=k400_slowfast_r50_8x8", "num_gpus=1"), spec)
    pool._run_one(run, tmp_path, [1], tmp_path, 29500)
    assert seen["gpus"] == "3"
