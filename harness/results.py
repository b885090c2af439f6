"""RunRecords: one JSON file per run, the unit everything in results/ and reports/ is made of."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from harness.io import aside_path, require_writable_dir, require_writable_file, write_json_atomic
from harness.paths import results_root
from harness.records import read_complete_run_record
from harness.spec import RunSpec, SpecError, spec_from_record, without_retired_defaults

# Settings that change where or how a run executes, not what it computes.
NOT_IN_RUN_ID = ("output_dir", "resume")
NOT_IN_RUN_ID_TRAIN = ("num_workers", "log_every", "checkpoint_every", "keep_checkpoints")
# Keys added after records were first written: hashed only when set off their default, so the ids of
# records made before them (which ran at that default) stay valid. A step mode changes the timings.
TRAIN_HASHED_WHEN_SET = {"step": "eager", "train_eval_videos": 0, "sub_batch_bn": "auto", "plain_bn_impl": "cudnn"}
# Smaller copies plan the same clips, but their pixels differ by a few grey levels and their data wait differs.
DATA_HASHED_WHEN_SET = {"low_res_copies": []}
# Padded stem inputs compute the same convolution with other kernels: other timings and rounding.
MODEL_HASHED_WHEN_SET = {"pad_stem_channels": 0, "fresh_classifier": False}
# The paper's batch rule: records made before the rule was a setting ran it.
MULTIGRID_HASHED_WHEN_SET = {"batch_rule": "tokens", "shape_costs": []}
# Progressive resizing off: records made before it was a setting ran without it.
BASELINE_HASHED_WHEN_SET = {"progressive_scale": 0.0, "progressive_stages": 4, "progressive_full_fraction": 0.2}
HASHED_WHEN_SET = {"data": DATA_HASHED_WHEN_SET, "model": MODEL_HASHED_WHEN_SET, "train": TRAIN_HASHED_WHEN_SET,
                   "multigrid": MULTIGRID_HASHED_WHEN_SET, "baseline": BASELINE_HASHED_WHEN_SET}


def _generated_name(value: Any) -> Any:
    """A path the harness generated under its data folder (synthetic/<settings tag>, and files made beside it) as
    that name alone: the same dataset sits under another absolute path on each machine."""
    if isinstance(value, str) and PurePosixPath(value).parent.name == "synthetic":
        return f"synthetic/{PurePosixPath(value).name}"
    return value


def _hashed_settings(spec_dict: dict[str, Any], names: bool = True, portable: bool = False) -> str:
    """The settings a run id hashes, as canonical JSON: the spec without output/logging settings (and without the
    suite and variant names unless `names`; with generated data named independently of the machine if
    `portable`)."""
    d = without_retired_defaults(json.loads(json.dumps(spec_dict)))  # a deep copy, as records are read back
    for key in (*NOT_IN_RUN_ID, *(() if names else ("suite", "variant"))):
        d.pop(key, None)
    data = d.get("data", {})
    if portable:
        data["root"] = _generated_name(data.get("root"))
        if "pretrained" in d.get("model", {}):
            d["model"]["pretrained"] = _generated_name(d["model"]["pretrained"])
    data.pop("cache", None)  # a frame cache serves the very frames decoding would
    for key in NOT_IN_RUN_ID_TRAIN:
        d.get("train", {}).pop(key, None)
    for section, defaults in HASHED_WHEN_SET.items():
        values = d.get(section, {})
        for key, default in defaults.items():
            if values.get(key, default) == default:
                values.pop(key, None)
    return json.dumps(d, sort_keys=True)


def run_id(spec: RunSpec) -> str:
    """A short hash of the resolved spec (without output/logging settings): same spec, same id."""
    return hashlib.sha1(_hashed_settings(spec.to_dict()).encode()).hexdigest()[:12]


def seeds_key(spec_dict: dict[str, Any]) -> str:
    """What the records of one run's seeds share: its settings as its run id hashes them (defaults filled in, as
    the record's version left them out), without the seed, generated data compared by name."""
    try:
        spec_dict = spec_from_record({**spec_dict, "seed": 0}).to_dict()
    except (SpecError, TypeError, ValueError):  # a record too old or odd to validate: its settings as written
        spec_dict = {**spec_dict, "seed": 0}
    return _hashed_settings(spec_dict, portable=True)


