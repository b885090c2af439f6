"""Every dataset reader on small files written in exactly its format, and clear errors for malformed lines."""

from __future__ import annotations

import json

import av
import pytest
import torch

from harness.data import AnnotationError, VideoClipDataset, load_annotations
from harness.data.clip_dataset import collate_clips, collate_eval
from harness.data.sampler import ClipRequest
from harness.spec import SpecError, spec_from_dict
from tests.integration.video_files import small_spec, write_kinetics_list, write_video


def _request(i: int, t: int = 4, s: int = 16) -> ClipRequest:
    return ClipRequest(i, t, s, (1, 2), (18, 24), (0, 0, 0, 0, i))


def test_kinetics_path_label_list_and_classes_txt(tmp_path):
    write_kinetics_list(tmp_path, 6, classes=3)
    (tmp_path / "classes.txt").write_text("a\nb\nc\n")
    ann = load_annotations("kinetics400", tmp_path, "train")
    assert len(ann) == 6 and ann.num_classes == 3 and ann.classes == ("a", "b", "c")
    assert [r.label for r in ann.records] == [0, 1, 2, 0, 1, 2] and ann.records[0].path.is_file()
    ds = VideoClipDataset(ann)
    batch = collate_clips([ds[_request(i)] for i in range(3)])
    assert batch["clips"].shape == (3, 3, 4, 16, 16) and batch["clips"].dtype == torch.uint8
    assert batch["labels"].tolist() == [0, 1, 2] and batch["failures"] == []


def test_kinetics_list_errors_name_file_and_line(tmp_path):
    (tmp_path / "train.csv").write_text("a.mp4 1\nb.mp4\n\nc.mp4 400\nd.mp4 x\nwith space/e.mp4 3\n")
    with pytest.raises(AnnotationError) as err:
        load_annotations("kinetics400", tmp_path, "train", num_classes=400)
    problems = [(p.line, p.reason.split(":")[0].split(" ")[0]) for p in err.value.problems]
    assert problems == [(2, "missing"), (4, "label"), (5, "label")]
    assert "train.csv, line 2: missing label" in str(err.value) and "out of range" in str(err.value)
    assert isinstance(err.value, SpecError)


def test_kinetics_official_csv(tmp_path):
    rows = [("abseiling", "AAAAAAAAAAA", 0, 10), ("zumba", "BBBBBBBBBBB", 15, 25), ("air drumming", "CCC", 3, 13)]
    lines = ["label,youtube_id,time_start,time_end,split"]
    for label, yid, a, b in rows:
        lines.append(f"{label},{yid},{a},{b},train")
        write_video(tmp_path / "train" / f"{yid}_{a:06d}_{b:06d}.mp4")
    (tmp_path / "train.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "val.csv").write_text("label,youtube_id,time_start,time_end,split\nzumba,DDD,1,11,val\n"
                                      "yoga,EEE,0,10,val\n,FFF,0,10,val\nzumba,GGG\n")  # the last row cut short
    ann = load_annotations("kinetics400", tmp_path, "train")
    assert ann.classes == ("abseiling", "air drumming", "zumba")  # sorted alphabetically, as the reference
    assert [r.label for r in ann.records] == [0, 2, 1]
    assert all(r.path.is_file() for r in ann.records)
    with pytest.raises(AnnotationError) as err:
        load_annotations("kinetics400", tmp_path, "val")
    assert [(p.line, p.reason.split(" ")[0]) for p in err.value.problems] == [(3, "unknown"), (4, "missing"),
                                                                              (5, "bad")]
    assert "val.csv" in err.value.problems[0].file


@pytest.mark.parametrize("header, prefix, times", [
    ("label,youtube_id,time_start,time_end,split,is_cc", "", "{a},{b}"),  # the release, with its is_cc column
    ('"label","youtube_id","time_start","time_end","split"', "", "{a},{b}"),  # quoted, as R or a spreadsheet saves
    (",label,youtube_id,time_start,time_end,split", "{i},", "{a}.0,{b}.0"),  # pandas: index column, float times
])
def test_kinetics_csv_as_other_tools_write_it(tmp_path, header, prefix, times):
    rows = [("passing American football (in game)", "-AAAAAAAAAA", 5, 15), ('hugging, "baby"', "BBB", 0, 10)]
    lines = [header]
    for i, (label, yid, a, b) in enumerate(rows):
        quoted = '"' + label.replace('"', '""') + '"'
        split = ",train,0" if "is_cc" in header else ",train"
        lines.append(prefix.format(i=i) + f"{quoted},{yid}," + times.format(a=a, b=b) + split)
        write_video(tmp_path / "train" / f"{yid}_{a:06d}_{b:06d}.mp4", n=4)
    # A UTF-8 BOM, Windows line endings and blank lines at the end, as spreadsheet programs leave them.
    (tmp_path / "train.csv").write_bytes(("\ufeff" + "\r\n".join(lines) + "\r\n\r\n\r\n").encode())
    ann = load_annotations("kinetics400", tmp_path, "train")
    assert ann.classes == ('hugging, "baby"', "passing American football (in game)")
    assert [(r.path.name, r.label) for r in ann.records] == [("-AAAAAAAAAA_000005_000015.mp4", 1),
                                                             ("BBB_000000_000010.mp4", 0)]
    assert all(r.path.is_file() for r in ann.records)


