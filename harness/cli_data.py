"""`harness data synth | check | cache | bench`: make synthetic video, check a dataset, build a decoded-frame
cache, measure loader throughput.

Wired into the `harness` command by `register(subparsers)`. User errors raise harness.spec.SpecError, which
`harness.cli.main` prints and turns into exit status 2. `check` exits 1 when it finds broken files.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import Any

from harness.cli_args import COUNT, NON_NEGATIVE, path
from harness.spec import SpecError


def _size(text: str) -> tuple[int, int]:
    try:
        h, w = text.lower().split("x")
        return int(h), int(w)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--size must be HEIGHTxWIDTH, e.g. 64x86, got {text!r}") from None


def _workers(text: str) -> tuple[int, ...]:
    try:
        counts = tuple(int(w) for w in text.split(","))
    except ValueError:
        counts = (-1,)
    if min(counts) < 0:
        raise argparse.ArgumentTypeError(f"--workers must be a comma-separated list of counts >= 0 like 0,2,4, got "
                                         f"{text!r}")
    return counts


def _seconds(text: str) -> float:
    """--min-seconds: a finite number of seconds >= 0."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds >= 0, got {text!r}")
    return value


def _b_frames(text: str) -> int | None:
    """--b-frames: a count in 0..16, or 'adaptive' (None: x264's own placement)."""
    from harness.data.prepare import MAX_B_FRAMES

    if text.strip().lower() == "adaptive":
        return None
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_B_FRAMES:
        raise argparse.ArgumentTypeError(f"must be a whole number in 0..{MAX_B_FRAMES} or 'adaptive', got {text!r}")
    return value


def cmd_synth(args: argparse.Namespace) -> int:
    from harness.data.annotations.charades import CHARADES_CLASSES
    from harness.data.synth.make import make_synthetic_dataset

    cfg = make_synthetic_dataset(args.out, args.preset, classes=args.classes, videos=args.videos,
                                 val_videos=args.val_videos, frames=args.frames, size=args.size, fps=args.fps,
                                 seed=args.seed, label_noise=args.label_noise, hidden=args.hidden,
                                 kind=args.kind, workers=args.workers,
                                 progress=not args.quiet)
    # The data.name that reads this kind's layout; Charades' reader always has its 157 classes.
    name = {"kinetics": "synthetic"}.get(cfg.kind, cfg.kind)
    num_classes = CHARADES_CLASSES if cfg.kind == "charades" else cfg.classes
    print(f"wrote {cfg.videos} train + {cfg.val_videos} val videos of {cfg.classes} classes to {args.out}; "
          f"train with data.name={name} data.root={Path(args.out).resolve()} data.num_classes={num_classes} "
          f"data.train_videos={cfg.videos}")
    return 0


def _compose(overrides: list[str]):
    from harness.cli_train import scaled_overrides
    from harness.config import compose

    # checked before a scale would fill in its synthetic data's place; among the overrides, since the unscaled
    # spec may not validate (a scale's batch for one GPU)
    if not any(o.split("=", 1)[0].lstrip("+") == "data.root" and o.split("=", 1)[1:] != ["null"] for o in overrides):
        raise SpecError("Set data.root=DIR (and data.name=NAME) to say which dataset to use, e.g. "
                        "'harness data check data.name=synthetic data.root=/data/synth'.")
    # scale=NAME shrinks the recipe as `harness train` does, so that the shortest planned clip (data check's
    # too-short threshold) and the planned shapes (cache, bench) are those of the run the data is checked for.
    return compose(scaled_overrides(overrides))


def cmd_check(args: argparse.Namespace) -> int:
    from harness.cli_train import override_key
    from harness.data.check import check_dataset, format_report, min_clip_frames
    from harness.data.counts import counts_from_data

    spec, counted = counts_from_data(_compose(args.overrides), {override_key(o) for o in args.overrides})
    for line in counted:  # what train would take from the data too
        print(f"harness data check: {line}", file=sys.stderr)
    min_frames = args.min_frames
    if min_frames is None:
        try:  # the planned clips whatever the data's size, which the check reports on (settings_errors)
            min_frames = min_clip_frames(_shapes_plan(spec))
        except SpecError:  # the schedule does not fit this spec; the baseline clip length still applies
            min_frames = spec.data.num_frames
    report = check_dataset(spec.data.name, spec.data.root, spec.data.num_classes, min_frames, args.workers, spec=spec)
    report["min_frames"] = min_frames
    print(json.dumps(report, indent=2) if args.json else format_report(report, spec.data.name, spec.data.root))
    return 0 if report["ok"] else 1


