"""Files and folders the file system refuses (chmod): a video is skipped and counted like any unusable one; an
annotation, config, checkpoint or record file, or an output folder, is a clear error naming it, before any work."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.config import compose
from harness.data.cache_build import build_frame_cache
from harness.train.loop import train

from ..permissions import denied
from .conftest import tiny_synthetic
from .test_train_reliability import tiny_overrides

PERMISSION = "cannot be opened: permission denied (give the user running the harness read access, e.g. chmod a+r)"


@pytest.fixture(scope="module")
def tiny_root(tmp_path_factory) -> Path:
    return tiny_synthetic(tmp_path_factory, "tiny", videos=8, val_videos=4)


@pytest.fixture()
def root(tiny_root, tmp_path) -> Path:
    """A copy of the tiny synthetic dataset (8 train / 4 val videos) to chmod files of."""
    return Path(shutil.copytree(tiny_root, tmp_path / "data"))


def _first_video(root: Path, split: str) -> Path:
    return root / (root / f"{split}.csv").read_text().splitlines()[0].split()[0]


def test_an_unreadable_video_is_skipped_and_counted_by_check_train_and_cache(root, tmp_path, capsys):
    from harness.cli import main

    videos = [_first_video(root, "train"), _first_video(root, "val")]
    with denied(*videos):
        code = main(["data", "check", "data.name=synthetic", f"data.root={root}", "data.num_classes=4"])
        out = capsys.readouterr().out
        record = train(compose(tiny_overrides(root, tmp_path / "run")))
        cache = build_frame_cache(root, tmp_path / "cache", num_classes=4, workers=1, progress=False)
    assert code == 1 and "2 unreadable" in out
    assert all(f"{v}: unreadable: {v} {PERMISSION}" in out for v in videos)
    bad = record["bad_videos"]
    assert bad["by_reason"] == {"unreadable": 2} and bad["failed_reads"] >= 2
    assert {f["path"]: f["reason"] for f in bad["files"]} == {str(v): f"unreadable: {v} {PERMISSION}" for v in videos}
    assert (record["final"]["videos"], record["final"]["videos_scored"]) == (4, 3)  # evaluation skips it too
    index = json.loads((tmp_path / "cache" / "index.json").read_text())
    assert {k: v["reason"] for k, v in index["bad"].items()} == {str(v.relative_to(root)): "unreadable" for v in videos}
    assert len(cache["bad"]) == 2


def test_an_unreadable_frame_file_is_an_unusable_video(tmp_path):
    from PIL import Image

    from harness.data.decode import VideoError
    from harness.data.frames import _read_frame

    frame = tmp_path / "000001.jpg"
    Image.new("RGB", (8, 8)).save(frame)
    with denied(frame), pytest.raises(VideoError) as err:
        _read_frame(frame)
    assert err.value.kind == "unreadable" and str(err.value) == f"unreadable: frame file {frame} {PERMISSION}"
