"""Extracted-frame datasets: PySlowFast frame lists (SSv2, Charades) with real JPEG frames, read by FrameListReader."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from harness.data import AnnotationError, VideoClipDataset, load_annotations
from harness.data.check import check_dataset
from harness.data.clip_dataset import Sampling, collate_clips, collate_eval
from harness.data.errors import VideoError
from harness.data.frames import FrameFiles, FrameListReader, FrameListRecord, scan_frames
from harness.data.sampler import ClipRequest
from harness.spec import spec_from_dict
from tests.integration.data_cli import harness
from tests.integration.video_files import frames_pattern, small_spec, write_video

HEADER = "original_vido_id video_id frame_id path labels\n"
SSV2_LABELS = {"Pushing something from left to right": "0", "Putting something on a surface": "1",
               "Turning something upside down": "2"}


def _index(frames: torch.Tensor) -> list[int]:
    """Frame indices encoded in the red channel by frames_pattern (robust to JPEG compression)."""
    return [round(float(f[8:, 8:, 0].float().mean()) / 16) for f in frames]


def write_frames(folder: Path, video: str, n: int, sep: str = "_", seed: int = 0) -> list[str]:
    """`n` JPEG frames `{video}{sep}000001.jpg`... of frames_pattern (32×48) in folder/video; relative paths."""
    (folder / video).mkdir(parents=True, exist_ok=True)
    rel = []
    for i, frame in enumerate(frames_pattern(n, 32, 48, seed)):
        name = f"{video}/{video}{sep}{i + 1:06d}.jpg"
        Image.fromarray(frame).save(folder / name, quality=95)
        rel.append(name)
    return rel


def write_ssv2_frames(root: Path, videos: dict[str, int], n: int = 12, split: str = "train",
                      csv_labels: bool = False) -> Path:
    """SSv2 as PySlowFast expects it extracted: frames/<id>/<id>_000001.jpg and frame_lists/{split}.csv."""
    rows = [HEADER]
    for k, (vid, label) in enumerate(videos.items()):
        field = str(label) if csv_labels else '""'  # PySlowFast writes an empty label as ""
        for i, rel in enumerate(write_frames(root / "frames", vid, n, seed=k)):
            rows.append(f"{vid} {k} {i} {rel} {field}\n")
    (root / "frame_lists").mkdir(parents=True, exist_ok=True)
    (root / "frame_lists" / f"{split}.csv").write_text("".join(rows))
    return root


def test_ssv2_frame_lists_with_json_labels(tmp_path):
    templates = list(SSV2_LABELS)
    (tmp_path / "something-something-v2-labels.json").write_text(json.dumps(SSV2_LABELS))
    entries = [{"id": vid, "label": "x", "template": templates[c].replace("something", "[something]"),
                "placeholders": ["x"]} for vid, c in (("11", 2), ("12", 0), ("13", 1))]
    (tmp_path / "something-something-v2-train.json").write_text(json.dumps(entries, indent=1))
    write_ssv2_frames(tmp_path, {"11": 0, "12": 0, "13": 0}, n=12)  # no .webm: the frame lists are used
    ann = load_annotations("ssv2", tmp_path, "train")
    assert [r.label for r in ann.records] == [2, 0, 1]  # from the JSONs, not the CSV
    assert all(isinstance(r, FrameListRecord) for r in ann.records) and ann.num_classes == 3
    rec = ann.records[0]
    assert rec.path == tmp_path / "frames" / "11" and rec.files.pattern is not None  # stored compactly
    assert rec.files[11] == tmp_path / "frames/11/11_000012.jpg" and len(rec.files) == 12
    with FrameListReader(rec.files, rec.fps, rec.path) as r:
        assert (r.info.frames, r.info.height, r.info.width, r.info.fps) == (12, 32, 48, 12.0)
        clip = r.frames_at([*r.frame_times([0, 3, 11]), 100.0, 4.5 / 12])  # past the end → last; tie → earlier
        assert clip.shape == (5, 32, 48, 3) and clip.dtype == torch.uint8 and _index(clip) == [0, 3, 11, 11, 4]
        assert np.abs(clip[1].numpy().astype(int) - frames_pattern(12, 32, 48)[3]).mean() < 12
    spec = spec_from_dict(small_spec(name="ssv2", root=str(tmp_path), num_classes=3))
    ds = VideoClipDataset.from_spec(spec)
    assert ds.sampling.segment and not ds.sampling.flip
    for t, s in ((8, 32), (4, 16), (2, 8)):  # planned shapes of a multigrid cycle
        batch = collate_clips([ds[ClipRequest(i, t, s, (1, 2), (s + 4, s + 16), (0, i, t))] for i in range(3)])
        assert batch["clips"].shape == (3, 3, t, s, s) and batch["labels"].tolist() == [2, 0, 1]
        assert batch["failures"] == []
    ev = VideoClipDataset.from_spec(spec, "train", eval_clips=1, eval_crops=1)
    ev.train = False
    assert ev[0]["clips"].shape == (1, 3, 8, 32, 32) and ev[0]["valid"]


def test_ssv2_frame_lists_with_csv_labels_and_errors(tmp_path):
    write_ssv2_frames(tmp_path, {"21": 3, "22": 1}, n=8, csv_labels=True)
    ann = load_annotations("ssv2", tmp_path, "train", num_classes=174)
    assert [r.label for r in ann.records] == [3, 1] and ann.num_classes == 174 and ann.classes is None
    (tmp_path / "frame_lists" / "val.csv").write_text(
        HEADER + '31 0 0 31/31_000001.jpg ""\n32 1 0 32/32_000001.jpg 999\n33 2 0 33/33_000001.jpg\n'
                 "34 3 x 34/34_000001.jpg 1\n")
    with pytest.raises(AnnotationError) as err:
        load_annotations("ssv2", tmp_path, "val", num_classes=174)
    problems = {p.line: p.reason for p in err.value.problems}
    assert sorted(problems) == [2, 3, 4, 5] and all("val.csv" in p.file for p in err.value.problems)
    assert "missing labels column" in problems[4] and "out of range" in problems[3]
    assert "missing label" in problems[2] and "frame_id" in problems[5]
    (tmp_path / "frame_lists" / "val.csv").write_text("video frame path\n1 2 3\n")
    with pytest.raises(AnnotationError, match="header must be 'original_vido_id"):
        load_annotations("ssv2", tmp_path, "val")


def write_charades_frames(root: Path, labels: dict[str, list[str]], split: str = "train") -> Path:
    """Charades frames (Charades_v1_rgb/<id>/<id>-000001.jpg) and frame_lists/{split}.csv, one label field
    (a quoted comma-separated class list) per frame."""
    rows = [HEADER]
    for k, (vid, per_frame) in enumerate(labels.items()):
        for i, rel in enumerate(write_frames(root / "Charades_v1_rgb", vid, len(per_frame), sep="-", seed=k)):
            rows.append(f'{vid} {k} {i} {rel} "{per_frame[i]}"\n')
    (root / "frame_lists").mkdir(parents=True, exist_ok=True)
    (root / "frame_lists" / f"{split}.csv").write_text("".join(rows))
    return root


def test_charades_frame_lists_clip_targets_are_the_frames_labels(tmp_path):
    per_frame = ["5"] * 4 + [""] * 4 + ["5,7"] * 3 + ["7"] * 3 + [""] * 2  # 16 frames at 24 fps
    write_charades_frames(tmp_path, {"AAAA1": per_frame, "BBBB2": [""] * 10})
    ann = load_annotations("charades", tmp_path, "train")
    assert ann.multilabel and ann.num_classes == 157
    a, b = ann.records
    assert a.label == (5, 7) and b.label == () and a.fps == 24.0 and a.path == tmp_path / "Charades_v1_rgb/AAAA1"
    frame_sets = [set(map(int, filter(None, f.split(",")))) for f in per_frame]
    ds = VideoClipDataset(ann)
    for key in range(24):  # the target is the union of the labels of the frames from the clip's first to last
        req = ClipRequest(0, 2 + key % 3, 16, (1, 4), (16, 20), (key,))
        times = ds._train_clip(req, 0)[1].times
        with FrameListReader(a.files, a.fps, a.path) as r:
            first, last = r.index_at(times[0]), r.index_at(times[-1])
        expected = set().union(*frame_sets[first:last + 1])
        assert set(torch.nonzero(ds._target(a, times)).flatten().tolist()) == expected, (first, last)
    item = ds[ClipRequest(1, 4, 16, (1, 2), (16, 20), (1,))]
    assert item["clip"].shape == (3, 4, 16, 16) and item["label"].sum() == 0
    ev = VideoClipDataset(ann, Sampling(num_frames=4, crop_size=16, eval_clips=2), train=False)
    views = collate_eval([ev[0], ev[2]])  # clip 0 of each video, 3 crops each
    assert views["clips"].shape == (6, 3, 4, 16, 16)
    assert views["labels"][0, [5, 7]].tolist() == [1, 1] and views["labels"][3].sum() == 0


def test_charades_frame_list_errors_name_the_line(tmp_path):
    write_charades_frames(tmp_path, {"C1": ["1", "2,400", "c3"]})
    with pytest.raises(AnnotationError) as err:
        load_annotations("charades", tmp_path, "train")
    assert [p.line for p in err.value.problems] == [3]  # the first bad frame of the video
    assert "out of range" in err.value.problems[0].reason and "C1" in err.value.problems[0].reason


def test_videos_win_over_frame_lists_when_both_exist(tmp_path):
    write_charades_frames(tmp_path, {"AAAA1": ["1"] * 8})
    (tmp_path / "Charades_v1_train.csv").write_text("id,actions\nAAAA1,c001 0.0 0.5\n")
    write_video(tmp_path / "Charades_v1_480" / "AAAA1.mp4", n=8)
    assert not isinstance(load_annotations("charades", tmp_path, "train").records[0], FrameListRecord)
    (tmp_path / "Charades_v1_480" / "AAAA1.mp4").unlink()
    (tmp_path / "Charades_v1_480").rmdir()
    assert isinstance(load_annotations("charades", tmp_path, "train").records[0], FrameListRecord)


def test_bad_frame_files_each_get_their_reason(tmp_path):
    write_ssv2_frames(tmp_path, {"41": 0, "42": 0, "43": 0, "44": 0, "45": 0, "46": 1}, n=8, csv_labels=True)
    frames = tmp_path / "frames"
    (frames / "41/41_000005.jpg").unlink()  # a missing frame in the middle: only a scan (or a clip using it) sees it
    (frames / "42/42_000001.jpg").write_bytes(b"")
    (frames / "43/43_000003.jpg").write_bytes((frames / "43/43_000003.jpg").read_bytes()[:40])  # cut JPEG
    (frames / "44/44_000002.jpg").write_text("not an image\n")
    for f in (frames / "45").iterdir():
        f.unlink()
    (frames / "45").rmdir()
    ann = load_annotations("ssv2", tmp_path, "train", num_classes=4)
    expected = {"41": ("missing", "41_000005.jpg"), "42": ("empty", "42_000001.jpg"),
                "43": ("undecodable", "43_000003.jpg"), "44": ("undecodable", "44_000002.jpg"),
                "45": ("missing", "45_000001.jpg")}
    for rec in ann.records:
        if rec.path.name not in expected:
            assert scan_frames(rec, min_frames=8).frames == 8
            with pytest.raises(VideoError) as err:
                scan_frames(rec, min_frames=9)
            assert err.value.kind == "too_short"
            continue
        kind, name = expected[rec.path.name]
        with pytest.raises(VideoError) as err:
            scan_frames(rec)
        assert err.value.kind == kind and name in str(err.value), str(err.value)
    with pytest.raises(VideoError) as err:  # a clip that needs the missing frame
        FrameListReader(ann.records[0].files, 12.0).frames_at([4 / 12])
    assert err.value.kind == "missing" and "41_000005.jpg" in str(err.value)
    ds = VideoClipDataset(ann, Sampling(segment=True, flip=False))
    item = ds[ClipRequest(1, 4, 16, (1, 1), (16, 20), (5,))]  # 42 is unreadable: replaced, failure reported
    assert item["failures"] and "42" in item["failures"][0][0] and item["clip"].shape == (3, 4, 16, 16)


def test_check_names_the_broken_frame_folders(tmp_path, capsys):
    write_ssv2_frames(tmp_path, {"51": 0, "52": 1, "53": 0}, n=8, csv_labels=True)
    (tmp_path / "frames/52/52_000004.jpg").write_bytes(b"\xff\xd8\xff\xe0garbage")
    (tmp_path / "frames/53/53_000008.jpg").unlink()
    report = check_dataset("ssv2", tmp_path, num_classes=4, min_frames=4)
    assert report["videos"] == 3 and report["readable"] == 1 and not report["ok"]
    bad = {u["path"]: u["reason"] for u in report["unreadable"]}
    assert set(bad) == {str(tmp_path / "frames/52"), str(tmp_path / "frames/53")}
    assert "52_000004.jpg" in bad[str(tmp_path / "frames/52")] and "undecodable" in bad[str(tmp_path / "frames/52")]
    assert "53_000008.jpg" in bad[str(tmp_path / "frames/53")] and "missing" in bad[str(tmp_path / "frames/53")]
    overrides = ["data.name=ssv2", f"data.root={tmp_path}", "data.num_classes=4", "data.num_frames=4",
                 "data.crop_size=16"]
    assert harness("data", "check", "--json", *overrides) == 1
    assert {u["path"] for u in json.loads(capsys.readouterr().out)["unreadable"]} == set(bad)


def test_frame_files_without_a_numbered_pattern(tmp_path):
    names = ["v/first.jpg", "v/second.jpg", "v/3.jpg"]
    files = FrameFiles.of(tmp_path, names)
    assert files.pattern is None and [files[i] for i in range(3)] == [tmp_path / n for n in names]
    assert files.folder() == tmp_path / "v"
    numbered = FrameFiles.of(tmp_path, [f"v/img_{i}.jpg" for i in range(8, 12)])  # unpadded, not from 1
    assert numbered.pattern is not None and numbered[3] == tmp_path / "v/img_11.jpg"
