"""Recipe composition (harness.config): every recipe composes and plans, cites its source, and the default one."""

import pytest

from harness.config import compose, recipes
from harness.schedule import build_plan
from harness.spec import SpecError


@pytest.mark.parametrize("name", recipes())
def test_every_recipe_composes_and_plans(name):
    spec = compose([f"recipe={name}"])
    assert spec.recipe == name
    for variant in ([], ["multigrid.long_cycle=false", "multigrid.short_cycle=false"]):
        plan = build_plan(compose([f"recipe={name}", *variant]))
        assert plan.iterations > 0


def test_recipe_headers_cite_their_source():
    from harness.paths import suites_dir

    for path in sorted((suites_dir() / "recipe").glob("*.yaml")):
        header = path.read_text().splitlines()[:6]
        assert any("Source:" in line for line in header), f"{path.name} must cite its paper table"
        assert any("Hardware" in line for line in header), f"{path.name} must name its hardware"


def test_default_is_kinetics_slowfast_multigrid():
    spec = compose()
    assert spec.recipe == "k400_slowfast_r50_8x8" and spec.is_multigrid
    assert spec.model.name == "slowfast_r50_8x8"
    with pytest.raises(SpecError, match="Unknown config key"):
        compose(["solver.base_lrr=1"])
