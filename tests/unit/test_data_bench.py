"""How `harness data bench` batches a timed loader pass (harness.measure.data_bench.loader_batches), and reads
the --consumer record."""

from __future__ import annotations

import json

import pytest

from harness.cli import build_parser, main
from harness.measure.data_bench import MIN_TIMED_S, consumer_rates, loader_batches
from harness.spec import SpecError


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
