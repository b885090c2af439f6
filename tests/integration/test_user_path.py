"""The documented path for a user's own model and videos (docs/your-model.md), end to end through the CLI: a model
factory of the user's package, a dozen videos made by ffmpeg in four codecs and containers, a class list and the
train/val lists; then check the model at every planned shape, predict the speedup, and measure it with a
baseline/multigrid pair and its report."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FACTORY = "tests.integration.user_path_model:tiny_c3d"
CLASSES = {"pattern": "testsrc2", "fractal": "mandelbrot", "life": "life"}  # class → ffmpeg test source
# (extension, encoder options): H.264 MP4, VP9 WebM, MPEG-4 AVI, MJPEG MOV
FORMATS = [("mp4", ["-c:v", "libx264", "-pix_fmt", "yuv420p"]), ("webm", ["-c:v", "libvpx-vp9"]),
           ("avi", ["-c:v", "mpeg4"]), ("mov", ["-c:v", "mjpeg"])]

pytestmark = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="needs the ffmpeg command")


def _make_videos(root: Path) -> None:
    """4 videos a class (one in each format), 2 s at 15 fps, 64×48; the class's video in format k % 4 == class
    index is validation, so that both splits hold every class and several formats."""
    root.mkdir()
    train, val = [], []
    for c, (name, source) in enumerate(CLASSES.items()):
        for k, (ext, codec) in enumerate(FORMATS):
            path = f"{name}_{k}.{ext}"
            subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", f"{source}=size=64x48:rate=15",
                            "-t", "2", *codec, str(root / path)], check=True, timeout=60)
            (val if k == c else train).append(f"{path} {name}")
    (root / "classes.txt").write_text("\n".join(CLASSES) + "\n")
    (root / "train.csv").write_text("\n".join(train) + "\n")
    (root / "val.csv").write_text("\n".join(val) + "\n")


def _harness(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "harness", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def test_check_predict_and_measure_a_user_model_on_a_dozen_videos(tmp_path):
    videos = tmp_path / "myvideos"
    _make_videos(videos)
    # 9 training videos: the smoke scale's batch outgrows them in multigrid's coarse shapes; the plan's refusal
    # names these settings as a fix that fits (multigrid without its coarsest long-cycle shape, one clip a batch).
    run = ["scale=smoke", "data.name=kinetics", f"data.root={videos}", "data.num_classes=3", "data.train_videos=9",
           "multigrid.long_cycle_shapes=3", "solver.batch_size=1", "solver.base_lr=0.0015625"]
    data = _harness("data", "check", *run, cwd=tmp_path)  # the run's own settings: it plans that run for the data
    assert data.returncode == 0 and "12 readable, 0 unreadable" in data.stdout, data.stdout + data.stderr

    check = _harness("models", "check", FACTORY, *run, cwd=tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "planned shapes of scale=smoke work with" in check.stdout

    profile = _harness("profile", "--repeats", "1", "--warmup", "0", f"model.target={FACTORY}", *run, cwd=tmp_path)
    assert profile.returncode == 0, profile.stdout + profile.stderr
    assert FACTORY in profile.stdout and "speedup" in profile.stdout

    results = tmp_path / "results"
    measured = _harness("reproduce", "--suite", "smoke", "--scale", "smoke", "--results", str(results),
                        f"model.target={FACTORY}", *[o for o in run if o != "scale=smoke"], cwd=tmp_path)
    assert measured.returncode == 0, measured.stdout[-3000:] + measured.stderr[-3000:]
    records = sorted((results / "smoke" / "smoke").glob("*.json"))
    assert len(records) == 2
    assert all(json.loads(r.read_text())["plan"]["model"] == FACTORY for r in records)  # named as the model that ran
    assert (tmp_path / "reports" / "smoke" / "index.html").is_file()
