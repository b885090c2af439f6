"""multigrid.batch_rule: the paper's rule (tokens, Eq. 1) and the counted-FLOPs rule (flops), its data and its plans."""

import dataclasses

import pytest

from harness.cli import main
from harness.config import compose
from harness.schedule import PlanError, build_plan
from harness.schedule.batch_rules import rule_comparison, under_rule
from harness.schedule.shapes import costed_shapes
from harness.spec import RunSpec, SpecError, spec_from_dict


def _with_costs(spec: RunSpec, cost) -> RunSpec:
    """`spec` under the flops rule, every shape it reads costing cost(t, s) (relative to the baseline clip)."""
    flops = under_rule(spec, "flops")
    base = (spec.data.num_frames, spec.data.crop_size)
    costs = tuple((t, s, cost(t, s)) for t, s in costed_shapes(flops) if (t, s) != base)
    return flops.replace(multigrid=dataclasses.replace(flops.multigrid, shape_costs=costs))


def _tokens(t: int, s: int) -> float:
    return t * s * s / (32 * 224 * 224)


@pytest.mark.parametrize("overrides", [{}, {"multigrid": {"short_cycle": False}}, {"multigrid": {"long_cycle": False}},
                                       {"multigrid": {"long_cycle_shapes": 2}}])
def test_costs_proportional_to_tokens_give_the_papers_plan(overrides):
    spec = spec_from_dict(overrides)
    assert build_plan(_with_costs(spec, _tokens)).phases == build_plan(spec).phases


def test_attention_like_costs_keep_each_iterations_counted_cost_near_the_baselines():
    spec = _with_costs(RunSpec(), lambda t, s: _tokens(t, s) ** 1.3)  # cost falls faster than tokens at coarse shapes
    rules = rule_comparison(spec)
    coarse = rules["shapes"][0]
    assert (coarse["t"], coarse["s"]) == (8, 112)
    assert coarse["flops_batch"] > coarse["tokens_batch"]
    assert coarse["tokens_iteration_cost"] < 0.8  # Eq. 1 underspends where attention is cheap
    for row in rules["shapes"]:
        assert row["flops_iteration_cost"] == pytest.approx(1.0, abs=0.35)  # per-shape rounding of the batches
    assert rules["flops_iterations"] < rules["tokens_iterations"]


def test_a_missing_cost_is_named_and_the_rules_are_checked():
    spec = _with_costs(RunSpec(), _tokens)
    dropped = spec.replace(multigrid=dataclasses.replace(spec.multigrid, shape_costs=spec.multigrid.shape_costs[1:]))
    t, s, _ = spec.multigrid.shape_costs[0]
    with pytest.raises(PlanError, match=rf"cost of a {t}×{s}² clip, which 'multigrid.shape_costs' does not give"):
        build_plan(dropped)
    with pytest.raises(SpecError, match="Did you mean 'flops'"):
        spec_from_dict({"multigrid": {"batch_rule": "flop"}})
    with pytest.raises(SpecError, match="read by multigrid.batch_rule=flops only"):
        spec_from_dict({"multigrid": {"shape_costs": [[8, 112, 0.1]]}})
    with pytest.raises(SpecError, match="gives a shape twice"):
        spec_from_dict({"multigrid": {"batch_rule": "flops", "shape_costs": [[8, 112, 0.1], [8, 112, 0.2]]}})


def test_composing_the_mvit_recipe_counts_the_costs_it_is_not_given_and_plan_shows_both_rules(capsys):
    small = ["recipe=k400_mvit_v2_s", "data.num_frames=4", "data.crop_size=32"]  # tiny shapes: quick counts
    shapes = [shape for shape in costed_shapes(compose(small, count_shape_costs=False)) if shape != (4, 32)]
    given = [[t, s, 0.5] for t, s in shapes[1:]]  # all but one given (each count takes seconds of CPU)
    small.append(f"multigrid.shape_costs={given}".replace(" ", ""))
    spec = compose(small)
    assert spec.multigrid.batch_rule == "flops"
    costs = {(t, s): cost for t, s, cost in spec.multigrid.shape_costs}
    assert set(costs) == set(shapes)
    assert all(costs[(t, s)] == 0.5 for t, s, _ in given)  # given costs are kept
    assert 0 < costs[shapes[0]] < 1  # counted: a smaller clip costs less
    assert compose([*small[:-1], "multigrid.batch_rule=tokens"]).multigrid.shape_costs == ()
    assert main(["plan", *small]) == 0
    out = capsys.readouterr().out
    assert "Batch rules (this plan: flops)" in out and "counted: multigrid.shape_costs" in out