@pytest.mark.parametrize("sep", [";", "\t"])
def test_csv_files_saved_by_a_spreadsheet_with_semicolons_or_tabs(tmp_path, sep):
    # Excel saves "CSV" with semicolons where the comma is the decimal mark, and offers tab-separated text; a field
    # holding the separator is quoted. Both were read as one column: a path-label list full of bad lines.
    write_video(tmp_path / "train" / "AAA_000005_000015.mp4", n=4)
    (tmp_path / "train.csv").write_text(sep.join(["label", "youtube_id", "time_start", "time_end", "split"]) + "\n"
                                        + sep.join(["hugging, baby", "AAA", "5", "15", "train"]) + "\n")
    (tmp_path / "Charades_v1_train.csv").write_text(
        sep.join(CHARADES_HEADER.strip().split(",")) + "\n"
        + sep.join(["AAAA1", "s1", "Kitchen", "6", "7", "Yes", "a script", "cup", "desc",
                    '"c092 0.00 0.40;c147 0.50 0.80"', "0.8"]) + "\n")
    kinetics = load_annotations("kinetics400", tmp_path, "train")
    assert kinetics.classes == ("hugging, baby",) and kinetics.records[0].path.is_file()
    assert load_annotations("charades", tmp_path, "train").records[0].label == (92, 147)


def test_kinetics_csv_finds_the_mkv_and_webm_files_downloaders_keep(tmp_path):
    # yt-dlp keeps VP9/Opus downloads as .mkv or .webm under the CSV's name; a missing clip stays the .mp4 the CSV
    # names, so `harness data check` reports it under that name.
    (tmp_path / "train.csv").write_text("label,youtube_id,time_start,time_end,split\nair drumming,AAA,0,10,train\n"
                                        "zumba,BBB,5,15,train\nzumba,CCC,1,11,train\n")
    write_video(tmp_path / "train" / "air drumming" / "AAA_000000_000010.mkv", n=4)
    write_video(tmp_path / "train" / "BBB_000005_000015.webm", n=4, codec="libvpx")
    ann = load_annotations("kinetics400", tmp_path, "train")
    assert [r.path.relative_to(tmp_path).as_posix() for r in ann.records] == [
        "train/air drumming/AAA_000000_000010.mkv", "train/BBB_000005_000015.webm", "train/CCC_000001_000011.mp4"]


def _ssv2_files(tmp_path, codec: str):
    labels = {"Pushing something from left to right": "0", "Putting something on a surface": "1"}
    (tmp_path / "something-something-v2-labels.json").write_text(json.dumps(labels))
    train = [{"id": "101", "label": "pushing a pen from left to right",
              "template": "Pushing [something] from left to right", "placeholders": ["a pen"]},
             {"id": "102", "label": "putting a cup on a table", "template": "Putting [something] on a surface",
              "placeholders": ["a cup"]}]
    (tmp_path / "something-something-v2-train.json").write_text(json.dumps(train, indent=1))
    for e in train:
        write_video(tmp_path / "20bn-something-something-v2" / f"{e['id']}.webm", n=20, codec=codec)


@pytest.mark.parametrize("codec", ["libvpx", "libvpx-vp9"])
def test_ssv2_json_and_webm(tmp_path, codec):
    try:
        av.codec.Codec(codec, "w")
    except av.codec.codec.UnknownCodecError:
        pytest.skip(f"PyAV's FFmpeg lacks {codec}")
    _ssv2_files(tmp_path, codec)
    ann = load_annotations("ssv2", tmp_path, "train")
    assert [r.label for r in ann.records] == [0, 1] and ann.num_classes == 2
    spec = spec_from_dict(small_spec(name="ssv2", root=str(tmp_path), num_classes=2))
    ds = VideoClipDataset.from_spec(spec)
    assert ds.sampling.segment and not ds.sampling.flip  # SSv2: segment sampling, no flip (PySlowFast ssv2.py)
    assert ds[_request(1, t=8)]["clip"].shape == (3, 8, 16, 16)
    ev = VideoClipDataset.from_spec(spec, "train", eval_clips=1, eval_crops=1)
    ev.train = False
    item = ev[0]
    assert item["clips"].shape == (1, 3, 8, 32, 32) and item["valid"]


