"""A run's data counts come from its data where the user left them unset (harness.data.counts)."""

from __future__ import annotations

from harness.data.counts import counts_from_data
from harness.spec import RunSpec, spec_from_dict


def _root(tmp_path, classes: bool):
    (tmp_path / "train.csv").write_text("".join(f"v{i}.mp4 {i % 3}\n" for i in range(12)))
    if classes:
        (tmp_path / "classes.txt").write_text("jump\nrun\nswim\n")
    return tmp_path


def _spec(root) -> RunSpec:
    return spec_from_dict({"data": {"name": "kinetics400", "root": str(root)}})


def test_unset_counts_are_taken_from_the_training_annotations_and_said(tmp_path):
    spec, notes = counts_from_data(_spec(_root(tmp_path, classes=True)), set_by_user=())
    assert (spec.data.train_videos, spec.data.num_classes) == (12, 3)
    assert len(notes) == 2 and "data.train_videos=12 from" in notes[0] and "data.num_classes=3" in notes[1]


def test_a_count_the_user_set_is_kept_and_classes_need_a_list_that_names_them(tmp_path):
    root = _root(tmp_path, classes=False)
    spec, notes = counts_from_data(_spec(root), set_by_user={"data.train_videos"})
    assert spec.data.train_videos == RunSpec().data.train_videos and spec.data.num_classes == 400 and not notes
    spec, _ = counts_from_data(_spec(root), set_by_user=())
    assert spec.data.train_videos == 12 and spec.data.num_classes == 400  # integer labels alone: classes unknown


def test_no_root_or_unreadable_annotations_change_nothing(tmp_path):
    assert counts_from_data(RunSpec(), ()) == (RunSpec(), [])
    spec = _spec(tmp_path)  # no train.csv: the run's own checks name what is missing
    assert counts_from_data(spec, ()) == (spec, [])
