"""Figures 2 and 3 and the data-wait chart: PNG bytes, long plans sampled, the same bytes every time."""

from __future__ import annotations

from harness.report.figures import MAX_POINTS, data_wait_figure, schedule_figure, schedule_series, tradeoff_figure
from harness.spec import RunSpec

from .report_records import make_record

PNG = b"\x89PNG\r\n\x1a\n"


def test_figures_are_png():
    records = [make_record("baseline", kind="baseline", train_s=100.0), make_record("multigrid", train_s=20.0)]
    series = {r["variant"]: schedule_series(r) for r in records}
    assert len(series["multigrid"]) == 20 and len(series["baseline"]) == 64  # every iteration of short plans
    assert series["multigrid"][0]["per_gpu_batch"] > series["baseline"][0]["per_gpu_batch"]
    assert schedule_figure(series).startswith(PNG)
    points = [{"method": "baseline", "epochs_x": 1.0, "train_s": 100.0, "top1": 40.0},
              {"method": "multigrid", "epochs_x": 1.5, "train_s": 20.0, "top1": 41.0}]
    paper = [{"method": "multigrid", "epochs_x": 1.5, "speedup": 4.5, "top1": 76.4}]
    assert tradeoff_figure(points, paper).startswith(PNG)
    assert tradeoff_figure([], []) is None
    assert data_wait_figure(records[0]["measured"]["phases"] and [
        {"variant": "baseline", "phase": 0, "data_wait_share": 0.25}]).startswith(PNG)


def test_long_plans_are_sampled():
    record = {"spec": RunSpec().to_dict()}  # the paper's default recipe: hundreds of thousands of iterations
    series = schedule_series(record)
    assert len(series) <= MAX_POINTS + 1
    assert series[-1]["iteration"] > 100_000 and series[0]["iteration"] == 0


def test_data_wait_figure_is_the_same_bytes_every_time_and_leaves_numpys_rng_alone():
    import numpy as np

    rows = [{"variant": "a", "phase": "all", "data_wait_share": 0.1}] + \
        [{"variant": "a", "phase": str(i), "data_wait_share": 0.02 * i} for i in range(6)]
    np.random.seed(5)
    expected_next = np.random.rand()
    np.random.seed(5)
    first, second = data_wait_figure(rows), data_wait_figure(rows)
    assert first == second  # seaborn's strip jitter would otherwise move the dots
    assert np.random.rand() == expected_next
