"""The short-cycle batch sampler: Plan-exact batch counts and shapes, determinism, rank agreement, resume."""

from __future__ import annotations

import numpy as np
import pytest

from harness.data.sampler import (
    ShortCycleBatchSampler,
    check_num_classes,
    check_train_videos,
    first_iteration_of_epoch,
    rank_indices,
)
from harness.schedule import build_plan, iteration
from harness.spec import SpecError, spec_from_dict


def plan_for(train_videos: int = 50, num_gpus: int = 2, batch: int = 2, **multigrid):
    return build_plan(spec_from_dict({
        "data": {"train_videos": train_videos, "num_frames": 8, "crop_size": 32, "jitter": [36, 48]},
        "num_gpus": num_gpus, "multigrid": multigrid,
        "solver": {"batch_size": batch, "steps": [0, 2, 4], "max_epoch": 6, "warmup_epochs": 0}}))


def epoch_batches(plan, epoch, rank=0, world=2, seed=0, start=None, size=None):
    return list(ShortCycleBatchSampler(plan, size or plan.spec.data.train_videos, rank=rank, world_size=world,
                                       seed=seed, epoch=epoch, start_iteration=start))


@pytest.mark.parametrize("kw", [{}, {"short_cycle": False}, {"long_cycle": False},
                                {"long_cycle": False, "short_cycle": False}])
def test_batches_follow_the_plan_iteration_by_iteration(kw):
    plan = plan_for(**kw)
    seen = 0
    for epoch in range(plan.max_epoch):
        first = first_iteration_of_epoch(plan, epoch)
        assert first == seen
        batches = epoch_batches(plan, epoch)
        phase = plan.phase_at_epoch(epoch)
        assert len(batches) == phase.iterations_per_epoch
        for k, batch in enumerate(batches):
            it = iteration(plan, first + k)
            assert len(batch) == it.per_gpu_batch
            assert {(r.t, r.s, r.stride_range, r.jitter_range) for r in batch} == {
                (it.t, it.s, it.stride_range, it.jitter_range)}
        seen += len(batches)
    assert seen == plan.iterations


def test_single_process_plan_works():  # the reference crashes with one GPU (PySlowFast multigrid_helper.py)
    plan = plan_for(train_videos=30, num_gpus=1, batch=1)
    batches = epoch_batches(plan, 0, world=1)
    assert len(batches) == plan.phases[0].iterations_per_epoch > 0


def test_deterministic_from_seed_and_epoch():
    plan = plan_for()
    assert epoch_batches(plan, 3) == epoch_batches(plan, 3)
    assert epoch_batches(plan, 3) != epoch_batches(plan, 3, seed=1)
    idx = lambda bs: [r.index for b in bs for r in b]  # noqa: E731
    assert idx(epoch_batches(plan, 4)) != idx(epoch_batches(plan, 5))


def test_ranks_agree_on_shapes_and_split_the_padded_permutation():
    plan = plan_for(train_videos=51, num_gpus=3, batch=3)
    for epoch in (0, plan.max_epoch - 1):
        per_rank = [epoch_batches(plan, epoch, rank=r, world=3) for r in range(3)]
        assert len({len(b) for b in per_rank}) == 1
        for step in zip(*per_rank):
            assert len({(b[0].t, b[0].s, len(b)) for b in step}) == 1
        shares = [rank_indices(51, 0, epoch, r, 3) for r in range(3)]
        assert sorted(np.concatenate(shares).tolist()) == list(range(51))  # 51 = 3 × 17: no padding needed
    padded = [rank_indices(50, 0, 0, r, 3) for r in range(3)]
    assert {len(p) for p in padded} == {17} and set(np.concatenate(padded).tolist()) == set(range(50))


def test_resume_mid_epoch_gives_the_rest_of_the_epoch():
    plan = plan_for()
    epoch = plan.max_epoch - 1
    full = epoch_batches(plan, epoch)
    first = first_iteration_of_epoch(plan, epoch)
    for k in (0, 1, len(full) // 2, len(full)):
        assert epoch_batches(plan, epoch, start=first + k) == full[k:]
    with pytest.raises(ValueError, match="outside epoch"):
        epoch_batches(plan, epoch, start=first - 1)


@pytest.mark.parametrize("kw", [{}, {"long_cycle": False, "short_cycle": False}])
def test_one_pass_to_the_end_serves_every_epochs_batches_in_order(kw):
    """to_end=True (what the trainer uses, so workers prefetch across epochs) = the epochs one after another."""
    plan = plan_for(**kw)
    per_epoch = [batch for e in range(plan.max_epoch) for batch in epoch_batches(plan, e)]
    assert len(per_epoch) == plan.iterations
    for start in (0, 1, first_iteration_of_epoch(plan, 2) + 1, plan.iterations - 1, plan.iterations):
        epoch = iteration(plan, min(start, plan.iterations - 1)).epoch
        sampler = ShortCycleBatchSampler(plan, 50, world_size=2, epoch=epoch, start_iteration=start, to_end=True)
        assert len(sampler) == plan.iterations - start
        assert list(sampler) == per_epoch[start:]


def test_request_keys_are_unique_within_an_epoch():
    plan = plan_for()
    keys = [r.key for r in (r for b in epoch_batches(plan, 0) for r in b)]
    assert len(keys) == len(set(keys))


def test_mismatched_dataset_size_world_and_classes_name_the_key():
    plan = plan_for()
    with pytest.raises(SpecError, match=r"data\.train_videos=49"):
        epoch_batches(plan, 0, size=49)
    with pytest.raises(SpecError, match=r"num_gpus=4"):
        ShortCycleBatchSampler(plan, 50, world_size=4)
    with pytest.raises(SpecError, match=r"data\.train_videos=7"):
        check_train_videos(plan.spec, 7, "/data")
    with pytest.raises(SpecError, match=r"data\.num_classes=6"):
        check_num_classes(plan.spec, 6)
    with pytest.raises(ValueError, match="outside the plan"):
        ShortCycleBatchSampler(plan, 50, world_size=2, epoch=plan.max_epoch)
