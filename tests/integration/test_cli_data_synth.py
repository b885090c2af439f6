"""`harness data synth`: the dataset it makes, and the folder of another dataset it refuses."""

from __future__ import annotations

import pytest

from harness.data import load_annotations
from harness.spec import SpecError

from .data_cli import harness


def test_cli_synth(tmp_path, capsys):
    assert harness("data", "synth", "--out", str(tmp_path), "--classes", "2", "--videos", "2", "--val-videos", "1",
                   "--frames", "4", "--size", "32x32", "--quiet") == 0
    assert "data.train_videos=2" in capsys.readouterr().out
    assert len(load_annotations("synthetic", tmp_path, "val")) == 1


def test_cli_synth_refuses_a_folder_holding_another_dataset(tmp_path):
    (tmp_path / "train.csv").write_text("videos/a.mp4 0\n")
    (tmp_path / "classes.txt").write_text("jumping\n")
    with pytest.raises(SpecError, match=r"classes.txt, train.csv\) and no synth.json.*empty or new folder"):
        harness("data", "synth", "--out", str(tmp_path), "--classes", "2", "--videos", "2", "--val-videos", "1",
                "--frames", "4", "--size", "32x32", "--quiet")
    assert (tmp_path / "train.csv").read_text() == "videos/a.mp4 0\n"
    assert (tmp_path / "classes.txt").read_text() == "jumping\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["classes.txt", "train.csv"]
