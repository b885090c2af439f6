"""Kinetics annotations as the releases and MMAction2 write them (the CVDF and DeepMind CSVs, the original
release's JSON, MMAction2's layout). Videos are empty files here: only the annotations are read."""

from __future__ import annotations

import json

import pytest

from harness.data import AnnotationError, load_annotations
from harness.data.errors import UnlabelledSplit

K400_HEADER = "label,youtube_id,time_start,time_end,split,is_cc\n"


# Labels of the release with an apostrophe, parentheses, and a comma (quoted).
K400_ROWS = [("massaging person's head", "-4wsuPCjDBc", 5, 15), ("tying knot (not on a tie)", "0Bi6vN-U_7k", 0, 10),
             ("abseiling", "zzz_AAA-BBB", 11, 21), ('hugging, "baby"', "XxXxXxXxXxX", 3, 13)]


def _touch(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")


def _k400_csv(rows=K400_ROWS, split="train") -> str:
    quoted = ['"' + label.replace('"', '""') + '"' for label, *_ in rows]
    return K400_HEADER + "".join(f"{q},{y},{a},{b},{split},0\n" for q, (_, y, a, b) in zip(quoted, rows))


@pytest.mark.parametrize("folder", [
    lambda label: label.replace(" ", "_"),  # rename_classnames.sh: spaces to underscores
    lambda label: label.replace(" ", "_").replace("(", "-").replace(")", "-"),  # its Kinetics-400 version
], ids=["underscores", "underscores-and-hyphens"])
def test_kinetics_in_mmaction_layout(tmp_path, folder):
    # MMAction2's download script renames the release's CSVs kinetics_{split}.csv and sorts the videos into
    # videos_{split}/<class>/, whose folder names its rename script rewrites. Nothing was found before.
    (tmp_path / "annotations").mkdir()
    (tmp_path / "annotations" / "kinetics_train.csv").write_text(_k400_csv())
    (tmp_path / "annotations" / "kinetics_val.csv").write_text(_k400_csv(K400_ROWS[:1], "val"))
    for split in ("train", "val"):
        for label, yid, a, b in K400_ROWS:
            _touch(tmp_path / f"videos_{split}" / folder(label) / f"{yid}_{a:06d}_{b:06d}.mp4")
    ann = load_annotations("kinetics400", tmp_path, "train")
    # The reference's indices: the train CSV's labels sorted by code point.
    assert ann.classes == ("abseiling", 'hugging, "baby"', "massaging person's head", "tying knot (not on a tie)")
    assert [r.label for r in ann.records] == [2, 3, 0, 1]
    assert all(r.path.is_file() for r in ann.records)
    assert ann.records[1].path.parent.name == folder("tying knot (not on a tie)")
    val = load_annotations("kinetics400", tmp_path, "val")
    assert [(r.label, r.path.is_file()) for r in val.records] == [(2, True)]


def _release_json(entries):
    """The original Kinetics release's JSON (as the ActivityNet crawler reads it) of (id, label, segment) entries."""
    return json.dumps({vid: {"annotations": {"label": label, "segment": segment} if label else {},
                             "duration": 10.0, "subset": "x", "url": f"https://www.youtube.com/watch?v={vid}"}
                       for vid, label, segment in entries}, indent=4)


def test_the_original_kinetics_release_json_is_read_as_its_csv(tmp_path):
    (tmp_path / "kinetics_train.json").write_text(_release_json([("---QUuC4vJs", "testifying", [84.0, 94.0]),
                                                                 ("-3ouPhoy2A", "air drumming", [20, 30])]))
    (tmp_path / "kinetics_val.json").write_text(_release_json([("zzz", "air drumming", [5.0, 15.0])]))
    (tmp_path / "kinetics_test.json").write_text(_release_json([("t1", None, None)]))
    _touch(tmp_path / "train" / "testifying" / "---QUuC4vJs_000084_000094.mp4")
    train = load_annotations("kinetics400", tmp_path, "train", 400)
    assert train.classes == ("air drumming", "testifying") and train.num_classes == 2
    assert [(r.path.relative_to(tmp_path).as_posix(), r.label) for r in train.records] == [
        ("train/testifying/---QUuC4vJs_000084_000094.mp4", 1), ("train/-3ouPhoy2A_000020_000030.mp4", 0)]
    assert [r.label for r in load_annotations("kinetics400", tmp_path, "val", 400).records] == [0]
    with pytest.raises(UnlabelledSplit, match="kinetics_test.json: no labels: an unlabelled test split"):
        load_annotations("kinetics400", tmp_path, "test", 400)
    (tmp_path / "kinetics_val.json").write_text(_release_json([("a", "air drumming", [0, 10]),
                                                               ("b", "air drums", [0, 10])]))
    with pytest.raises(AnnotationError, match=r"kinetics_val.json, line 14: unknown class 'air drums' \(not in the "
                                              r"train JSON\) Did you mean 'air drumming'"):
        load_annotations("kinetics400", tmp_path, "val", 400)


def test_mmaction_video_list_file_is_found(tmp_path):
    _touch(tmp_path / "videos_train" / "yoga" / "d.mp4")
    (tmp_path / "kinetics400_train_list_videos.txt").write_text("yoga/d.mp4 0\n")
    ann = load_annotations("kinetics400", tmp_path, "train", 1)
    assert ann.records[0].path == tmp_path / "videos_train" / "yoga" / "d.mp4"
