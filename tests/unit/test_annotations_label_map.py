"""Label maps (classes.txt) as other tools write them: read, or refused naming what is wrong."""

from __future__ import annotations

import json

import pytest

from harness.data import AnnotationError, load_annotations
from harness.data.prepare import _listed


@pytest.mark.parametrize("text", [
    "0 abseiling\n1 air drumming\n2 tying knot (not on a tie)\n",  # index name
    "id,name\n0,abseiling\n1,air drumming\n2,tying knot (not on a tie)\n",  # a CSV label map with its header
    "2 tying knot (not on a tie)\n0 abseiling\n1 air drumming\n",  # any order
    json.dumps({'"air drumming"': 1, '"abseiling"': 0, '"tying knot (not on a tie)"': 2}),  # PyTorchVideo's
    json.dumps({"air drumming": "1", "abseiling": "0", "tying knot (not on a tie)": "2"}),
], ids=["index-name", "csv-header", "unordered", "pytorchvideo-json", "json-strings"])
def test_label_maps_of_other_tools(tmp_path, text):
    (tmp_path / "train.csv").write_text("a.mp4 0\nb.mp4 2\n")
    (tmp_path / "classes.txt").write_text(text)
    ann = load_annotations("kinetics400", tmp_path, "train", 400)
    assert ann.classes == ("abseiling", "air drumming", "tying knot (not on a tie)") and ann.num_classes == 3


@pytest.mark.parametrize("text, why", [
    ("1 ApplyEyeMakeup\n2 ApplyLipstick\n", r"class indices must be 0..1, each once \(they count from 1"),
    ("0 a\n0 b\n", r"classes.txt, line 2: class index 0 is given twice \('a' and 'b'\)"),
    ('{"a": 0, "b": "x"}', r"class 'b' has index 'x', not an integer"),
    ('{"a": 0,', "classes.txt, line 1: invalid JSON"),
], ids=["one-based", "index-twice", "json-not-integer", "json-cut"])
def test_label_maps_that_do_not_give_indices_0_to_n_are_named(tmp_path, text, why):
    (tmp_path / "train.csv").write_text("a.mp4 0\n")
    (tmp_path / "classes.txt").write_text(text)
    with pytest.raises(AnnotationError, match=why):
        load_annotations("kinetics400", tmp_path, "train", 400)


def test_a_label_map_is_among_the_files_a_prepared_copy_takes(tmp_path):
    # `harness data prepare` copies the files the splits read: without classes.txt the copy had other classes.
    (tmp_path / "train.csv").write_text("a.mp4 0\n")
    (tmp_path / "classes.txt").write_text("abseiling\nzumba\n")
    _, files = _listed("kinetics400", tmp_path, 400)
    assert [f.name for f in files] == ["classes.txt", "train.csv"]
