"""`harness reproduce`: run every run of a suite that has no record yet, then write its report.

Each run is a `harness train` subprocess (a crash or an out-of-memory error ends that run, not the
suite; a stopped suite resumes each run from its checkpoint with resume=true). Runs spread over the
local GPUs, one per GPU at a time. Records land in results/<suite>/; nothing recorded is redone.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import shlex
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from harness.io import require_writable_dir
from harness.paths import data_home, results_root
from harness.results import (
    damaged_record,
    output_dir_holder,
    recorded,
    reuse_record,
    run_id,
    same_run_elsewhere,
    set_aside_damaged,
)
from harness.spec import RunSpec, SpecError
from harness.suite import ResolvedRun, Scale, SuiteDef, load_scale, load_suite, resolve_suite, suite_scale

log = logging.getLogger("harness.reproduce")


def default_scale() -> str:
    """`proxy` with a GPU, `smoke` without (printed at start)."""
    try:
        import torch

        return "proxy" if torch.cuda.is_available() else "smoke"
    except ImportError:
        return "smoke"


def suite_data(scale: Scale, overrides: list[str], dry_run: bool,
               prepare=None) -> tuple[str | None, str | None]:
    """(data root, frame cache) for a suite's runs: the user's (`data.root=` among `overrides`: nothing to do),
    the scale's synthetic data's paths without generating it for a dry run, else that data, generated on first
    use by `prepare` (default :func:`prepare_synthetic`)."""
    if any(o.startswith("data.root=") for o in overrides):
        return None, None
    if dry_run and scale.synthetic:  # where it is or will be generated: records made with it are then found
        return synthetic_paths(scale)
    return (prepare or prepare_synthetic)(scale)


def synthetic_paths(scale: Scale) -> tuple[str | None, str | None]:
    """Where the scale's synthetic dataset and frame cache live (under $HARNESS_DATA_DIR), made or not."""
    synth = scale.synthetic
    if not synth:
        return None, None
    settings = {k: v for k, v in synth.items() if k != "preset"}
    tag = "-".join(f"{k}{v[0]}x{v[1]}" if isinstance(v, list) else f"{k}{v}" for k, v in sorted(settings.items()))
    root = data_home() / "synthetic" / f"{synth['preset']}-{tag}"
    cache = root.with_name(root.name + "-frames") if scale.settings.get("frame_cache") else None
    return str(root), None if cache is None else str(cache)


