"""Making a whole synthetic dataset: its settings (``synth.json``), its videos and its annotation files.

The rendered frames are deterministic from the seed, x264's bytes not always across processes. Preparation is
idempotent: a re-run with the same settings skips the videos already present (each file is written whole or not
at all), different settings in the same folder are an error, and a folder holding files it did not write is
refused (the annotation files would replace a real dataset's).
"""

from __future__ import annotations

import json
from concurrent.futures import as_completed
from dataclasses import asdict
from pathlib import Path

import numpy as np
from tqdm import tqdm

from harness.data.synth.annotation_files import write_annotations
from harness.data.synth.classes import class_table
from harness.data.synth.config import SynthConfig, preset_config
from harness.data.synth.encode import encode_mp4, encode_webm
from harness.data.synth.render import render_charades_video, render_ssv2_video, render_video
from harness.data.synth.videos import SPLIT_IDS, charades_actions, is_hidden, shown_label, video_file, video_label
from harness.data.worker_pool import worker_pool
from harness.io import read_json_object, require_writable_dir, write_text_atomic
from harness.spec import SpecError


def _job(args: tuple[str, str, int, SynthConfig]) -> str:
    out, split, i, cfg = args
    path = Path(out) / video_file(split, i, cfg)
    if not path.exists():
        rng = np.random.default_rng([cfg.seed, SPLIT_IDS[split], i])  # per video: independent of order and skips
        path.parent.mkdir(parents=True, exist_ok=True)
        for stale in path.parent.glob(f".{path.name}.*.tmp"):  # what a generation killed while encoding it left
            stale.unlink(missing_ok=True)
        if cfg.kind == "charades":
            encode_mp4(render_charades_video(charades_actions(split, i, cfg), cfg, rng), path, cfg.fps, cfg.crf,
                       cfg.x264_preset)
            return str(path)
        shown = shown_label(split, i, video_label(split, i, cfg), cfg)
        show = not is_hidden(split, i, cfg)
        if cfg.kind == "ssv2":
            encode_webm(render_ssv2_video(shown, cfg, rng, show_target=show), path, cfg.fps, cfg.crf)
        else:
            frames = render_video(class_table(cfg.classes)[shown], cfg, rng, show_target=show)
            encode_mp4(frames, path, cfg.fps, cfg.crf, cfg.x264_preset)
    return str(path)


def _settings(cfg: SynthConfig) -> dict:
    settings = {**asdict(cfg), "size": list(cfg.size), "format": 1}
    for name in ("label_noise", "hidden"):  # datasets made before these existed keep their manifest
        if not settings[name]:
            del settings[name]
    if settings["kind"] == "kinetics":
        del settings["kind"]
    return settings


def _require_empty(out: Path) -> None:
    """Refuse a folder without synth.json that holds anything: the annotation files written at the end would
    replace a real dataset's (train.csv, classes.txt)."""
    # A generation killed while writing synth.json leaves only its temporary file.
    found = sorted(p.name for p in out.iterdir() if not (p.name.startswith(".synth.json.") and p.suffix == ".tmp"))
    if found:
        shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
        raise SpecError(f"--out {out} holds files harness data synth did not write ({shown}) and no synth.json: "
                        f"writing there would replace them. Choose an empty or new folder.")


def make_synthetic_dataset(out_dir: str | Path, preset: str = "smoke", *, classes: int | None = None,
                           videos: int | None = None, val_videos: int | None = None, frames: int | None = None,
                           size: tuple[int, int] | None = None, fps: int | None = None, seed: int | None = None,
                           label_noise: float | None = None, hidden: float | None = None, kind: str | None = None,
                           workers: int = 1, progress: bool = True) -> SynthConfig:
    """Write a synthetic dataset to `out_dir` (see :mod:`harness.data.synth`); returns the settings used.

    Re-running with the same settings skips finished videos; different settings in the same folder are an
    error (the annotation files would not describe the videos).
    """
    cfg = preset_config(preset, classes=classes, videos=videos, val_videos=val_videos, frames=frames, size=size,
                        fps=fps, seed=seed, label_noise=label_noise, hidden=hidden, kind=kind)
    out = require_writable_dir(Path(out_dir), "--out")
    manifest = out / "synth.json"
    if not manifest.exists():
        _require_empty(out)
    else:
        try:
            old = read_json_object(manifest)
        except (OSError, ValueError) as err:  # the videos' settings are unknown: neither reuse them nor write over them
            raise SpecError(f"{manifest} cannot be read ({err}), so the settings of the dataset in {out} are "
                            f"unknown. Use another --out folder, or delete this one.") from None
        if old != _settings(cfg):
            keys = set(_settings(cfg)) | set(old)
            diff = sorted(k for k in keys if old.get(k) != _settings(cfg).get(k))
            raise SpecError(f"{out} already holds a synthetic dataset made with other settings ({', '.join(diff)} "
                            f"differ). Use another --out folder, or delete this one.")
    write_text_atomic(manifest, json.dumps(_settings(cfg), indent=2) + "\n")
    jobs = [(str(out), split, i, cfg) for split, n in (("train", cfg.videos), ("val", cfg.val_videos))
            for i in range(n)]
    bar = tqdm(total=len(jobs), desc=f"synth {preset}", unit="video", disable=not progress)
    if workers > 1:
        with worker_pool(workers) as pool:
            for future in as_completed([pool.submit(_job, j) for j in jobs]):
                future.result()
                bar.update()
    else:
        for job in jobs:
            _job(job)
            bar.update()
    bar.close()
    write_annotations(out, cfg, [(split, i) for _, split, i, _ in jobs])
    return cfg
