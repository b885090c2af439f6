"""The plan's BN layout: sub-batch splits follow the long cycle, synchronised over GPUs where a GPU holds few clips."""

from harness.schedule import build_plan

from .helpers import spec


def test_bn_layout_follows_long_cycle():
    plan = build_plan(spec())
    assert [p.bn_splits for p in plan.phases[:4]] == [8, 4, 2, 1]
    # SSv2 (2 clips per GPU at the base shape): BN synchronised over 4 GPUs there.
    ssv2 = build_plan(spec(**{"solver.steps": [0, 14, 18], "solver.max_epoch": 22, "data.num_frames": 64,
                              "solver.batch_size": 16, "solver.warmup_epochs": 0.19}))
    assert [(p.bn_splits, p.bn_sync) for p in ssv2.phases[:4]] == [(2, 1), (1, 1), (1, 2), (1, 4)]
    one_gpu = build_plan(spec(**{"num_gpus": 1, "solver.batch_size": 2, "data.train_videos": 10_000}))
    assert one_gpu.phases[-1].bn_sync == 1  # nothing to synchronise with
