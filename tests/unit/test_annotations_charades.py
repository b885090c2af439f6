"""Charades annotations: the release's CSVs of timed actions, each bad action named with its line."""

from __future__ import annotations

import pytest

from harness.data import AnnotationError
from harness.data.annotations.charades import read_charades


@pytest.mark.parametrize("times", ["nan 1.0", "0.0 inf"])
def test_charades_actions_at_times_that_are_no_numbers_are_named(tmp_path, times):
    csv = tmp_path / "Charades_v1_train.csv"
    csv.write_text(f"id,actions,length\nA0,c000 {times},3.0\n")
    with pytest.raises(AnnotationError, match=r"Charades_v1_train.csv, line 2: action .* not finite numbers"):
        read_charades(csv, tmp_path)