def test_ssv2_errors_name_line(tmp_path):
    _ssv2_files(tmp_path, "libvpx")
    bad = [{"id": "1", "template": "Pushing [something] from left to right"},
           {"id": "2", "label": "x"},
           {"id": "3", "template": "Juggling [something]"}]
    (tmp_path / "something-something-v2-validation.json").write_text(json.dumps(bad, indent=1))
    with pytest.raises(AnnotationError) as err:
        load_annotations("ssv2", tmp_path, "val")
    assert [p.line for p in err.value.problems] == [6, 10]
    assert "missing label" in err.value.problems[0].reason and "unknown class" in err.value.problems[1].reason


CHARADES_HEADER = "id,subject,scene,quality,relevance,verified,script,objects,descriptions,actions,length\n"


def test_charades_multilabel_clip_targets(tmp_path):
    (tmp_path / "Charades_v1_train.csv").write_text(
        CHARADES_HEADER + 'AAAA1,s1,Kitchen,6,7,Yes,"a script, with a comma",cup;dish,"desc",'
                          '"c092 0.00 0.40;c147 0.50 0.80",0.8\n'
                          'BBBB2,s2,Bedroom,5,7,Yes,script,,desc,,0.8\n')
    for vid in ("AAAA1", "BBBB2"):
        write_video(tmp_path / "Charades_v1_480" / f"{vid}.mp4", n=12, fps=15)
    ann = load_annotations("charades", tmp_path, "train")
    assert ann.multilabel and ann.num_classes == 157
    assert ann.records[0].label == (92, 147) and ann.records[1].label == ()
    ds = VideoClipDataset(ann)
    item = ds[ClipRequest(0, 2, 16, (1, 1), (16, 20), (0,))]
    assert item["label"].shape == (157,) and item["label"].sum() >= 1  # the clip overlaps at least one action
    batch = collate_clips([item, ds[ClipRequest(1, 2, 16, (1, 1), (16, 20), (1,))]])
    assert batch["labels"].shape == (2, 157) and batch["labels"][1].sum() == 0
    ev = VideoClipDataset(ann, train=False)
    views = collate_eval([ev[0], ev[1]])
    assert views["clips"].shape[0] == 6 and views["labels"].shape == (6, 157)  # 2 clips × 3 crops
    assert views["labels"][0, [92, 147]].tolist() == [1, 1]  # eval targets are the whole video's labels


def test_charades_csv_as_released_with_fields_spanning_lines(tmp_path):
    # The release's scripts and descriptions are free text: quoted, holding commas, quotes and line breaks.
    # A bad row after them is named by the line an editor shows (the header is line 1, the first row spans 2-4).
    rows = ['46GP8,HR43,Kitchen,6,7,Yes,"A person cooks, then\r\nwashes.",food;stove,"He says ""hi"",\nthen leaves.",'
            '"c092 11.90 21.20;c147 0.00 12.60",24.83',
            "N11GT,0KZ7,Stairs,6,7,Yes,x,,,,18.33",
            "X3,s,k,1,1,Yes,x,,,c999 0 1,3"]
    data = "\ufeff" + CHARADES_HEADER.replace("\n", "\r\n") + "\r\n".join(rows) + "\r\n"
    (tmp_path / "Charades_v1_train.csv").write_bytes(data.encode())
    with pytest.raises(AnnotationError) as err:
        load_annotations("charades", tmp_path, "train")
    assert [(p.line, p.reason) for p in err.value.problems] == [(6, "class c999 is out of range [c000, c156]")]
    (tmp_path / "Charades_v1_train.csv").write_bytes(data.replace("c999", "c009").encode())
    ann = load_annotations("charades", tmp_path, "train")
    assert [(r.path.name, r.label) for r in ann.records] == [("46GP8.mp4", (92, 147)), ("N11GT.mp4", ()),
                                                             ("X3.mp4", (9,))]


def test_charades_errors(tmp_path):
    (tmp_path / "Charades_v1_test.csv").write_text(
        CHARADES_HEADER + "X1,s,k,1,1,Yes,s,o,d,c999 0 1,3\nX2,s,k,1,1,Yes,s,o,d,c001 0,3\n"
                          ",s,k,1,1,Yes,s,o,d,,3\nX4,s,k,1,1,Yes,s,o,d,q12 1 2,3\n")
    with pytest.raises(AnnotationError) as err:
        load_annotations("charades", tmp_path, "val")
    assert [p.line for p in err.value.problems] == [2, 3, 4, 5]
    assert "out of range" in err.value.problems[0].reason and "unknown class" in err.value.problems[3].reason


def test_unknown_dataset_and_missing_files(tmp_path):
    with pytest.raises(SpecError, match="Did you mean 'kinetics400'"):
        load_annotations("kinetics40", tmp_path)
    with pytest.raises(AnnotationError, match="no train.csv"):
        load_annotations("kinetics400", tmp_path)
    with pytest.raises(SpecError, match="data.root"):
        load_annotations("ssv2", None)
