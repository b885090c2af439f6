"""Suites at their scales: every suite composes at every scale, the paper scale is the exact recipe, and a
misspelt suite or scale is named."""

from __future__ import annotations

import pytest

from harness.schedule import build_plan
from harness.spec import SpecError
from harness.suite import list_scales, list_suites, load_scale, load_suite, resolve_suite


@pytest.mark.parametrize("scale", ["smoke", "proxy", "paper"])
@pytest.mark.parametrize("name", list_suites())
def test_every_suite_composes_at_every_scale(name, scale):
    suite = load_suite(name)
    runs = resolve_suite(suite, load_scale(scale), [], data_root="/data/synthetic" if scale != "paper" else None)
    assert [r.run.variant for r in runs] == [r.variant for r in suite.runs]
    for r in runs:
        if r.spec is None:
            assert "model.pretrained" in r.skip_reason
            continue
        assert r.spec.suite == name and r.spec.variant == r.run.variant and r.spec.scale == scale
        plan = build_plan(r.spec)
        assert plan.iterations > 0
        if r.run.match_iterations_of:  # Table 1a / "Baseline 1/k": as many iterations as the matched run
            target = next(x for x in runs if x.run.variant == r.run.match_iterations_of)
            # Within one epoch: at smoke scale an epoch is a large share of the run.
            slack = max(p.iterations_per_epoch for p in plan.phases)
            assert abs(plan.iterations - build_plan(target.spec).iterations) <= slack


def test_paper_scale_is_the_exact_recipe():
    runs = {r.run.variant: r for r in resolve_suite(load_suite("kinetics_ablation"), load_scale("paper"), [])}
    plan = build_plan(runs["multigrid"].spec)
    assert plan.lr_steps == [0, 73, 110, 142, 158, 205, 228, 248, 259, 291, 308, 322, 329, 343]
    assert build_plan(runs["baseline"].spec).max_epoch == 239


def test_suite_errors_are_clear():
    with pytest.raises(SpecError, match="Did you mean 'kinetics_ablation'"):
        load_suite("kinetics_ablaton")
    with pytest.raises(SpecError, match="Did you mean 'proxy'"):
        load_scale("proxi")
    assert set(list_scales()) == {"smoke", "proxy", "paper"}