def record_path(spec: RunSpec, root: Path | None = None) -> Path:
    """Where a suite run's record lives: results/<suite>/<scale>/<variant>__<recipe>__<run id>.json. A rerun of the
    same settings and seed adds its record beside it as <...>__<run id>__2.json, __3, ... (write_new_record)."""
    root = root or results_root()
    name = f"{spec.variant or 'run'}__{spec.recipe or 'recipe'}__{run_id(spec)}.json"
    return root / (spec.suite or "adhoc") / spec.scale / name


def write_new_record(path: Path, record: dict[str, Any]) -> Path:
    """Write `record` to `path`, or, where a file is there, to the first free `<stem>__N.json` (N = 2, 3, ...) beside
    it: every run's record is kept, a rerun's as another run, and none is written over."""
    n, target = 1, path
    while True:
        if not (target.exists() or target.is_symlink()):
            try:
                return write_json_atomic(target, record, new=True)
            except FileExistsError:  # written meanwhile by another run
                pass
        n += 1
        target = path.with_name(f"{path.stem}__{n}{path.suffix}")


def require_output_dir(output_dir: Path) -> Path:
    """SpecError before any work unless a run can write in `output_dir` its checkpoints/ folder and record.json:
    a file named checkpoints or a folder named record.json there would otherwise end the run in a traceback at
    its first checkpoint or, worse, after the last step, with the record of the whole run unwritten."""
    out = require_writable_dir(Path(output_dir), "output_dir")
    move = "move it away or set output_dir to another folder."
    checkpoints = out / "checkpoints"
    if checkpoints.exists() or checkpoints.is_symlink():  # one not there yet is made with the first checkpoint
        require_writable_dir(checkpoints, "output_dir", f"It is the run's checkpoint folder: {move}")
    require_writable_file(out / "record.json", "output_dir", f"the run writes its record to that file: {move}")
    return out


LOCK_NAME = ".train.lock"


