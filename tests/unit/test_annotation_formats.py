"""Annotation files as other tools and releases write them (the CVDF and DeepMind Kinetics CSVs, MMAction2's
layout and lists, PySlowFast and PyTorchVideo lists, label maps, 20BN's SSv2 JSONs): each is read, or refused with
the file, the line and what to give instead. Videos are empty files here: only the annotations are read."""

from __future__ import annotations

import json
import os
import unicodedata

import pytest

from harness.data import AnnotationError, load_annotations
from harness.data.errors import UnlabelledSplit
from harness.data.prepare import _listed

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


def test_unlabelled_test_splits_are_named_and_passed_over_by_prepare(tmp_path):
    # Kinetics-700-2020's test.csv has no label column and SSv2's test.json no templates: `harness data prepare`,
    # which reads every split, stopped on them with one error per video.
    k700 = tmp_path / "k700"
    (k700 / "annotations").mkdir(parents=True)
    (k700 / "annotations" / "train.csv").write_text("label,youtube_id,time_start,time_end,split\n"
                                                    "abseiling,AAA,0,10,train\n")
    (k700 / "annotations" / "test.csv").write_text("youtube_id,time_start,time_end,split\nBBB,0,10,test\n")
    ssv2 = tmp_path / "ssv2"
    ssv2.mkdir()
    (ssv2 / "something-something-v2-labels.json").write_text(json.dumps({"Holding something": "0"}))
    train = [{"id": "1", "template": "Holding [something]"}]
    (ssv2 / "something-something-v2-train.json").write_text(json.dumps(train))
    (ssv2 / "something-something-v2-test.json").write_text(json.dumps([{"id": "2"}, {"id": "3"}]))
    for name, root, file in (("kinetics700", k700, "test.csv"), ("ssv2", ssv2, "test.json")):
        with pytest.raises(UnlabelledSplit, match=rf"{file}: .*unlabelled test split.* trains on 'train' and scores "
                                                  r"on 'val'") as err:
            load_annotations(name, root, "test")
        assert len(err.value.problems) == 1
        videos, files = _listed(name, root, 400)
        assert len(videos) == 1 and not any(f.name.endswith(file) for f in files)


def test_video_lists_as_pyslowfast_pytorchvideo_and_mmaction_write_them(tmp_path):
    root = tmp_path / "data" / "k400"
    for rel in ("air drumming/a b.mp4", "train/zumba/c.mp4", "videos_train/yoga/d.mp4", "abs/e.mp4"):
        _touch(root / rel)
    lists = {
        # Windows line endings, a space in a path, an absolute path, a blank last line.
        "crlf": f"air drumming/a b.mp4 0\r\n{root / 'abs' / 'e.mp4'} 1\r\n\r\n",
        "comma": "air drumming/a b.mp4,0\ntrain/zumba/c.mp4,1\n",  # PySlowFast's DATA.PATH_LABEL_SEPARATOR=","
        "prefix": "k400/train/zumba/c.mp4 1\nk400/air drumming/a b.mp4 0\n",  # written for a prefix one folder up
        "prefixes": "data/k400/train/zumba/c.mp4 1\n",  # two folders up (paths from the project's folder)
        "videos_dir": "yoga/d.mp4 2\n",  # MMAction2's list, relative to videos_train/ (its data_prefix)
        # Written on Windows: backslashes between folders, also of a drive's path one folder up.
        "windows": "train\\zumba\\c.mp4 1\r\nair drumming\\a b.mp4 0\r\n",
        "windows_drive": "D:\\data\\k400\\train\\zumba\\c.mp4 1\r\n",
        "quoted": '"air drumming/a b.mp4" 0\n"train/zumba/c.mp4" 1\n',  # pandas' to_csv(sep=" ") quotes spaces
    }
    for kind, text in lists.items():
        (root / "train.csv").write_text(text)
        ann = load_annotations("kinetics400", root, "train", 3)
        assert all(r.path.is_file() for r in ann.records), (kind, [r.path for r in ann.records])
        assert all(root in r.path.parents for r in ann.records), kind


@pytest.mark.parametrize(("on_disk", "listed"), [("NFC", "NFD"), ("NFD", "NFC")])
def test_a_list_in_the_other_unicode_normal_form_finds_its_videos(tmp_path, on_disk, listed):
    # macOS writes accents decomposed (NFD), Linux tools composed (NFC): the same name, other bytes.
    name = "cr\u00e8me br\u00fbl\u00e9e/caf\u00e9.mp4"
    _touch(tmp_path / unicodedata.normalize(on_disk, name))
    (tmp_path / "train.csv").write_text(unicodedata.normalize(listed, name) + " 0\n", encoding="utf-8")
    record = load_annotations("kinetics400", tmp_path, "train", 1).records[0]
    assert record.path.is_file() and record.path == tmp_path / unicodedata.normalize(on_disk, name)


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


def test_a_label_map_is_among_the_files_a_prepared_copy_takes(tmp_path):
    # `harness data prepare` copies the files the splits read: without classes.txt the copy had other classes.
    (tmp_path / "train.csv").write_text("a.mp4 0\n")
    (tmp_path / "classes.txt").write_text("abseiling\nzumba\n")
    _, files = _listed("kinetics400", tmp_path, 400)
    assert [f.name for f in files] == ["classes.txt", "train.csv"]


