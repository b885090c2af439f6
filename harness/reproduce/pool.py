"""A suite's runs on the local GPUs: each a `harness train` subprocess on a slot of GPUs of its own, one run per slot
at a time; a run some other process still trains is waited for; an interrupt (Ctrl-C, SIGTERM) ends them all."""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from harness.reproduce.commands import train_command
from harness.results import output_dir_holder, recorded
from harness.spec import SpecError
from harness.suite import ResolvedRun

# Run as `python -c` before a train's own command, which it then becomes (exec, same pid): on Linux the train gets
# SIGTERM when the reproduce that started it ends, however it ends (SIGKILL too), and stops at its last checkpoint
# instead of training on unwatched, to write its record while a restarted reproduce trains the same run. Not a
# preexec_fn: Python code between fork and exec in a process with threads may deadlock.
_STOP_WITH_PARENT = """
import ctypes, os, signal, sys
ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
if os.getppid() != int(sys.argv[1]):  # the parent ended before the line above
    sys.exit("harness reproduce ended before this run started")
os.execv(sys.argv[2], sys.argv[2:])
"""
LIVE_RUN_POLL_S = 5.0  # how often a restarted reproduce looks whether a run it found running has ended

# The `harness train` subprocesses of the suite running now. An interrupted reproduce stops them and starts no other
# run: a Ctrl-C at the terminal reaches the running train too, but the thread that waited on it would otherwise start
# the next run; and a SIGINT or SIGTERM sent to reproduce alone would leave its train running with no parent, to be
# trained a second time, in the same output folder, when the suite is run again.
_RUNNING: set[subprocess.Popen] = set()
_RUNNING_LOCK = threading.Lock()
_STOPPING = threading.Event()


def stopped_with_reproduce(cmd: list[str]) -> list[str]:
    """`cmd`, made to end (SIGTERM) with this process on Linux, where the kernel can tell (PR_SET_PDEATHSIG)."""
    if not sys.platform.startswith("linux"):
        return cmd
    return [sys.executable, "-c", _STOP_WITH_PARENT, str(os.getpid()), *cmd]


def _wait_for_live_run(run: ResolvedRun, out: Path) -> bool:
    """Wait while a process still trains `run` in `out` (one a killed reproduce left, or another reproduce's);
    True where one did. Starting the run beside it would fail on the folder's lock."""
    holder = output_dir_holder(out)
    if holder is None:
        return False
    print(f"  {run.run.variant:<24} seed {run.spec.seed} is running in {holder} ({out}): waiting", flush=True)
    while holder is not None and not _STOPPING.is_set():
        time.sleep(LIVE_RUN_POLL_S)
        holder = output_dir_holder(out)
    return True


def _run_one(run: ResolvedRun, out_root: Path, gpus: list[int] | None, results: Path,
             port: int) -> tuple[str, int, float]:
    """Train `run` on `gpus` (None: no GPU) with its log in its output folder; (variant, exit code, seconds)."""
    out = run.output_dir(out_root)
    start = time.perf_counter()
    if _wait_for_live_run(run, out) and recorded(run.spec, results) is not None:  # it finished the run
        return run.run.variant, 0, time.perf_counter() - start
    cmd = stopped_with_reproduce(train_command(run, out, port))
    env = {**os.environ, "HARNESS_RESULTS_DIR": str(results)}
    if gpus is not None:  # indices among the GPUs this process sees (CUDA_VISIBLE_DEVICES may narrow them)
        visible = [d for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
        env["CUDA_VISIBLE_DEVICES"] = ",".join(visible[g] if g < len(visible) else str(g) for g in gpus)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "train.log", "a") as logf:
        with _RUNNING_LOCK:
            if _STOPPING.is_set():  # the suite was interrupted while this run waited for a slot: start nothing
                return run.run.variant, 130, 0.0
            proc = subprocess.Popen(cmd, env=env, stdout=logf, stderr=subprocess.STDOUT)
            _RUNNING.add(proc)
        try:
            code = proc.wait()
        finally:
            with _RUNNING_LOCK:
                _RUNNING.discard(proc)
    return run.run.variant, code, time.perf_counter() - start


def _stop_runs() -> None:
    """Start no further run and end the running ones (SIGTERM: a train's checkpoints are written atomically, so it
    resumes from its last one), then wait for them."""
    with _RUNNING_LOCK:
        _STOPPING.set()
        running = list(_RUNNING)
    for proc in running:
        if proc.poll() is None:
            proc.terminate()
    for proc in running:
        proc.wait()


@contextlib.contextmanager
def sigterm_as_interrupt():
    """SIGTERM (`kill`, a batch system ending the job) raises KeyboardInterrupt in the main thread, as Ctrl-C does:
    the runs stop and the command says how to go on, rather than dying with its runs left running."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _local_gpus() -> int:
    try:
        import torch

        return torch.cuda.device_count()
    except ImportError:
        return 0


def run_on_gpus(todo: list[ResolvedRun], out_root: Path, results: Path, gpus: int | None) -> int:
    """Train the runs of `todo` on `gpus` local GPUs (None: every one here), num_gpus each, as many at once as fit;
    print each run's outcome as it ends and return the number that failed. An interrupt ends the running ones."""
    n_gpus = gpus if gpus is not None else _local_gpus()
    per_run = max(r.spec.num_gpus for r in todo)  # each run takes num_gpus GPUs (torchrun processes)
    if n_gpus and per_run > n_gpus:
        raise SpecError(f"The runs use num_gpus={per_run} but only {n_gpus} GPU(s) are here. Set num_gpus.")
    slots = max(1, n_gpus // per_run) if n_gpus else 1
    print(f"running {len(todo)} run(s) on {n_gpus or 'no'} GPU(s), {slots} at a time, {per_run} process(es) "
          f"per run; logs in {out_root}/", flush=True)
    # Each slot is a fixed set of GPUs; a run takes whichever slot is free, so no two runs share a GPU.
    free: queue.Queue[int] = queue.Queue()
    for slot in range(slots):
        free.put(slot)

    def run_in_free_slot(r: ResolvedRun) -> tuple[str, int, float]:
        slot = free.get()
        try:
            slot_gpus = list(range(slot * per_run, (slot + 1) * per_run)) if n_gpus else None
            return _run_one(r, out_root, slot_gpus, results, 29500 + slot)
        finally:
            free.put(slot)

    failed = 0
    _STOPPING.clear()
    with ThreadPoolExecutor(slots) as pool:
        futures = {pool.submit(run_in_free_slot, r): r for r in todo}
        try:
            for i, f in enumerate(as_completed(futures), 1):
                variant, code, seconds = f.result()
                seed = futures[f].spec.seed
                status = "done" if code == 0 else f"FAILED (exit {code}; see its train.log)"
                failed += code != 0
                print(f"  [{i}/{len(todo)}] {variant:<24} seed {seed} {status} in {seconds:.0f}s", flush=True)
        except KeyboardInterrupt:
            _stop_runs()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    return failed