@contextlib.contextmanager
def output_dir_lock(output_dir: Path) -> Iterator[None]:
    """Held while a run writes in `output_dir` (a lock file there, which the system releases when the process ends,
    however it ends). SpecError where another run holds it: two runs in one folder would prune, supersede and
    resume each other's checkpoints, e.g. a run started again while a train left running by a killed `harness
    reproduce` still writes there."""
    import fcntl

    with open(output_dir / LOCK_NAME, "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _in_use(output_dir, _holder(lock)) from None
        lock.seek(0)
        lock.truncate()
        lock.write(f"pid {os.getpid()} on {socket.gethostname()}\n")
        lock.flush()
        yield


def require_output_dir_free(output_dir: Path) -> None:
    """SpecError where a run holds `output_dir`'s lock (output_dir_lock), found without writing anything there: the
    check before any work, which leaves a folder it refuses for another reason as it was."""
    holder = output_dir_holder(output_dir)
    if holder is not None:
        raise _in_use(output_dir, holder)


def output_dir_holder(output_dir: Path) -> str | None:
    """Who holds `output_dir`'s lock (output_dir_lock) as its lock file says ('pid P on HOST'), or None where no
    running process does (the system releases the lock of a process that ended, however it ended)."""
    import fcntl

    path = Path(output_dir) / LOCK_NAME
    if not path.is_file():  # no run has written here
        return None
    with open(path) as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _holder(lock)
    return None


def _holder(lock) -> str:
    lock.seek(0)
    return lock.read().strip() or "another process"


def _in_use(output_dir: Path, holder: str) -> SpecError:
    return SpecError(f"'output_dir' {output_dir} is in use by another training run ({holder}). Wait for it to end "
                     f"or stop it, or set output_dir to another folder.")


def write_record(record: dict[str, Any], output_dir: Path, spec: RunSpec, results: Path | None = None) -> list[Path]:
    """Write DIR/record.json, and the suite copy in `results` (default results/) when the run is a suite's: a new
    file there, beside any earlier run's record (write_new_record)."""
    written = [write_json_atomic(output_dir / "record.json", record)]
    if spec.suite:
        written.append(write_new_record(record_path(spec, results), record))
    return written


def _complete_record_of(spec: RunSpec, paths: list[Path], names: bool) -> Path | None:
    """The first of `paths` that holds a complete record of the run `spec` describes, its generated data
    compared by name (a record made on another machine counts)."""
    want = _hashed_settings(spec.to_dict(), names=names, portable=True)
    for path in paths:
        record, _ = read_complete_run_record(path)  # one the report leaves out (damaged, unfinished) records nothing
        if record is not None and _hashed_settings(record["spec"], names=names, portable=True) == want:
            return path
    return None


def recorded(spec: RunSpec, root: Path | None = None) -> Path | None:
    """The record of the run `spec` describes in its suite's folder: at its own path, else one made where the
    harness's data folder had another path (a GPU host's records in this checkout); None if there is none. A file
    the report cannot read (:func:`damaged_record`) records nothing: the run is to be run again."""
    path = record_path(spec, root)
    if read_complete_run_record(path)[0] is not None:
        return path
    return _complete_record_of(spec, sorted(path.parent.glob(f"{spec.variant or 'run'}__*.json")), names=True)


def damaged_record(spec: RunSpec, root: Path | None = None) -> tuple[Path, str] | None:
    """(the file at the run's record path, why the report leaves it out) where one is there but is no complete run
    record (truncated by a crash mid-copy, not JSON or UTF-8, another tool's, an unfinished run's); None where there
    is none or it is one."""
    path = record_path(spec, root)
    if not (path.exists() or path.is_symlink()):
        return None
    problem = read_complete_run_record(path)[1]
    return None if problem is None else (path, problem)


def set_aside_damaged(path: Path) -> Path:
    """Rename the damaged record `path` to a free `<name>.damaged-<time>` beside it, out of every reader's `*.json`,
    and return that: the file is kept (nothing is lost) but no longer met. SpecError naming it where it cannot be."""
    aside = aside_path(path.with_name(f"{path.name}.damaged"))
    try:
        os.rename(path, aside)
    except OSError as err:
        raise SpecError(f"{path} is no run record, and moving it aside to {aside.name} failed ({err.strerror or err}). "
                        f"Move or delete it by hand, then start again.") from None
    return aside


def same_run_elsewhere(spec: RunSpec, root: Path | None = None) -> Path | None:
    """A complete record, under another suite or variant name, of exactly the run `spec` describes (e.g. Table
    1's baseline is Figure 3's 1.0× baseline), so that a suite need not train it again; None if there is none."""
    root = root or results_root()
    return _complete_record_of(spec, sorted(root.glob(f"*/{spec.scale}/*.json")), names=False)


def reuse_record(source: Path, spec: RunSpec, results: Path | None = None) -> Path:
    """Record `spec` (a suite's run) as the same run that `source` recorded: its measurements under this suite's
    names, with `same_run_as` naming the record they come from."""
    record = json.loads(Path(source).read_text())
    root = results or results_root()
    record.update({"run_id": run_id(spec), "suite": spec.suite, "variant": spec.variant,
                   "spec": {**record["spec"], "suite": spec.suite, "variant": spec.variant},
                   "same_run_as": str(Path(source).relative_to(root)) if Path(source).is_relative_to(root)
                   else str(source)})
    return write_new_record(record_path(spec, root), record)
