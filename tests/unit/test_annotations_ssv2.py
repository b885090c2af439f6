"""Something-Something v2 annotations as 20BN released them and as copies of them are written."""

from __future__ import annotations

import json

from harness.data import load_annotations


def _touch(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")


def test_ssv2_labels_written_with_brackets_and_videos_converted_to_mp4(tmp_path):
    # A copy of labels.json keyed by the templates with their brackets: every video was an unknown class.
    labels = {"Pushing [something] from left to right": "1", "Holding [something] next to [something]": "0"}
    (tmp_path / "labels.json").write_text(json.dumps(labels))
    (tmp_path / "train.json").write_text(json.dumps([
        {"id": "101", "label": "pushing a pen", "template": "Pushing [something] from left to right",
         "placeholders": ["a pen"]},
        {"id": 102, "template": "Holding [something] next to [something]", "placeholders": ["a", "b"]}]))
    _touch(tmp_path / "20bn-something-something-v2" / "101.mp4")  # converted; 102 is missing
    ann = load_annotations("ssv2", tmp_path, "train")
    assert ann.classes == ("Holding something next to something", "Pushing something from left to right")
    assert [(r.path.name, r.label) for r in ann.records] == [("101.mp4", 1), ("102.webm", 0)]
