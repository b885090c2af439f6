"""A plan whose batches outgrow a small dataset names every phase that does and fixes that work."""

from __future__ import annotations

import re

import pytest

from harness.config import compose
from harness.schedule import build_plan
from harness.schedule.shapes import PlanError


def _refusal(overrides: list[str]) -> str:
    with pytest.raises(PlanError) as err:
        build_plan(compose(overrides))
    return str(err.value)


def _fixes(message: str) -> list[list[str]]:
    """Each fix the message offers, as overrides: the videos it asks for, or the settings it names."""
    offered = message.split("Any one of these fits: ", 1)[1].split("; or ")
    videos = re.search(r"at least (\d+) videos", offered[0])
    return [[f"data.train_videos={videos.group(1)}"],
            *[re.findall(r"(?:multigrid\.\w+|solver\.batch_size)=\w+", fix) for fix in offered[1:]]]


def test_twelve_videos_are_refused_with_every_starved_phase_named_at_once():
    message = _refusal(["data.train_videos=12", "num_gpus=1", "solver.batch_size=1"])
    assert "Raise 'data.train_videos' or lower 'solver.batch_size'" not in message  # batch 1 still needs 16
    assert message.count(" needs ") >= 2 and "at least 16 videos" in message
    assert "multigrid.long_cycle_shapes=" in message


@pytest.mark.parametrize(("videos", "gpus", "batch"), [(12, 1, 1), (12, 1, 2), (12, 2, 2), (5, 1, 4), (40, 4, 8),
                                                      (3, 1, 8), (30, 1, 2)])
def test_every_fix_offered_plans(videos, gpus, batch):
    base = [f"data.train_videos={videos}", f"num_gpus={gpus}", f"solver.batch_size={batch}"]
    message = _refusal(base)
    for fix in _fixes(message):
        assert fix, message
        given = {o.split("=")[0] for o in fix}
        build_plan(compose([o for o in base if o.split("=")[0] not in given] + fix))


def test_a_baseline_too_large_for_the_data_is_named_too():
    message = _refusal(["data.train_videos=3", "num_gpus=1", "solver.batch_size=4", "multigrid.long_cycle=false",
                        "multigrid.short_cycle=false"])
    assert "baseline plan" in message and "solver.batch_size=3" in message