def test_mmaction_video_list_file_is_found(tmp_path):
    _touch(tmp_path / "videos_train" / "yoga" / "d.mp4")
    (tmp_path / "kinetics400_train_list_videos.txt").write_text("yoga/d.mp4 0\n")
    ann = load_annotations("kinetics400", tmp_path, "train", 1)
    assert ann.records[0].path == tmp_path / "videos_train" / "yoga" / "d.mp4"


@pytest.mark.parametrize("lines", [
    ["yoga/gone.mp4 0", "yoga/d.mp4 0", "zumba/e.mp4 1"],
    ["k400/train/yoga/gone.mp4 0", "k400/train/yoga/d.mp4 0", "k400/train/zumba/e.mp4 1"],
], ids=["video-folder", "prefix"])
def test_a_list_whose_first_video_is_missing_still_finds_the_others(tmp_path, lines):
    # A failed download on the list's first line made every relative path resolve under data.root, so every video
    # was reported missing.
    root = tmp_path / "k400"
    for rel in ("train/yoga/d.mp4", "train/zumba/e.mp4"):
        _touch(root / rel)
    (root / "train.csv").write_text("\n".join(lines) + "\n")
    found = [r.path.is_file() for r in load_annotations("kinetics400", root, "train", 2).records]
    assert found == [False, True, True]


@pytest.mark.parametrize("line", ["abseiling/-4wsuPCjDBc_000005_000015 300 0", "a/v.mp4 3 7"],
                         ids=["rawframes", "multi-label"])
def test_mmaction_rawframe_and_multilabel_lists_are_refused_naming_the_format(tmp_path, line):
    # Read as 'path label', they named a video 'frame_dir 300' that does not exist, found only at decoding.
    (tmp_path / "train.csv").write_text(f"{line}\n")
    with pytest.raises(AnnotationError, match=r"train.csv, line 1: .* an MMAction2 rawframe list \('frame_dir "
                                              r"total_frames label'\) or a multi-label list"):
        load_annotations("kinetics400", tmp_path, "train", 400)


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


def test_class_names_are_labels_where_a_label_map_names_them(tmp_path):
    (tmp_path / "classes.txt").write_text("abseiling\nair drumming\ntying knot (not on a tie)\n")
    (tmp_path / "train.csv").write_text("a.mp4 abseiling\nmy clip.mp4 air drumming\nc.mp4,tying knot (not on a tie)\n"
                                        "d.mp4 1\n")
    ann = load_annotations("kinetics400", tmp_path, "train", 400)
    assert [(r.path.name, r.label) for r in ann.records] == [("a.mp4", 0), ("my clip.mp4", 1), ("c.mp4", 2),
                                                             ("d.mp4", 1)]
    (tmp_path / "train.csv").write_text("a.mp4 abseiling\nb.mp4 zumba\nc.mp4 zumba\ne.mp4 yoga\n")
    with pytest.raises(AnnotationError) as err:
        load_annotations("kinetics400", tmp_path, "train", 400)
    assert [(p.line, p.reason) for p in err.value.problems] == [
        (2, f"label 'zumba' (and 1 more line(s)) is neither a class index nor one of the class names in "
            f"{tmp_path / 'classes.txt'}"),
        (4, f"label 'yoga' is neither a class index nor one of the class names in {tmp_path / 'classes.txt'}")]


def test_a_class_name_without_a_label_map_is_named_once_with_the_fix(tmp_path):
    (tmp_path / "train.csv").write_text("a.mp4 zumba\nb.mp4 zumba\n")
    with pytest.raises(AnnotationError) as err:
        load_annotations("kinetics400", tmp_path, "train", 400)
    assert [(p.line, p.reason) for p in err.value.problems] == [
        (1, "label 'zumba' (and 1 more line(s)) is not an integer class index; give indices, or put a classes.txt "
            "naming the classes (one a line) beside train.csv")]


@pytest.mark.parametrize("line, rest", [("a.mp4,3,take 7", "3,take 7"), ("a.mp4 3 take 7", "3 take 7"),
                                        ("a.mp4 0 abseiling", "0 abseiling")], ids=["csv", "spaces", "class-name"])
def test_a_list_line_with_a_text_column_is_named_for_its_columns_not_its_label(tmp_path, line, rest):
    # Read as one path and a label, 'take 7' gave label 7 ("out of range") and a video named 'a.mp4,3,take'.
    (tmp_path / "classes.txt").write_text("abseiling\nzumba\n")
    (tmp_path / "train.csv").write_text(f"b.mp4 1\n{line}\n")
    with pytest.raises(AnnotationError) as err:
        load_annotations("kinetics400", tmp_path, "train", 400)
    assert [(p.line, p.reason) for p in err.value.problems] == [
        (2, f"{line!r} has other columns after the video 'a.mp4' ({rest!r}): give one 'path label' a line, the "
            f"label a class index or a class name of classes.txt")]


@pytest.mark.parametrize("make, what", [(lambda p: p.mkdir(), "a folder"), (os.mkfifo, "a named pipe (FIFO)"),
                                         (lambda p: p.symlink_to(p.with_name("gone.csv")),
                                          "a symbolic link to nothing")], ids=["folder", "fifo", "dangling-link"])
def test_a_list_that_is_no_regular_file_is_named_as_such_not_as_missing(tmp_path, make, what):
    make(tmp_path / "train.csv")
    with pytest.raises(AnnotationError) as err:
        load_annotations("kinetics400", tmp_path, "train", 400)
    assert [(p.file, p.reason) for p in err.value.problems] == [
        (str(tmp_path / "train.csv"), f"is {what}, not a regular file; put the annotation file there, or move it "
                                      f"away")]


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
