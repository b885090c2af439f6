"""An interrupted `harness reproduce` (Ctrl-C, SIGTERM) ends its running train and starts no further run."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

import harness.reproduce as rep
from harness.cli import main

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
    monkeypatch.setattr(rep, "prepare_synthetic", lambda scale: (None, None))
    monkeypatch.setattr(rep, "train_command", lambda run, out, port=29500: [sys.executable, "-c", RUN, str(out)])
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
