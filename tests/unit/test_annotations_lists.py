"""Video lists as PySlowFast, PyTorchVideo and MMAction2 write them: each is read, or refused with the file, the
line and what to give instead. Videos are empty files here: only the annotations are read."""

from __future__ import annotations

import unicodedata

import pytest

from harness.data import AnnotationError, load_annotations


def _touch(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")


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
