"""The accuracy line `harness train` ends with: top-1 beside its chance level, top-5 where it can tell anything."""

from __future__ import annotations

from harness.cli_train import accuracy_line


def test_top5_is_shown_for_more_than_five_classes():
    assert accuracy_line({"top1": 40.0, "top5": 80.0}, 10) == "top-1 40.00 (chance 10.00 with 10 classes) top-5 80.00"
