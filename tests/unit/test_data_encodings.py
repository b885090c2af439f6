"""Annotation files that are not UTF-8 (Latin-1, UTF-16) fail with the file, the line and the fix; a UTF-8 BOM is
accepted; duplicate lines are warned about once. Every annotation format the readers know, no videos needed."""

from __future__ import annotations

import json
import logging

import pytest

from harness.cli import main
from harness.data import AnnotationError, load_annotations
from harness.data.check import check_dataset

FRAME_HEADER = "original_vido_id video_id frame_id path labels\n"


def _kinetics_list(root, split="train", encoding="utf-8"):
    text = "a/v0.mp4 0\na/v1.mp4 1\nb/café.mp4 2\nb/v3.mp4 3\n"
    (root / f"{split}.csv").write_bytes(text.encode(encoding))


def _ssv2(root, labels_encoding="utf-8", split_encoding="utf-8"):
    labels = {"Holding something": "0", "Pushing something café": "1"}
    (root / "labels.json").write_bytes(json.dumps(labels, ensure_ascii=False).encode(labels_encoding))
    entries = [{"id": "1", "template": "Holding [something]"}, {"id": "2", "template": "Pushing [something] café"}]
    (root / "train.json").write_bytes(json.dumps(entries, indent=1, ensure_ascii=False).encode(split_encoding))


def _charades(root, encoding="utf-8"):
    text = "id,subject,actions\nAAA,x,c001 0.0 1.0\nBBB,café,c002 0.0 2.0\n"
    (root / "Charades_v1_train.csv").write_bytes(text.encode(encoding))


def _frame_list(root, encoding="utf-8"):
    (root / "frame_lists").mkdir(exist_ok=True)
    rows = "".join(f"vid{v} {v} {i} vid{v}/{i:06d}.jpg \"{v}\"\n" for v in (0, 1) for i in range(3))
    text = FRAME_HEADER + rows + "café 2 0 café/000000.jpg \"1\"\n"
    (root / "frame_lists" / "train.csv").write_bytes(text.encode(encoding))


# (dataset, writer of a train split whose line `line` is the first that is not UTF-8 in Latin-1, the file's name)
FORMATS = {
    "path-label list": ("kinetics400", _kinetics_list, "train.csv", 3),
    "Kinetics CSV": ("kinetics400", lambda root, encoding: (root / "train.csv").write_bytes(
        "label,youtube_id,time_start,time_end,split\nzumba,AAA,0,10,train\ncafé,BBB,0,10,train\n".encode(encoding)),
        "train.csv", 3),
    "SSv2 labels JSON": ("ssv2", lambda root, encoding: _ssv2(root, labels_encoding=encoding), "labels.json", 1),
    "SSv2 split JSON": ("ssv2", lambda root, encoding: _ssv2(root, split_encoding=encoding), "train.json", 8),
    "Charades CSV": ("charades", _charades, "Charades_v1_train.csv", 3),
    "frame list": ("charades", _frame_list, "train.csv", 8),
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_latin1_names_the_file_the_line_and_the_fix(tmp_path, fmt):
    dataset, write, name, line = FORMATS[fmt]
    write(tmp_path, encoding="utf-8")
    assert len(load_annotations(dataset, tmp_path, "train", 4)) >= 2  # the same content in UTF-8 reads
    for path in tmp_path.rglob("*.*"):
        path.unlink()
    write(tmp_path, encoding="latin-1")
    with pytest.raises(AnnotationError) as err:
        load_annotations(dataset, tmp_path, "train", 4)
    problem = err.value.problems[0]
    assert problem.file.endswith(name) and problem.line == line, problem
    assert "0xe9" in problem.reason and "Latin-1" in problem.reason and "re-save the file as UTF-8" in problem.reason


@pytest.mark.parametrize("bom", [True, False])
def test_utf16_is_named(tmp_path, bom):
    text = "a/v0.mp4 0\na/v1.mp4 1\n"
    (tmp_path / "train.csv").write_bytes(text.encode("utf-16" if bom else "utf-16-le"))
    with pytest.raises(AnnotationError, match=r"train.csv, line 1: .*UTF-16.*re-save the file as UTF-8"):
        load_annotations("kinetics400", tmp_path, "train", 4)


def test_a_utf8_bom_is_accepted_in_every_format(tmp_path):
    bom = "\ufeff"
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / "train.csv").write_text(bom + "label,youtube_id,time_start,time_end,split\n"
                                              "zumba,AAA,0,10,train\nabseiling,BBB,0,10,train\n", encoding="utf-8")
    ann = load_annotations("kinetics400", tmp_path / "k", "train")
    assert ann.classes == ("abseiling", "zumba") and [r.label for r in ann.records] == [1, 0]
    both = lambda root, encoding: _ssv2(root, encoding, encoding)  # noqa: E731
    for sub, dataset, write in (("l", "kinetics400", _kinetics_list), ("s", "ssv2", both),
                                ("c", "charades", _charades), ("f", "charades", _frame_list)):
        (tmp_path / sub).mkdir()
        write(tmp_path / sub, encoding="utf-8-sig")
        assert len(load_annotations(dataset, tmp_path / sub, "train", 4)) >= 2, sub