def prepare_synthetic(scale: Scale) -> tuple[str | None, str | None]:
    """Generate (once) the scale's synthetic dataset and, if asked, its frame cache; return (root, cache).

    Under a file lock of this dataset's own, beside it: several processes may ask at once (the ranks of a torchrun
    job, runs started side by side on the GPUs of one host), and only the first may build; the others find it done.
    Runs of another dataset (another suite's data, longer videos) neither wait for it nor make it wait."""
    if not scale.synthetic:
        return None, None
    import fcntl

    from harness.data.synth.annotation_files import KINETICS_DONE

    root = Path(synthetic_paths(scale)[0])
    if not scale.settings.get("frame_cache") and (root / KINETICS_DONE).exists():
        # Made already (its last file is written last): nothing to build or wait for, so no lock either, and data
        # shared read-only (made once for several users) serves every run.
        return str(root), None
    require_writable_dir(root.parent, "HARNESS_DATA_DIR")  # the lock, the data and its cache go there
    with open(root.with_name(f".{root.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _prepare_synthetic(scale)


def _prepare_synthetic(scale: Scale) -> tuple[str | None, str | None]:
    synth = scale.synthetic
    from harness.data.synth.annotation_files import KINETICS_DONE
    from harness.data.synth.make import make_synthetic_dataset

    settings = {k: v for k, v in synth.items() if k != "preset"}
    root = Path(synthetic_paths(scale)[0])
    done = root / KINETICS_DONE  # other layouts lack it: make_synthetic_dataset finds their videos made
    if not done.exists():
        print(f"generating synthetic video ({synth['preset']}) in {root} ...", flush=True)
        make_synthetic_dataset(root, synth["preset"], size=tuple(settings.pop("size", ())) or None,
                               workers=max(1, (os.cpu_count() or 1) - 1), **settings)
    cache = None
    if scale.settings.get("frame_cache"):
        cache = str(_frame_cache(root, synth.get("kind", "kinetics")))
    return str(root), cache


def _frame_cache(root: Path, kind: str = "kinetics") -> Path:
    from harness.data.cache_build import build_frame_cache  # the decoded-frame cache (loader throughput)
    from harness.data.synth.config import kind_dataset_name

    cache = root.with_name(root.name + "-frames")
    build_frame_cache(root, cache, name=kind_dataset_name(kind), workers=max(1, (os.cpu_count() or 1) - 1))
    return cache


def pretrained_path(scale: Scale) -> str | None:
    """Where the scale's stand-in for ImageNet weights (`pretrain_2d` in its YAML) lives, made or not: beside its
    synthetic data, named by what it is trained with, so changed settings train a new file. None when the scale
    builds none (paper scale: the user's file)."""
    root = synthetic_paths(scale)[0]
    if not scale.settings.get("pretrain_2d") or root is None:
        return None
    from harness.train.pretrain_2d import settings_from_mapping

    s = settings_from_mapping(scale.settings["pretrain_2d"], f"scale {scale.name}: pretrain_2d")
    width = scale.settings.get("model_width", 1.0)
    tag = f"w{width:g}-i{s.iterations}-b{s.batch}-s{s.size}-lr{s.peak_lr:g}-seed{s.seed}-zi"
    return str(Path(root).with_name(f"{Path(root).name}-resnet50-{tag}.pt"))


def suite_pretrained(scale: Scale, overrides: list[str]) -> str | None:
    """model.pretrained for the suite's runs that require it: None when the user gives one, trains on their own
    data (data.root=) or the scale builds none; else the scale's file (:func:`pretrained_path`), which
    :func:`prepare_pretrained` builds before the first run that needs it. A dry run names the same file, built or
    not: it is part of the runs' settings, so their records are found as a real run finds them."""
    if any(o.startswith(("model.pretrained=", "data.root=")) for o in overrides):
        return None
    return pretrained_path(scale)


def prepare_pretrained(scale: Scale, spec: RunSpec) -> str:
    """Train (once) the scale's 2D ResNet-50 on frames of `spec`'s data (the scale's synthetic training videos) and
    return its path; a file already there is reused. Under a lock of its own: runs that need only the data (which
    :func:`prepare_synthetic` locks) go on while other processes on the machine wait for the weights."""
    import fcntl

    from harness.train.pretrain_2d import pretrain_2d, settings_from_mapping

    path = Path(pretrained_path(scale))
    with open(data_home() / ".pretrain.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.is_file():
            settings = settings_from_mapping(scale.settings["pretrain_2d"], f"scale {scale.name}: pretrain_2d")
            print(f"pre-training a 2D ResNet-50 on synthetic frames (the ImageNet rows' stand-in) into {path} ...",
                  flush=True)
            meta = pretrain_2d(spec, path, settings)
            print(f"  train top-1 {meta['final_train_top1']:.1f}% after {settings.iterations} iterations "
                  f"({meta['train_s']:.0f}s)", flush=True)
    return str(path)


def train_command(run: ResolvedRun, out: Path, port: int = 29500) -> list[str]:
    """The command that trains `run`: `harness train`, under torchrun with num_gpus processes when > 1."""
    args = ["-m", "harness", "train", *run.overrides, f"output_dir={out}", "resume=true"]
    if run.spec.num_gpus > 1:
        return [sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={run.spec.num_gpus}",
                f"--master_port={port}", *args]
    return [sys.executable, *args]


def launch_lines(suite: str, scale: str, todo: list[ResolvedRun], out_root: Path, overrides: list[str],
                 launcher: str, nodes: int) -> list[str]:
    """What `reproduce` would launch, one line per run (local: torchrun on this host; torchrun: the command for
    every node of a multi-node rendezvous; slurm: one Hydra submitit sweep per GPU count)."""
    quote = shlex.quote
    if launcher == "local":
        return [" ".join(quote(c) for c in train_command(r, r.output_dir(out_root))) for r in todo]
    for r in todo:
        if r.spec.num_gpus % nodes:
            raise SpecError(f"{r.run.variant}: num_gpus={r.spec.num_gpus} does not split over --nodes={nodes}.")
    if launcher == "torchrun":
        lines = []
        for r in todo:
            args = ["-m", "harness", "train", *r.overrides,
                    f"output_dir={r.output_dir(out_root)}", "resume=true"]
            lines.append(" ".join([
                "torchrun", f"--nnodes={nodes}", f"--nproc_per_node={r.spec.num_gpus // nodes}",
                "--rdzv-backend=c10d", "--rdzv-endpoint=$MASTER_ADDR:29500", f"--rdzv-id={run_id(r.spec)}",
                *(quote(a) for a in args)]) + f"   # on each of the {nodes} node(s)")
        return lines
    by_gpus: dict[int, list[str]] = {}
    for r in todo:
        by_gpus.setdefault(r.spec.num_gpus, []).append(r.run.variant)
    lines = []
    for gpus, variants in sorted(by_gpus.items()):
        lines.append(" ".join([
            "python -m harness.launch -m", f"suite={suite}", f"scale={scale}", f"variant={','.join(variants)}",
            *([quote("overrides=[" + ",".join(f'"{o}"' for o in overrides) + "]")] if overrides else []),
            "hydra/launcher=submitit_slurm", f"hydra.launcher.nodes={nodes}",
            f"hydra.launcher.tasks_per_node={gpus // nodes}", f"hydra.launcher.gpus_per_node={gpus // nodes}",
            "hydra.launcher.cpus_per_task=10", "hydra.launcher.timeout_min=4320",
            "hydra.launcher.max_num_timeout=3  # resubmitted jobs resume from their last checkpoint"]))
    return lines


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


# The `harness train` subprocesses of the suite running now. An interrupted reproduce stops them and starts no other
# run: a Ctrl-C at the terminal reaches the running train too, but the thread that waited on it would otherwise start
# the next run; and a SIGINT or SIGTERM sent to reproduce alone would leave its train running with no parent, to be
# trained a second time, in the same output folder, when the suite is run again.
_RUNNING: set[subprocess.Popen] = set()
_RUNNING_LOCK = threading.Lock()
_STOPPING = threading.Event()


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


def resolved_runs(suite: SuiteDef, scale: Scale, overrides: list[str], seeds: list[int] | None,
                  dry_run: bool) -> tuple[list[ResolvedRun], str | None]:
    """The suite's runs at `scale` (once per seed of `seeds`, default the recipe's) and the pre-trained stand-in's
    file they name (None where none): the data's paths only, nothing made, so a suite whose runs are all recorded
    (or reusable) needs no data on this machine. Seed-major order: every run's first seed before any run's second,
    so a stopped call leaves whole rows."""
    root, cache = suite_data(scale, overrides, dry_run, prepare=None if dry_run else synthetic_paths)
    pretrained = suite_pretrained(scale, overrides)  # for the ImageNet rows; built only if one runs
    runs = [r for seed in (seeds or [None]) for r in resolve_suite(
        suite, scale, overrides + ([f"seed={seed}"] if seed is not None else []), root, cache, pretrained)]
    return runs, pretrained


def require_run_inputs(specs: list[RunSpec], overrides: list[str]) -> None:
    """SpecError (or AnnotationError) before any run where the inputs the user gave in `overrides` cannot be used:
    data.root missing or not a dataset, its training annotations malformed or of another number of classes,
    model.pretrained a file that does not inflate into the model. Each run would otherwise stop on it in its own
    log, and the suite end with no record. Each dataset and pre-trained model is checked once; the scale's
    synthetic data and pre-trained stand-in, made by the harness, are not."""
    from harness.data.annotations import load_annotations
    from harness.data.sampler import check_num_classes
    from harness.models import build_model

    given = {o.split("=", 1)[0] for o in overrides if "=" in o}
    datasets, models = set(), set()
    for spec in specs:
        data = (spec.data.name, spec.data.root, spec.data.num_classes)
        if spec.data.root is None:  # the paper scale makes no synthetic data: every run would stop on it
            raise SpecError(f"'data.root' is not set, and the runs train on {spec.data.name} (the paper scale makes "
                            f"no synthetic video): give data.root=/path/to/{spec.data.name}, or --scale smoke or "
                            f"proxy to train on synthetic video.")
        if "data.root" in given and data not in datasets:
            datasets.add(data)
            check_num_classes(spec, load_annotations(*data[:2], "train", data[2]).num_classes, spec.data.root)
        if "model.pretrained" in given and (spec.model, spec.data.num_classes) not in models:
            models.add((spec.model, spec.data.num_classes))
            build_model(spec.model, spec.data.num_classes)


def reproduce(suite_name: str, scale_name: str | None = None, overrides: list[str] | None = None,
              results: Path | None = None, gpus: int | None = None, report: bool = True,
              dry_run: bool = False, only: list[str] | None = None, launcher: str = "local",
              nodes: int = 1, seeds: list[int] | None = None, prepare_only: bool = False,
              reports: Path | None = None) -> int:
    """Run the suite's missing runs (once per seed of `seeds`, default the recipe's) and write the report into
    `reports` (default: reports/ beside the results folder, :func:`reports_beside`); returns the number of failed
    runs. With `prepare_only`, make what the missing runs need (the scale's synthetic
    data and frame cache, the pre-trained stand-in) and stop before training: a batch of runs that must fit a
    time limit then starts each run with its inputs ready."""
    suite = load_suite(suite_name)
    suite.require_variants(only or [], "--only")
    scale = suite_scale(suite, load_scale(scale_name or default_scale()))  # synthetic data of the suite's dataset
    overrides = list(overrides or [])
    if dry_run and prepare_only:
        raise SpecError("--dry-run prints the runs and makes nothing; --prepare-only makes their inputs: give one.")
    if seeds and any(o.startswith("seed=") for o in overrides):
        raise SpecError("Give the seeds either as --seeds or as seed=N, not both.")
    print(f"suite {suite.name}: {suite.description}\nscale {scale.name}: {scale.description}", flush=True)
    runs, pretrained = resolved_runs(suite, scale, overrides, seeds, dry_run)
    if only:  # in the order given: the first named run first
        runs = sorted((r for r in runs if r.run.variant in only), key=lambda r: only.index(r.run.variant))
    results = results or results_root()
    reports = Path(reports) if reports else reports_beside(results)
    todo, failed = [], 0
    for r in runs:
        if r.spec is not None and (damaged := damaged_record(r.spec, results)) is not None:
            # A record the report would leave out (a copy cut short, an edited file) does not make the run done:
            # it runs again, and the file is kept aside rather than deleted or written over.
            path, problem = damaged
            kept = "left where it is (a dry run moves nothing)" if dry_run else \
                f"kept as {set_aside_damaged(path).name}"
            print(f"  {r.run.variant:<24} seed {r.spec.seed} warning: {path} is no run record the report can read "
                  f"({problem}): not counted as recorded, {kept}", flush=True)
        if r.spec is None:
            print(f"  {r.run.variant:<24} not run: {r.skip_reason}")
        elif (found := recorded(r.spec, results)) is not None:
            print(f"  {r.run.variant:<24} seed {r.spec.seed} recorded already ({found.name})")
        elif not dry_run and (same := same_run_elsewhere(r.spec, results)) is not None:
            reuse_record(same, r.spec, results)
            print(f"  {r.run.variant:<24} seed {r.spec.seed} the same run is recorded as {same.name}: reused")
        else:
            todo.append(r)
    out_root = Path("outputs") / suite.name
    if dry_run:
        for line in launch_lines(suite.name, scale.name, todo, out_root, overrides, launcher, nodes):
            print(line)
        if pretrained and not Path(pretrained).is_file() and any(r.spec.model.pretrained == pretrained for r in todo):
            print(f"model.pretrained={pretrained} is made before the first run that needs it (a 2D ResNet-50 "
                  f"pre-trained on the synthetic frames: the ImageNet rows' stand-in)")
        return 0
    if todo:
        # Before any data or run: the runs' records go there, which would otherwise fail after every run.
        require_writable_dir(results / suite.name, "--results")
        if not prepare_only:  # each run's log and checkpoints, under the folder reproduce runs in
            require_writable_dir(out_root.absolute(), "outputs", f"Run harness reproduce from a folder where you "
                                 f"can create and write {out_root}/, or make that folder writable.")
        if report and not prepare_only:
            _require_report_folder(suite.name, reports)
        suite_data(scale, overrides, dry_run=False)  # generate the data the runs were resolved with, if needed
        needs = [r.spec for r in todo if pretrained and r.spec.model.pretrained == pretrained]
        if needs:  # the same weights for every seed, as ImageNet weights would be
            prepare_pretrained(scale, needs[0])
        require_run_inputs([r.spec for r in todo], overrides)
        if prepare_only:
            print(f"prepared the inputs of {len(todo)} run(s); none trained (--prepare-only)", flush=True)
            return 0
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
                gpus = list(range(slot * per_run, (slot + 1) * per_run)) if n_gpus else None
                return _run_one(r, out_root, gpus, results, 29500 + slot)
            finally:
                free.put(slot)

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
    if prepare_only:
        return 0
    if report:  # the tables show the setup these runs used (their GPU count)
        _write_report(suite.name, results, next((r.spec.num_gpus for r in runs if r.spec is not None), None),
                      reports)
    return failed


def _local_gpus() -> int:
    try:
        import torch

        return torch.cuda.device_count()
    except ImportError:
        return 0


def reports_beside(results: Path) -> Path:
    """Where reproduce writes its reports by default: reports/ beside the results folder, as the checkout keeps
    results/ and reports/; a user's own --results DIR gets its own reports, apart from the committed ones."""
    return Path(results).absolute().parent / "reports"


def _require_report_folder(suite: str, reports: Path) -> None:
    """SpecError naming reports/<suite> (or reports/, whose index.html the report rewrites) where it cannot be
    written: found before any run, not after all of them."""
    fix = (f"Pass --out DIR, a folder of reports you can create and write, make {reports / suite} writable, or "
           f"pass --no-report and write the report later with 'harness report --suite {suite} --out DIR'.")
    for folder in (reports, reports / suite):
        require_writable_dir(folder.absolute(), "--out", fix)


def _write_report(suite: str, results: Path, gpus: int | None, reports: Path | None = None) -> None:
    reports = Path(reports) if reports else reports_beside(results)
    _require_report_folder(suite, reports)  # named as reproduce names it, not as report's --out
    try:
        from harness.report import load_records, load_suite_def, runs_text, write_report
        from harness.report.inputs import NoSuchSetup
        from harness.report.publish import FewerRecords
    except ImportError:
        print("reports are not available in this version; records are in", results / suite)
        return
    try:
        try:
            path = write_report(suite, results, reports, gpus=gpus)
        except NoSuchSetup:  # nothing of this suite recorded on that many GPUs yet: the default setup
            gpus = None
            path = write_report(suite, results, reports)
    except FewerRecords as err:  # reproduce has no --force: name the command that has it
        raise SpecError(f"{err.refusal} The runs' records are kept in {results / suite}; to replace the report "
                        f"anyway run 'harness report --suite {suite} --results {results} --out {reports} --force', "
                        f"or pass --out DIR to write it elsewhere.") from None
    print(runs_text(load_suite_def(suite), load_records(results / suite)[0], gpus=gpus))
    print(f"report: {path}")
