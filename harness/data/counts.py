"""A run's data counts from its data: `data.train_videos` and `data.num_classes` where the user left them unset,
so that a dataset of one's own needs neither counted by hand. A key the user set is kept, and checked against the
data as before (harness.data.sampler)."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection

from harness.data.annotations import load_annotations
from harness.spec import RunSpec, SpecError

COUNTED = ("train_videos", "num_classes")


def counts_from_data(spec: RunSpec, set_by_user: Collection[str]) -> tuple[RunSpec, list[str]]:
    """`spec` with each unset count of COUNTED taken from its training annotations, and a line per count taken.
    Nothing changes without a data.root or where the annotations cannot be read (the run's own checks say why),
    and the classes only where the layout names them (integer labels alone do not tell how many classes exist)."""
    if spec.data.root is None:
        return spec, []
    try:
        train = load_annotations(spec.data.name, spec.data.root, "train", spec.data.num_classes)
    except (SpecError, OSError):  # an AnnotationError is a SpecError
        return spec, []
    found = {"train_videos": len(train), "num_classes": train.num_classes if train.classes is not None else None}
    changes = {key: value for key, value in found.items()
               if value is not None and f"data.{key}" not in set_by_user and value != getattr(spec.data, key)}
    if not changes:
        return spec, []
    notes = [f"data.{key}={value} from {train.files[-1]} (not set; the recipe's {getattr(spec.data, key)} does not "
             f"fit this data)" for key, value in changes.items()]
    return spec.replace(data=dataclasses.replace(spec.data, **changes)), notes