def _shapes_plan(spec: Any) -> Any:
    """The plan of `spec`'s run, for its shapes and strides: a dataset too small to fill the planned batches (a
    benchmark set) is planned as if it were large enough, since neither depends on its size."""
    from harness.schedule import build_plan

    try:
        return build_plan(spec)
    except SpecError:
        return build_plan(spec.replace(data=dataclasses.replace(spec.data, train_videos=10**9)))


def strides_off_the_step(spec: Any, step: int) -> list[int]:
    """The temporal strides the run of `spec` draws (training at every planned shape, and evaluation) that are not
    multiples of `step`: on a copy keeping every step-th frame, those clips get the nearest kept frames."""
    from harness.schedule.trained import planned_loader_shapes

    strides = {spec.data.sampling_rate}
    for shape in planned_loader_shapes(_shapes_plan(spec)):
        lo, hi = shape["stride_range"]
        strides.update(range(lo, hi + 1))
    return sorted(r for r in strides if r % step)


def cmd_prepare(args: argparse.Namespace) -> int:
    from harness.data.prepare import prepare_dataset

    spec = _compose(args.overrides)
    short_side = args.short_side if args.short_side is not None else max(spec.data.jitter[1], spec.data.crop_size)
    if args.frame_step > 1:
        odd = strides_off_the_step(spec, args.frame_step)
        if odd:
            print(f"note: the recipe also draws strides {', '.join(map(str, odd))}, not multiples of --frame-step "
                  f"{args.frame_step}: their clips take the nearest kept frame (up to {args.frame_step // 2} source "
                  f"frame(s) off) where this copy is data.root; as one of data.low_res_copies it leaves them to "
                  f"data.root or another copy.")
    s = prepare_dataset(spec.data.root, args.out, name=spec.data.name, num_classes=spec.data.num_classes,
                        short_side=short_side or None, keyframe_interval=args.keyframe_interval, crf=args.crf,
                        frame_step=args.frame_step, tune=None if args.tune == "none" else args.tune,
                        b_frames=args.b_frames, workers=args.workers, progress=not args.quiet)
    if args.json:
        print(json.dumps(s, indent=2))
        return 0
    for b in s["bad"]:
        print(f"  skipped: {b['path']}: {b['error']}")
    ratio = f"{s['storage_ratio']:.2f}x" if s["storage_ratio"] is not None else "n/a"
    already = f", {s['reused']} already there from an earlier run" if s["reused"] else ""
    size = f"short side <= {short_side}" if short_side else "the source's size kept"
    print(f"prepared {s['prepared']} of {s['videos']} videos{already} in {args.out} "
          f"({len(s['bad'])} skipped): {s['bytes'] / 2**20:.1f} MiB against {s['source_bytes'] / 2**20:.1f} MiB of "
          f"source videos ({ratio}); {size}, a keyframe every {args.keyframe_interval} frames"
          f"{f', every {args.frame_step} frames kept' if args.frame_step > 1 else ''}"
          f"{f', x264 tuned for {args.tune}' if args.tune != 'none' else ''}"
          f"{f', {args.b_frames} non-reference B-frames between references' if args.b_frames else ''}. "
          f"Train on it with data.name={spec.data.name} data.root={Path(args.out).resolve()}")
    return 0


