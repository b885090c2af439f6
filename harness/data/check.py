"""`harness data check`: read every annotation file and decode every video of a dataset; report what is wrong."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.data.annotations import load_annotations
from harness.data.clip_dataset import DATASET_SAMPLING
from harness.data.errors import AnnotationError, MissingAnnotations, VideoError
from harness.data.frames import FrameListRecord, scan_frames
from harness.data.sampler import check_num_classes, check_train_videos
from harness.data.scan import scan_video
from harness.data.worker_pool import worker_pool
from harness.schedule import Plan, build_plan
from harness.spec import RunSpec, SpecError


def min_clip_frames(plan: Plan) -> int:
    """The fewest frames a video needs, here and in training: the fewest any planned clip has (a video with fewer
    cannot give even the smallest clip; longer ones whose window at a large stride runs past their end repeat the
    last frame, as the reference does). 1 with segment sampling (SSv2): there shorter videos repeat frames by design
    (the reference's SSv2 loader), and most SSv2 videos are shorter than its 64-frame clips."""
    if DATASET_SAMPLING.get(plan.spec.data.name, {}).get("segment"):
        return 1
    return min(c.t for p in plan.phases if p.epochs > 0 for c in p.cycle)


def _scan(args: tuple[str, int, FrameListRecord | None]) -> tuple[str, str | None, int, str]:
    """(path, None, decode errors concealed, the first) for a usable video, (path, reason, 0, "") otherwise;
    extracted frames decode every frame file."""
    path, min_frames, frames = args
    try:
        if frames is not None:
            scan_frames(frames, min_frames)
            return path, None, 0, ""
        info = scan_video(path, min_frames)
        return path, None, info.decode_errors, info.first_decode_error
    except VideoError as err:
        return path, str(err), 0, ""


def _run_refusals(spec: RunSpec, train_videos: int | None, train_classes: int | None) -> list[str]:
    """What `harness train` of `spec` refuses in these counts (the trainer's own checks), as messages."""
    refusals = []
    for check, count in ((check_num_classes, train_classes), (check_train_videos, train_videos)):
        if count is None:  # the train split could not be read: its annotation errors say why
            continue
        try:
            check(spec, count, spec.data.root)
        except SpecError as err:
            refusals.append(str(err))
    if not refusals and train_videos is not None:
        try:  # the schedule for this many videos: a dataset too small for multigrid's batches is refused there
            build_plan(spec)
        except SpecError as err:
            refusals.append(str(err))
    return refusals


def _shared_videos(listed: dict[str, tuple[str, set[Path]]]) -> list[str]:
    """A warning for each split that lists videos of the train split: scoring them measures memorisation."""
    if "train" not in listed:
        return []
    train_file, train = listed["train"]
    warnings = []
    for split, (file, videos) in listed.items():
        shared = len(videos & train) if split != "train" else 0
        if shared:
            which = "every one" if shared == len(videos) else f"{shared}"
            warnings.append(f"{file} lists {which} of its {len(videos)} video(s) in {train_file} too: the {split} "
                            f"split scores videos the model trained on; list other videos in one of them")
    return warnings


def check_dataset(name: str, root: str | Path, num_classes: int = 400, min_frames: int = 1, workers: int = 1,
                  splits: tuple[str, ...] = ("train", "val"), spec: RunSpec | None = None) -> dict[str, Any]:
    """Check every split's annotations and every video they list.

    Returns {"videos" (distinct), "readable", "unreadable": [{"path", "reason"}], "annotation_errors": [{"file",
    "line", "reason"}], "settings_errors": [message], "warnings": [message], "damaged": [{"path", "errors" (that
    the decoder logged and concealed), "first"}], "splits": {split: videos listed, as training counts them},
    "duplicates": {split: lines repeating an earlier one}, "unread_splits": [split whose annotations have errors],
    "ok"}. The train split must exist; others are optional, except that with `spec` (the
    run the data is checked for) the splits train reads (train and val) are required and its data.num_classes and
    data.train_videos are checked as train checks them.
    """
    errors: list[dict[str, Any]] = []
    # Ordered: a video listed in two splits is checked once; frame-list videos keep their record (the frames).
    paths: dict[str, FrameListRecord | None] = {}
    counts: dict[str, int] = {}
    duplicates: dict[str, int] = {}
    warnings: list[str] = []
    unread: list[str] = []
    listed: dict[str, tuple[str, set[Path]]] = {}  # split → (the file listing its videos, their paths)
    train_classes = None
    required = ("train", "val") if spec is not None else ("train",)
    for split in splits:
        try:
            ann = load_annotations(name, root, split, num_classes)
        except MissingAnnotations as err:
            if split in required:
                errors += [{"file": p.file, "line": p.line, "reason": p.reason} for p in err.problems]
                unread.append(split)
            continue
        except AnnotationError as err:  # once each: a file every split reads (classes.txt) fails in each
            found = [{"file": p.file, "line": p.line, "reason": p.reason} for p in err.problems]
            errors += [e for e in found if e not in errors]
            unread.append(split)
            continue
        counts[split] = len(ann)
        repeats = len(ann) - len({r.path for r in ann.records})
        if repeats:
            duplicates[split] = repeats
            warnings.append(f"{ann.files[-1]} lists {repeats} video(s) again on later lines (duplicate lines): "
                            f"training counts each copy as another video; remove the duplicates")
        listed[split] = (ann.files[-1], {r.path for r in ann.records})
        if split == "train":
            train_classes = ann.num_classes
        paths.update((str(r.path), r if isinstance(r, FrameListRecord) else None) for r in ann.records)
    warnings += _shared_videos(listed)
    jobs = [(p, min_frames, frames) for p, frames in paths.items()]
    if workers > 1 and len(jobs) > 1:
        with worker_pool(workers) as pool:
            results = list(pool.map(_scan, jobs, chunksize=8))
    else:
        results = [_scan(j) for j in jobs]
    unreadable = [{"path": p, "reason": r} for p, r, _, _ in results if r is not None]
    damaged = [{"path": p, "errors": n, "first": first} for p, _, n, first in results if n]
    refusals = _run_refusals(spec, counts.get("train"), train_classes) if spec is not None else []
    return {"videos": len(results), "readable": len(results) - len(unreadable), "unreadable": unreadable,
            "annotation_errors": errors, "settings_errors": refusals, "warnings": warnings, "damaged": damaged,
            "splits": counts,
            "duplicates": duplicates, "unread_splits": unread, "ok": not unreadable and not errors and not refusals}


def _split_counts(report: dict[str, Any]) -> str:
    """Each split's count as the report's first line gives it: lines listed, repeats, splits not read."""
    parts = [f"{split} not read (annotation errors below)" for split in report.get("unread_splits", ())]
    for split, listed in report["splits"].items():
        repeats = report.get("duplicates", {}).get(split)
        parts.append(f"{split} {listed}" + (f" listed, {listed - repeats} distinct" if repeats else ""))
    return ", ".join(parts)


def format_report(report: dict[str, Any], name: str, root: str | Path) -> str:
    """The report as text for a terminal."""
    damaged = f" ({len(report['damaged'])} with decoding errors)" if report.get("damaged") else ""
    lines = [f"{name} at {root}: {report['videos']} videos ({_split_counts(report)}), {report['readable']} "
             f"readable{damaged}, {len(report['unreadable'])} unreadable, {len(report['annotation_errors'])} "
             f"annotation error(s)"]
    if report["unreadable"]:
        lines.append("unreadable videos:")
        lines += [f"  {u['path']}: {u['reason']}" for u in report["unreadable"]]
    if report["annotation_errors"]:
        lines.append("annotation errors:")
        lines += [f"  {e['file']}" + (f", line {e['line']}" if e["line"] else "") + f": {e['reason']}"
                  for e in report["annotation_errors"]]
    if report.get("damaged"):
        lines.append("videos with decoding errors (the decoder concealed them: parts of some frames are wrong; "
                     "training reads them so; re-encode from a good copy or remove them):")
        lines += [f"  {d['path']}: {d['errors']} error(s) logged by the decoder, the first: {d['first']}"
                  for d in report["damaged"]]
    if report.get("warnings"):
        lines.append("warnings:")
        lines += [f"  {message}" for message in report["warnings"]]
    if report.get("settings_errors"):
        lines.append("harness train with these settings would refuse:")
        lines += [f"  {message}" for message in report["settings_errors"]]
    lines.append("OK" if report["ok"] else "FAILED: fix or remove the files above (the loader would skip the "
                                           "videos; annotation and settings errors stop training)")
    return "\n".join(lines)
