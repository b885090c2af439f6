"""How `harness data bench` batches a timed loader stream (harness.measure.data_bench.loader_batches), and reads
the --consumer record."""

from __future__ import annotations

import json

import pytest

from harness.cli import build_parser, main
from harness.measure.data_bench import MIN_TIMED_S, consumer_rates, loader_batches
from harness.spec import SpecError


@pytest.mark.parametrize("clips, per_gpu_batch, workers, expected", [
    (192, 8, 15, 6),  # two batches per worker among the distinct clips
    (480, 8, 15, 8),  # the trainer's batch
    (100, 8, 1, 8),
    (4, 8, 2, 1),
    (3, 8, 4, 1),  # fewer clips than workers: one clip per batch
])
def test_loader_batches_are_the_trainers_where_each_worker_gets_two(clips, per_gpu_batch, workers, expected):
    assert loader_batches(clips, per_gpu_batch, workers) == expected


def test_the_command_times_each_path_for_the_benchs_default_seconds():
    data = build_parser()._subparsers._group_actions[0].choices["data"]._subparsers._group_actions[0]
    option = next(a for a in data.choices["bench"]._actions if a.dest == "min_seconds")
    assert option.default == MIN_TIMED_S  # the parser's literal (it imports no torch) is the bench's constant


def test_consumer_rates_are_the_fastest_layouts_clips_per_second():
    shapes = [{"t": 8, "s": 32, "batch": 4, "median_ms": 100.0}, {"t": 8, "s": 32, "batch": 8, "median_ms": 100.0},
              {"t": 4, "s": 16, "batch": 4, "median_ms": None}]
    assert consumer_rates({"shapes": shapes}) == {(8, 32): 80.0}


@pytest.mark.parametrize("shape", [{"t": 8, "s": "32", "batch": 2, "median_ms": 5.0},
                                   {"t": 8, "s": 32, "median_ms": 5.0}, 3])
def test_a_consumer_record_of_another_shape_is_refused_before_any_dataset_opens(tmp_path, capsys, shape):
    record = tmp_path / "profile.json"
    record.write_text(json.dumps({"shapes": [shape]}))
    with pytest.raises(SpecError, match="the consumer record is not a `harness profile --out` record"):
        consumer_rates({"shapes": [shape]})
    # data.root holds no dataset: the refusal comes first
    assert main(["data", "bench", "--consumer", str(record), "data.name=synthetic", f"data.root={tmp_path}"]) == 2
    err = capsys.readouterr().err
    assert f"--consumer {record} is not a `harness profile --out` record" in err and "Traceback" not in err
