"""The text of a data bench record: whether each loader path keeps up with what the trainer consumes."""

from __future__ import annotations

from harness.measure.data_bench_table import keeping_up


def test_each_loader_path_is_told_at_how_many_shapes_it_keeps_up_with_the_trainer():
    shapes = [{"t": 8, "s": 112, "consumer_clips_per_s": 1500.0}, {"t": 16, "s": 112, "consumer_clips_per_s": 800.0},
              {"t": 32, "s": 224, "consumer_clips_per_s": None}]  # a shape the consumer record lacks
    paths = [{"name": "pyav", "shapes": [{"t": 8, "s": 112, "clips_per_s": 300.0},
                                         {"t": 16, "s": 112, "clips_per_s": 800.0},
                                         {"t": 32, "s": 224, "clips_per_s": 200.0}]},
             {"name": "nvdec", "shapes": [{"t": 8, "s": 112, "clips_per_s": None},  # its workers timed out
                                          {"t": 16, "s": 112, "clips_per_s": 796.0}]},
             {"name": "cache", "shapes": [{"t": 32, "s": 224, "clips_per_s": 900.0}]}]  # nothing to compare
    assert keeping_up({"shapes": shapes, "paths": paths}) == [
        "pyav keeps up at 1 of 2 shapes; short: 8x112 at 20%",  # as much as consumed keeps up
        "nvdec keeps up at 0 of 1 shapes; short: 16x112 at 99%"]  # 99.5%: short, not "100%"
