"""The annotations of a dataset's split: which reader a dataset name (data.name) selects, and the check that every
split gets. The layouts each reader accepts are in docs/data.md."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from harness.data.annotation_records import unreadable_file
from harness.data.annotations.charades import load_charades
from harness.data.annotations.kinetics import load_kinetics
from harness.data.annotations.layout import Annotations
from harness.data.annotations.ssv2 import load_ssv2
from harness.data.errors import AnnotationError
from harness.spec import SpecError, did_you_mean

__all__ = ["DATASETS", "Annotations", "load_annotations"]

log = logging.getLogger("harness.data")

Loader = Callable[[Path, str, int], Annotations]

DATASETS: dict[str, Loader] = {
    "kinetics400": load_kinetics,
    "kinetics600": load_kinetics,
    "kinetics700": load_kinetics,
    "kinetics": load_kinetics,
    "synthetic": load_kinetics,  # `harness data synth` writes the Kinetics path-label layout
    "ssv2": load_ssv2,
    "charades": load_charades,
}


def load_annotations(name: str, root: str | Path | None, split: str = "train", num_classes: int = 400) -> Annotations:
    """The annotations of `split` ("train", "val" or "test") of dataset `name` (data.name) under `root` (data.root).

    `num_classes` (data.num_classes) bounds integer labels where the layout does not name its classes.
    """
    if name not in DATASETS:
        raise SpecError(f"Unknown dataset 'data.name={name}'.{did_you_mean(name, DATASETS)} "
                        f"Known: {', '.join(DATASETS)}.")
    if root is None:
        raise SpecError("'data.root' is not set: point it at the dataset folder (e.g. data.root=/data/kinetics), "
                        "or make synthetic video with 'harness data synth --out DIR'.")
    root = Path(root).expanduser()
    if not root.is_dir():
        raise SpecError(f"'data.root' {str(root)!r} is not a directory.")
    try:
        annotations = DATASETS[name](root, split, num_classes)
    except OSError as err:  # an annotation file, or a folder searched for one, the file system refuses
        raise AnnotationError([unreadable_file(err, root)]) from None
    _warn_duplicates(annotations)
    return annotations


_WARNED: set[str] = set()  # files already warned about in this process (the splits are loaded more than once)


def _warn_duplicates(annotations: Annotations) -> None:
    """Warn once per file when videos are listed more than once: each copy would be trained on (and scored) as
    another video."""
    repeats = len(annotations.records) - len({r.path for r in annotations.records})
    listing = annotations.files[-1]  # the file that lists the videos (after any labels file)
    if repeats and listing not in _WARNED:
        _WARNED.add(listing)
        log.warning("%s lists %d video(s) more than once (duplicate lines): each copy counts as another video; "
                    "remove the duplicates", listing, repeats)
