"""Schedule properties (hypothesis): plans of random valid recipes, iterations per epoch, the iteration view."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.schedule import PlanError, build_plan, iteration
from harness.schedule.iterations import cycle_counts, iterations_per_epoch
from harness.spec import SpecError

from .helpers import spec

random_recipe = st.fixed_dictionaries({
    "stage_lengths": st.lists(st.integers(1, 60), min_size=1, max_size=4),
    "tail": st.integers(1, 40),
    "t0": st.integers(1, 96),
    "s0": st.integers(8, 400),
    "epoch_factor": st.floats(0.1, 4.0),
    "long": st.booleans(),
    "short": st.booleans(),
    "num_gpus": st.sampled_from([1, 2, 4, 8]),
    "per_gpu": st.integers(1, 16),
    "videos": st.integers(1, 50_000),
    "long_shapes": st.integers(1, 4),
    "short_shapes": st.integers(1, 3),
    "sf": st.floats(0.3, 1.0),
})


def _spec(r):
    steps = [0]
    for n in r["stage_lengths"]:
        steps.append(steps[-1] + n)
    return spec(**{
        "solver.steps": steps, "solver.max_epoch": steps[-1] + r["tail"], "solver.warmup_epochs": 0.0,
        "data.num_frames": r["t0"], "data.crop_size": r["s0"], "multigrid.epoch_factor": r["epoch_factor"],
        "multigrid.long_cycle": r["long"], "multigrid.short_cycle": r["short"], "num_gpus": r["num_gpus"],
        "solver.batch_size": r["per_gpu"] * r["num_gpus"], "data.train_videos": r["videos"],
        "multigrid.long_cycle_shapes": r["long_shapes"], "multigrid.short_cycle_shapes": r["short_shapes"],
        "multigrid.long_cycle_factors": [[0.25, r["sf"]], [0.5, r["sf"]], [0.5, 1.0], [1.0, 1.0]],
    })


@settings(max_examples=400, deadline=None)
@given(random_recipe)
def test_random_valid_recipes_plan_or_explain(r):
    """A valid recipe gives a consistent plan or a PlanError naming a key; never another exception."""
    try:
        plan = build_plan(_spec(r))
    except PlanError as err:
        assert "'" in str(err), "the error must name the key to change"
        return
    bounds = [p.start_epoch for p in plan.phases] + [plan.max_epoch]
    assert bounds == sorted(bounds), "boundaries are monotone"
    for a, b in zip(plan.phases, plan.phases[1:]):
        assert a.end_epoch == b.start_epoch, "phases are contiguous"
    assert plan.phases[-1].end_epoch == plan.max_epoch
    assert plan.iterations == sum(p.iterations for p in plan.phases) > 0
    for p in plan.phases:
        assert all(b >= 1 for b in p.per_gpu_batches)
        assert p.bn_splits >= 1 and p.bn_sync >= 1
        assert p.per_gpu_batches[-1] % p.bn_splits == 0
    last = iteration(plan, plan.iterations - 1)
    assert last.epoch == plan.phases[last.phase].end_epoch - 1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 300), min_size=1, max_size=4), st.integers(2, 160),
       st.sampled_from([8, 16, 32, 64]), st.integers(1, 3))
def test_equal_iterations_per_long_shape_within_a_stage(stage_lengths, tail, t0, short_shapes):
    steps = [0]
    for n in stage_lengths:
        steps.append(steps[-1] + n)
    plan = build_plan(spec(**{"solver.steps": steps, "solver.max_epoch": steps[-1] + tail, "data.num_frames": t0,
                              "solver.warmup_epochs": 0.0, "data.train_videos": 10**7,
                              "multigrid.short_cycle_shapes": short_shapes}))
    for stage in range(len(steps) - 1):
        phases = [p for p in plan.phases if p.stage == stage]
        assert len(phases) == 4
        # Epoch boundaries are rounded, so each phase is within one epoch of its exact length: compare
        # iterations with one epoch of slack per phase.
        iters = [p.iterations for p in phases]
        slack = max(p.iterations_per_epoch for p in phases) * 2
        assert max(iters) - min(iters) <= slack


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([8, 16, 32, 64]), st.integers(64, 320), st.sampled_from([1, 2, 8]))
def test_flops_per_iteration_near_constant(t0, s0, per_gpu):
    """Eq. (1): every shape's per-GPU clips × t × s² stays close to the baseline's."""
    plan = build_plan(spec(**{"data.num_frames": t0, "data.crop_size": s0, "num_gpus": 1,
                              "solver.batch_size": per_gpu, "data.train_videos": 10**6}))
    reference = per_gpu * t0 * s0 * s0
    for p in plan.phases:
        for shape, batch in zip(p.cycle, p.per_gpu_batches):
            assert batch * shape.t * shape.s**2 == pytest.approx(reference, rel=0.12)


def _simulated_epoch(samples, batches):
    """What a drop-last sampler that cycles through `batches` yields in one epoch, batch by batch."""
    out, used, j = [], 0, 0
    while used + batches[j % len(batches)] <= samples:
        out.append(j % len(batches))
        used += batches[j % len(batches)]
        j += 1
    return out


@given(st.integers(0, 5000), st.lists(st.integers(1, 300), min_size=1, max_size=3))
def test_iterations_per_epoch_matches_a_simulated_sampler(samples, batches):
    sim = _simulated_epoch(samples, batches)
    assert iterations_per_epoch(samples, batches) == len(sim)
    assert cycle_counts(samples, batches) == [sim.count(j) for j in range(len(batches))]


def test_iteration_view_matches_enumeration():
    plan = build_plan(spec(**{"solver.steps": [0, 6, 10], "solver.max_epoch": 13, "solver.warmup_epochs": 1.0,
                              "num_gpus": 2, "solver.batch_size": 4, "data.train_videos": 301,
                              "data.num_frames": 8, "data.crop_size": 64}))
    expected = []
    for p in plan.phases:
        for epoch in range(p.start_epoch, p.end_epoch):
            for step in range(p.iterations_per_epoch):
                j = step % len(p.cycle)
                expected.append((p.index, epoch, step, p.cycle[j].t, p.cycle[j].s, p.per_gpu_batches[j]))
    assert len(expected) == plan.iterations
    got = [iteration(plan, i) for i in range(plan.iterations)]
    assert [(g.phase, g.epoch, g.step_in_epoch, g.t, g.s, g.per_gpu_batch) for g in got] == expected
    with pytest.raises(IndexError):
        iteration(plan, plan.iterations)


def test_bad_recipe_is_a_spec_error_not_a_crash():
    with pytest.raises(SpecError):
        _spec({"stage_lengths": [3], "tail": 1, "t0": 0, "s0": 8, "epoch_factor": 1.0, "long": True, "short": True,
               "num_gpus": 1, "per_gpu": 1, "videos": 10, "long_shapes": 1, "short_shapes": 1, "sf": 1.0})