@pytest.mark.parametrize("ending", ["\r\n", "\r"], ids=["CRLF", "CR"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_windows_and_old_mac_line_endings_read_as_lf_does(tmp_path, fmt, ending):
    """Excel saves CRLF ("CSV (Windows)") or a lone CR ("CSV (Macintosh)") at the end of each line."""
    dataset, write, _, _ = FORMATS[fmt]
    write(tmp_path, encoding="utf-8")
    want = load_annotations(dataset, tmp_path, "train", 4).records
    for path in tmp_path.rglob("*.*"):
        path.write_bytes(path.read_bytes().replace(b"\n", ending.encode()))
    assert load_annotations(dataset, tmp_path, "train", 4).records == want


def test_data_check_and_train_report_the_encoding_without_a_traceback(tmp_path, capsys):
    _kinetics_list(tmp_path, "train")
    _kinetics_list(tmp_path, "val", encoding="latin-1")
    report = check_dataset("kinetics400", tmp_path, 4)
    assert [(e["file"].endswith("val.csv"), e["line"]) for e in report["annotation_errors"]] == [(True, 3)]
    assert not report["ok"]
    train = ["train", "data.name=kinetics400", f"data.root={tmp_path}", "data.num_classes=4",
             "data.train_videos=4", "num_gpus=1", "solver.batch_size=2", "multigrid.long_cycle=false",
             "multigrid.short_cycle=false", "data.num_frames=8", "data.crop_size=32", "data.jitter=[36,48]",
             f"output_dir={tmp_path / 'out'}", "train.device=cpu"]
    code = main(train)  # the validation list alone is Latin-1
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "val.csv, line 3" in err and "re-save the file as UTF-8" in err
    _kinetics_list(tmp_path, "train", encoding="latin-1")
    code = main(train)
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "train.csv, line 3" in err and "re-save the file as UTF-8" in err


def test_duplicate_lines_are_warned_about_once(tmp_path, caplog):
    (tmp_path / "train.csv").write_text("a.mp4 0\nb.mp4 1\na.mp4 0\nb.mp4 1\nc.mp4 2\n")
    with caplog.at_level(logging.WARNING, logger="harness.data"):
        assert len(load_annotations("kinetics400", tmp_path, "train", 4)) == 5
        load_annotations("kinetics400", tmp_path, "train", 4)
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "train.csv lists 2 video(s) more than once" in warnings[0]


def test_a_class_listed_twice_in_classes_txt_is_named_once_by_data_check(tmp_path):
    """It would add a class no label can be told from and build the model with one class too many."""
    _kinetics_list(tmp_path, "train")
    _kinetics_list(tmp_path, "val")
    (tmp_path / "classes.txt").write_text("abseiling\nzumba\nyoga\nabseiling\n")
    with pytest.raises(AnnotationError, match=r"classes.txt, line 4: class 'abseiling' is listed again \(first on "
                                              r"line 1\); list each class once"):
        load_annotations("kinetics400", tmp_path, "train", 4)
    report = check_dataset("kinetics400", tmp_path, 4)
    assert [(e["file"].endswith("classes.txt"), e["line"]) for e in report["annotation_errors"]] == [(True, 4)]
