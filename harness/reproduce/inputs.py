"""What a suite's runs need before they train: the scale's synthetic data and frame cache, the pre-trained 2D
stand-in for ImageNet weights, and the check that the inputs the user gave can be used."""

from __future__ import annotations

import os
from pathlib import Path

from harness.io import require_writable_dir
from harness.paths import (
    build_lock_beside,
    frame_cache_beside,
    pretrain_lock,
    pretrained_2d_beside,
    synthetic_dataset_dir,
)
from harness.spec import RunSpec, SpecError
from harness.suite import ResolvedRun, Scale


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
    root = synthetic_dataset_dir(f"{synth['preset']}-{tag}")
    cache = frame_cache_beside(root) if scale.settings.get("frame_cache") else None
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
    with open(build_lock_beside(root), "w") as lock:
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

    cache = frame_cache_beside(root)
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
    return str(pretrained_2d_beside(Path(root), tag))


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
    with open(pretrain_lock(), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.is_file():
            settings = settings_from_mapping(scale.settings["pretrain_2d"], f"scale {scale.name}: pretrain_2d")
            print(f"pre-training a 2D ResNet-50 on synthetic frames (the ImageNet rows' stand-in) into {path} ...",
                  flush=True)
            meta = pretrain_2d(spec, path, settings)
            print(f"  train top-1 {meta['final_train_top1']:.1f}% after {settings.iterations} iterations "
                  f"({meta['train_s']:.0f}s)", flush=True)
    return str(path)


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


def prepare_inputs(scale: Scale, overrides: list[str], todo: list[ResolvedRun], pretrained: str | None) -> None:
    """Make what the runs of `todo` need and check what the user gave: the data the runs were resolved with
    (generated if needed), the pre-trained stand-in where a run names it (`pretrained`), then
    :func:`require_run_inputs`."""
    suite_data(scale, overrides, dry_run=False)
    needs = [r.spec for r in todo if pretrained and r.spec.model.pretrained == pretrained]
    if needs:  # the same weights for every seed, as ImageNet weights would be
        prepare_pretrained(scale, needs[0])
    require_run_inputs([r.spec for r in todo], overrides)