def cmd_cache(args: argparse.Namespace) -> int:
    from harness.data.cache_build import build_frame_cache

    spec = _compose(args.overrides)
    s = build_frame_cache(spec.data.root, args.out, name=spec.data.name, num_classes=spec.data.num_classes,
                          short_side=args.short_side, workers=args.workers, progress=not args.quiet, force=args.force)
    if args.json:
        print(json.dumps(s, indent=2))
        return 0
    for b in s["bad"]:
        print(f"  bad: {b['path']}: {b['reason']}: {b['message']}")
    if s["reused"]:
        print(f"{s['out']} already caches these videos with these settings (--force rebuilds it)")
    print(f"cached {s['cached']} of {s['videos']} videos ({s['frames']} frames, {s['bytes'] / 2**30:.2f} GiB) in "
          f"{s['seconds']:.0f} s to {s['out']}; {len(s['bad'])} unusable (recorded as bad); train with "
          f"data.cache={Path(s['out']).resolve()}")
    if spec.data.jitter and args.short_side is not None and args.short_side < max(spec.data.jitter):
        print(f"note: --short-side {args.short_side} is below data.jitter's maximum {max(spec.data.jitter)}: the "
              f"largest crops will be upsampled")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from harness.data.clip_dataset import VideoClipDataset
    from harness.io import unreadable_reason, write_json_atomic
    from harness.measure.data_bench import bench_loader, consumer_rates, format_bench, synthetic_preset
    from harness.records import DataBenchRecord
    from harness.schedule.trained import planned_loader_shapes

    spec = _compose(args.overrides)
    consumer = None
    if args.consumer:
        try:
            consumer = json.loads(Path(args.consumer).read_text(encoding="utf-8"))
        except OSError as err:
            raise SpecError(f"--consumer {args.consumer} {unreadable_reason(args.consumer, err)}.") from None
        except (UnicodeDecodeError, ValueError) as err:
            raise SpecError(f"--consumer {args.consumer}: cannot read it as a `harness profile --out` record "
                            f"({err}).") from None
        if not isinstance(consumer, dict) or not isinstance(consumer.get("shapes"), list):
            raise SpecError(f"--consumer {args.consumer} is not a `harness profile --out` record (no 'shapes').")
        consumer_rates(consumer, f"--consumer {args.consumer}")  # its shapes checked before any dataset opens
    cache = args.cache or spec.data.cache
    # The decode columns always measure the videos (data.cache unset); a cache adds its own columns next to them.
    low_res_copies = tuple(args.low_res or spec.data.low_res_copies)
    if low_res_copies and not args.prepared:
        raise SpecError("--low-res (data.low_res_copies) measures the prepared copy together with its smaller "
                        "copies: give the prepared copy with --prepared DIR too.")
    spec = spec.replace(data=dataclasses.replace(spec.data, cache=None, low_res_copies=()))
    dataset = VideoClipDataset.from_spec(spec, "train", decode_threads=args.threads)
    cached = None
    if cache:
        cached = VideoClipDataset.from_spec(spec.replace(data=dataclasses.replace(spec.data, cache=cache)), "train")
    plan = _shapes_plan(spec)
    prepared = None
    if args.prepared:  # the same videos, re-encoded by `harness data prepare`
        prepared = VideoClipDataset.from_spec(spec.replace(data=dataclasses.replace(spec.data, root=args.prepared)),
                                              "train", decode_threads=args.threads)
    low_res = None
    if low_res_copies:  # the prepared copy, its clips of small scale-jitter draws decoded from the smaller copies
        low_res = VideoClipDataset.from_spec(spec.replace(data=dataclasses.replace(
            spec.data, root=args.prepared, low_res_copies=low_res_copies)), "train", decode_threads=args.threads)

    def save(fields: dict) -> dict:
        """The record of the shapes measured so far, written to --out (atomically)."""
        record = DataBenchRecord(**fields, prepared=args.prepared).to_dict()
        if args.out:
            write_json_atomic(Path(args.out), record)
        return record

    def measured_one(fields: dict) -> None:  # after every shape: a bench cut off keeps what it measured
        save(fields)
        bar.update(1)

    with tqdm(total=len(planned_loader_shapes(plan)), desc="benchmarking the loader", unit="shape",
              disable=args.json) as bar:
        record = save(bench_loader(plan, dataset, args.clips, args.workers, spec.seed, cached=cached,
                                   prepared=prepared, low_res=low_res, consumer=consumer,
                                   preset=synthetic_preset(spec.data.root), on_shape=measured_one,
                                   min_seconds=args.min_seconds, log=None if args.json else tqdm.write))
    print(json.dumps(record, indent=2) if args.json else format_bench(record))
    return 0


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the `data` subcommand (with `synth`, `check`, `cache`, `bench`) to the `harness` parser's subparsers."""
    data = subparsers.add_parser("data", help="make synthetic video, check a dataset, cache frames, benchmark the "
                                              "loader",
                                 description=__doc__.split("\n")[0])
    sub = data.add_subparsers(dest="data_command", required=True, metavar="DATA_COMMAND")

    synth = sub.add_parser("synth", help="write synthetic videos and Kinetics-, SSv2- or Charades-style annotations",
                           description="Classes need appearance and motion; deterministic from --seed; re-running "
                                       "skips finished videos. Flags override the preset.")
    synth.add_argument("--out", required=True, type=path, help="output folder (becomes data.root)")
    synth.add_argument("--preset", default="smoke", help="smoke (CPU, seconds), proxy (~10k clips, 128×170, 64 "
                                                         "frames), kinetics-like (256×340, 10 s at 30 fps)")
    synth.add_argument("--classes", type=int)
    synth.add_argument("--videos", type=int, help="training videos")
    synth.add_argument("--val-videos", type=int, help="validation videos")
    synth.add_argument("--frames", type=int, help="frames per video")
    synth.add_argument("--size", type=_size, help="HEIGHTxWIDTH, both even, e.g. 64x86")
    synth.add_argument("--fps", type=int)
    synth.add_argument("--seed", type=int)
    synth.add_argument("--label-noise", type=float, help="fraction of videos (both splits) that show another class "
                       "than their label: caps validation top-1 at 1 - p (default 0)")
    synth.add_argument("--hidden", type=float, help="fraction of videos (both splits) that never show their textured "
                       "object: caps validation top-1 at 1 - q + q/classes (default 0)")
    synth.add_argument("--kind", choices=("kinetics", "ssv2", "charades"),
                       help="kinetics (default: appearance x motion classes, flip-invariant, path-label CSVs), ssv2 "
                            "(motion and direction classes that a flip swaps, SSv2 JSONs and WebM), charades "
                            "(several overlapping actions per longer video, Charades CSVs, mAP)")
    synth.add_argument("--workers", type=COUNT, default=1, help="processes rendering and encoding in parallel")
    synth.add_argument("--quiet", action="store_true", help="no progress bar")
    synth.set_defaults(func=cmd_synth)

    check = sub.add_parser("check", help="read every annotation and decode every video; exit 1 if any is broken",
                           description="Example: harness data check data.name=synthetic data.root=/data/synth --json")
    check.add_argument("--json", action="store_true", help="print one JSON object: videos, readable, unreadable "
                                                           "[{path, reason}], annotation_errors [{file, line, reason}],"
                                                           " settings_errors [message]")
    check.add_argument("--min-frames", type=COUNT, help="fewer decodable frames = too short (default: the plan's "
                                                      "smallest clip length)")
    check.add_argument("--workers", type=COUNT, default=1, help="processes decoding in parallel")
    check.add_argument("overrides", nargs="*", help="key=value overrides, e.g. data.name=kinetics400 data.root=DIR")
    check.set_defaults(func=cmd_check)

    cache = sub.add_parser("cache", help="decode every video once into a frame cache that data.cache=DIR reads",
                           description="Decode every train and val video once into uint8 frames on disk (memory-"
                                       "mapped by the loader: no decoding while training). Unusable videos are "
                                       "recorded as bad. Resumes an interrupted build. Example: harness data cache "
                                       "data.name=synthetic data.root=/data/synth --out /scratch/synth-cache")
    cache.add_argument("--out", required=True, type=path,
                       help="cache folder (becomes data.cache); replaced if it is a cache")
    cache.add_argument("--short-side", type=int, help="downscale frames so the short side is at most N pixels "
                                                      "(default: as decoded; keep N >= data.jitter's maximum)")
    cache.add_argument("--workers", type=COUNT, default=os.cpu_count() or 1,
                       help="processes decoding in parallel (default: all cores)")
    cache.add_argument("--force", action="store_true", help="rebuild even if --out caches these videos already")
    cache.add_argument("--json", action="store_true", help="print the summary as JSON")
    cache.add_argument("--quiet", action="store_true", help="no progress bar")
    cache.add_argument("overrides", nargs="*", help="key=value overrides, e.g. data.name=synthetic data.root=DIR")
    cache.set_defaults(func=cmd_cache)

    prepare = sub.add_parser("prepare", help="re-encode a dataset for random access (short keyframe interval)",
                             description="Re-encode every listed video (H.264, a keyframe every few frames, the "
                                         "recipe's largest short side) into --out with the same relative paths and "
                                         "annotation files, so data.root=OUT reads it. Unusable videos are skipped "
                                         "and listed. Resumes an interrupted run. Example: harness data prepare "
                                         "data.name=kinetics data.root=/data/k400 --out /scratch/k400-prepared")
    prepare.add_argument("--out", required=True, type=path,
                         help="the prepared copy's folder (new or empty, or a copy to resume)")
    prepare.add_argument("--short-side", type=NON_NEGATIVE, help="scale videos down so the short side is at most N "
                                                        "(default: the larger of data.jitter's maximum and "
                                                        "data.crop_size; 0 keeps the source size)")
    prepare.add_argument("--keyframe-interval", type=COUNT, default=16, help="frames between keyframes (default 16)")
    prepare.add_argument("--crf", type=int, default=23, help="x264 quality, 0-51, lower is better (default 23)")
    prepare.add_argument("--frame-step", type=COUNT, default=1, metavar="K",
                         help="keep every K-th frame at its source time (default 1: all): K times fewer frames to "
                              "decode per clip where the recipe's strides are multiples of K (the baseline's "
                              "stride 2); other strides take the nearest kept frame, and the command says which")
    prepare.add_argument("--tune", choices=("fastdecode", "none"), default="fastdecode",
                         help="x264 tuning (default fastdecode: no CABAC, deblocking or weighted prediction, so a "
                              "clip decodes faster on the CPU for a few more bytes, as `harness data bench --prepared` "
                              "measures; none: x264's defaults, the smallest files)")
    prepare.add_argument("--b-frames", type=_b_frames, default=3, metavar="N",
                         help="B-frames between reference frames, none of them a reference, so the reader leaves "
                              "out those a clip does not show (default 3: a strided clip decodes fewer frames for a "
                              "few more bytes); 'adaptive': x264's own placement and B-pyramid")
    prepare.add_argument("--workers", type=COUNT, default=os.cpu_count() or 1,
                         help="processes re-encoding in parallel (default: all cores)")
    prepare.add_argument("--json", action="store_true", help="print the summary as JSON")
    prepare.add_argument("--quiet", action="store_true", help="no progress bar")
    prepare.add_argument("overrides", nargs="*", help="key=value overrides, e.g. data.name=kinetics data.root=DIR")
    prepare.set_defaults(func=cmd_prepare)

    bench = sub.add_parser("bench", help="loader clips/s per planned shape (decode, resample, workers)",
                           description="Example: harness data bench data.name=synthetic data.root=DIR --out b.json")
    bench.add_argument("--clips", type=COUNT, default=16,
                       help="clips timed per shape and loader path (the in-process decode, resample and cache-read "
                            "columns time at most 32 of them)")
    bench.add_argument("--workers", type=_workers, default=(0, 2), help="DataLoader worker counts, e.g. 0,2,4")
    bench.add_argument("--threads", type=COUNT, default=1, help="decoder threads per clip")
    bench.add_argument("--min-seconds", type=_seconds, default=3.0, metavar="S",  # data_bench.MIN_TIMED_S, no torch
                       help="time each loader path's stream of batches for at least S seconds, and at least one "
                            "batch of each of its clips (default 3, longer than a fast path takes for its clips "
                            "once); 0: those clips once")
    bench.add_argument("--low-res", action="append", type=path, metavar="DIR",
                       help="with --prepared: also measure the prepared copy with this copy at a smaller short side "
                            "(harness data prepare --short-side N; repeatable), as data.low_res_copies reads them "
                            "(path pyav_prepared_low_res)")
    bench.add_argument("--cache", type=path, help="also measure reading clips from this frame cache (harness data "
                                                  "cache); default: data.cache")
    bench.add_argument("--prepared", type=path, help="also measure the loader on this copy of the videos made by "
                                                     "`harness data prepare`")
    bench.add_argument("--consumer", type=path, help="a `harness profile --out` record of the same recipe on the "
                                                     "training GPU: adds what the trainer consumes per shape "
                                                     "(consumer_clips_per_s)")
    bench.add_argument("--out", type=path, help="write the JSON record here")
    bench.add_argument("--json", action="store_true", help="print the JSON record instead of a table")
    bench.add_argument("overrides", nargs="*", help="key=value overrides")
    bench.set_defaults(func=cmd_bench)
    return data
