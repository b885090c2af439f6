"""What every layout shares: unlabelled test splits, and annotation files that are no regular files."""

from __future__ import annotations

import json
import os

import pytest

from harness.data import AnnotationError, load_annotations
from harness.data.errors import UnlabelledSplit
from harness.data.prepare import _listed


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
