"""How `harness data bench` batches a timed loader pass (harness.measure.data_bench.loader_batches)."""

from __future__ import annotations

import pytest

from harness.cli import build_parser
from harness.measure.data_bench import MIN_TIMED_S, loader_batches


@pytest.mark.parametrize("clips, per_gpu_batch, workers, expected", [
    (192, 8, 15, (6, 180)),  # 30 batches: two whole rounds of 15 workers, not 32 batches in three rounds
    (480, 8, 15, (8, 480)),  # four rounds at the trainer's batch
    (100, 8, 1, (8, 96)),
    (4, 8, 2, (1, 4)),
    (3, 8, 4, (1, 3)),  # fewer clips than workers: all of them, one batch each
])
def test_loader_pass_times_whole_rounds_of_one_batch_per_worker(clips, per_gpu_batch, workers, expected):
    batch, timed = loader_batches(clips, per_gpu_batch, workers)
    assert (batch, timed) == expected
    assert timed <= clips and (timed % (batch * workers) == 0 or timed == clips)


def test_the_command_times_each_path_for_the_benchs_default_seconds():
    data = build_parser()._subparsers._group_actions[0].choices["data"]._subparsers._group_actions[0]
    option = next(a for a in data.choices["bench"]._actions if a.dest == "min_seconds")
    assert option.default == MIN_TIMED_S  # the parser's literal (it imports no torch) is the bench's constant
