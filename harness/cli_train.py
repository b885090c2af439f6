"""`harness train`: one recipe/variant from its Plan (also under torchrun)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from harness.spec import SpecError

# Scaled keys that the scale derives from another scaled key (see harness.suite.scale_overrides). Overriding the
# source alone would keep the derived key at the scale's value for the scale's own source: LR steps compressed
# to another number of epochs, an LR for another batch, jitter around another crop. Such a source is refused
# unless the derived keys are overridden too (as reproduce's own train commands do).
_DERIVED = {
    "solver.max_epoch": (("solver.steps",), "or train longer or shorter at this scale with baseline.epoch_factor=F, "
                                            "multigrid.epoch_factor=F for a multigrid run"),
    "solver.batch_size": (("solver.base_lr",), "the scale's LR is the recipe's LR per clip times the batch"),
    "data.crop_size": (("data.jitter",), "the [min, max] short side the crop is taken from, at least the crop"),
}


def override_key(override: str) -> str:
    """The key an override `key=value` (or `+key=…`, `~key`) sets."""
    return override.split("=", 1)[0].lstrip("+~")


def scaled_overrides(overrides: Sequence[str],
                     prepare: Callable[..., tuple[str | None, str | None]] | None = None) -> list[str]:
    """`overrides` with their `scale=NAME` applied as `harness reproduce` applies it to a suite run: the scale's
    overrides (derived from the recipe) first, then `overrides`, which win. The scale's synthetic data (unless
    data.root is given) comes from `prepare` (e.g. reproduce.prepare_synthetic), or placeholders when None."""
    from harness.config import compose
    from harness.reproduce.inputs import suite_data
    from harness.suite import load_scale, scale_overrides

    overrides = list(overrides)
    names = [o.split("=", 1)[1] for o in overrides if "=" in o and override_key(o) == "scale"]
    if not names:
        return overrides
    recipe = [o for o in overrides if "=" in o and override_key(o) == "recipe"]
    # Unknown names: "did you mean". The synthetic data is made for the dataset trained on (as reproduce does).
    dataset_override = [o for o in overrides if "=" in o and override_key(o) == "data.name"]
    dataset = compose([*recipe, *dataset_override], count_shape_costs=False).data.name  # data only: no costs
    scale = load_scale(names[-1]).for_dataset(dataset).long_enough_for([compose(recipe, count_shape_costs=False).data])
    scaled = scale_overrides(compose(recipe, count_shape_costs=False), scale, None, None)
    if not scaled:  # paper scale: the recipe as it is
        return overrides
    given = {override_key(o): o.split("=", 1)[1] for o in overrides if "=" in o}
    ours = dict(o.split("=", 1) for o in scaled)
    for source, (derived, why) in _DERIVED.items():
        missing = [d for d in derived if d not in given]
        if source in given and missing and not _same_value(given[source], ours[source]):
            raise SpecError(
                f"{source}={given[source]} with scale={scale.name}: the scale sets {source}={ours[source]} and "
                f"{', '.join(f'{d}={ours[d]}' for d in missing)} to match it, which {source}={given[source]} alone "
                f"would not fit. For a {scale.name}-sized run drop {source}=; to choose it, also set "
                f"{', '.join(missing)} ({why}).")
    root, cache = suite_data(scale, overrides, dry_run=prepare is None, prepare=prepare)
    # The scale is derived from the recipe and the overrides it does not set (as resolve_suite derives it from
    # the suite run's recipe and overrides); the user's values of scaled keys then win, literally.
    base = [o for o in overrides if "=" in o and override_key(o) not in ours]
    return [*scale_overrides(compose(base, count_shape_costs=False), scale, root, cache), *overrides]


def _same_value(given: str, scaled: str) -> bool:
    """Whether an override's value is the scale's own (`32` and `32`, `[128,160]` and `[128, 160]`): repeating it
    changes nothing the scale derives from it."""
    import yaml

    try:
        return yaml.safe_load(given) == yaml.safe_load(scaled)
    except yaml.YAMLError:
        return given == scaled


def _require_output_dir(overrides: Sequence[str]) -> Path:
    """Refuse a missing or unwritable output_dir, or one another run is writing in, before a scale's synthetic data
    is generated (minutes at proxy scale) rather than after; train() checks the composed value again, and holds
    the folder's lock while it runs. Returns the first folder of output_dir's path that did not exist yet and
    this call made (None where output_dir was there)."""
    from harness.results import require_output_dir, require_output_dir_free

    given = [o.split("=", 1)[1] for o in overrides if "=" in o and override_key(o) == "output_dir"]
    if not given or not given[-1]:
        raise SpecError("Set output_dir=DIR: checkpoints and record.json are written there.")
    made = _first_missing(Path(given[-1]).absolute())
    out = require_output_dir(Path(given[-1]))
    if int(os.environ.get("RANK", "0")) == 0:  # under torchrun the first rank's train() holds the lock, not the others
        require_output_dir_free(out)
    return made


def _first_missing(path: Path) -> Path | None:
    """The outermost folder of `path` (itself included) that does not exist, or None."""
    missing = None
    for folder in (path, *path.parents):
        if folder.exists() or folder.is_symlink():
            break
        missing = folder
    return missing


def _entries(folder: Path) -> set[str]:
    return set(os.listdir(folder)) if folder.is_dir() else set()


def _remove_what_a_refused_run_made(out: Path, made: Path | None, before: set[str]) -> None:
    """After a run that added nothing else to `out` (which held `before`): the lock file it made there (where no
    run holds it), and the folders down to `out` it made, where they are empty."""
    import fcntl

    from harness.results import LOCK_NAME

    lock = out / LOCK_NAME
    if _entries(out) - before == {LOCK_NAME} and lock.is_file():
        with open(lock) as held:
            try:  # a run started meanwhile holds it: leave it
                fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return
            lock.unlink()
    if made is None:
        return
    for folder in (out.absolute(), *out.absolute().parents):
        try:
            folder.rmdir()  # only where empty
        except OSError:
            return
        if folder == made:
            return


def _require_known_suite_run(overrides: Sequence[str]) -> None:
    """A suite run's record is also written to results/<suite>/: a misspelt suite or variant would file it where
    neither `reproduce` nor `report` looks, so both must name one of suites/experiments/ and its runs."""
    from harness.suite import load_suite

    given = {override_key(o): o.split("=", 1)[1] for o in overrides if "=" in o}
    if not given.get("suite"):
        return
    suite = load_suite(given["suite"])
    if not given.get("variant"):
        raise SpecError(f"suite={suite.name} needs variant=NAME, one of: {', '.join(r.variant for r in suite.runs)}.")
    suite.require_variants([given["variant"]], "variant")


def cmd_train(args: argparse.Namespace) -> int:
    from harness.config import compose
    from harness.data.counts import counts_from_data
    from harness.reproduce.inputs import prepare_synthetic  # under a file lock: torchrun starts every rank at once
    from harness.train.loop import TrainingDiverged, train

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    out = Path(next((o.split("=", 1)[1] for o in reversed(args.overrides)
                     if "=" in o and override_key(o) == "output_dir"), ""))
    before = _entries(out) if out.parts else set()
    made = _require_output_dir(args.overrides)
    try:
        _require_known_suite_run(args.overrides)
        spec = compose(scaled_overrides(args.overrides, prepare=prepare_synthetic))
        spec, counted = counts_from_data(spec, {override_key(o) for o in args.overrides})
        for line in counted:
            logging.getLogger("harness.train").info(line)
        record = train(spec)
    except TrainingDiverged as err:
        print(f"harness train: diverged: {err}", file=sys.stderr)
        return 3
    except BaseException:  # refused (a bad data.root), or stopped before writing anything: no folder left of it
        if int(os.environ.get("RANK", "0")) == 0:
            _remove_what_a_refused_run_made(out, made, before)
        raise
    if int(os.environ.get("RANK", "0")) != 0:  # every rank returns the record; one of them reports it
        return 0
    final = record["final"]
    measured = record["measured"]
    metric = f"mAP {final['map']:.2f}" if "map" in final else accuracy_line(final, spec.data.num_classes)
    print(json.dumps({"run_id": record["run_id"], "output_dir": spec.output_dir, **{k: v for k, v in final.items()}}))
    print(f"done: {record['plan']['iterations']:,} iterations in {measured['train_s']:.1f}s "
          f"({measured['data_wait_share']:.0%} waiting for data), {metric}")
    return 0


def accuracy_line(final: dict, num_classes: int) -> str:
    """Top-1 beside its chance level, and top-5 where it can tell anything: of 5 classes or fewer it is always 100."""
    line = f"top-1 {final['top1']:.2f} (chance {100 / num_classes:.2f} with {num_classes} classes)"
    if num_classes <= 5:
        return f"{line}; top-5 not shown: of {num_classes} classes it is always 100"
    return f"{line} top-5 {final['top5']:.2f}"


def register(sub: argparse._SubParsersAction) -> None:
    train = sub.add_parser("train", help="train one recipe/variant (baseline or multigrid) from its plan",
                           description="Train from the plan of the composed config. Needs output_dir=DIR; "
                                       "resume=true continues from the latest checkpoint there. scale=smoke or "
                                       "scale=proxy shrinks the recipe as `harness reproduce` does (on the scale's "
                                       "synthetic data unless data.root is given). Under torchrun "
                                       "(torchrun --nproc_per_node=N -m harness train ...) set num_gpus=N.")
    train.add_argument("overrides", nargs="*", help="key=value overrides, e.g. data.name=synthetic data.root=DIR")
    train.set_defaults(func=cmd_train)
