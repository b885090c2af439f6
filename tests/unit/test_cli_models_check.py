"""`harness models check`: small shapes by default on a CPU, the scale named, each shape's time as it goes, and a
user's factory that it cannot call named, with what it must accept."""

from __future__ import annotations

import json

import pytest

from harness.cli import main
from harness.config import compose
from harness.suite import load_scale, scale_overrides

FACTORY = "tests.unit.user_models:tiny_c3d"


def test_on_a_cpu_the_check_takes_the_smoke_scales_shapes_and_says_so(capsys):
    assert main(["models", "check", FACTORY, "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "scale=smoke" in out.splitlines()[0] and "default on a CPU" in out.splitlines()[0]
    shape_lines = [line for line in out.splitlines() if "frames ×" in line]
    assert shape_lines and all(line.rstrip().endswith("ok") and "s  ok" in line for line in shape_lines)
    assert max(int(line.split("×")[1].split("px")[0]) for line in shape_lines) == 32  # not the recipe's 224 px


def test_a_given_scale_is_kept_and_named_in_json(capsys):
    assert main(["models", "check", FACTORY, "scale=smoke", "--device", "cpu", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["scale"], result["device"], result["failed"]) == ("smoke", "cpu", 0)


def test_a_torchvision_model_runs_at_its_own_width_at_smoke_scale(capsys):
    spec = compose(scale_overrides(compose(["model.name=r3d_18"]), load_scale("smoke"), None, None))
    assert spec.model.width == 1.0  # torchvision's models take no width: the scale used to set 1/16 and fail
    assert compose(scale_overrides(compose([]), load_scale("smoke"), None, None)).model.width == 0.0625
    assert main(["models", "check", "r3d_18", "--device", "cpu", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["failed"] == 0


@pytest.mark.parametrize(("factory", "message"), [
    ("without_num_classes", "cannot be called as without_num_classes(num_classes=4, dropout=0.5, width=0.0625): "
                            "got an unexpected keyword argument 'num_classes'"),
    ("needs_depth", "missing a required argument: 'depth'"),
    ("NOT_A_FACTORY", "is not callable (a int)"),
])
def test_models_check_names_a_user_factory_the_harness_cannot_call(factory, message, capsys):
    code = main(["models", "check", f"tests.unit.user_models:{factory}", "scale=smoke"])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
    assert "must accept the keyword arguments num_classes, dropout and width" in err or "not callable" in err


def test_models_check_names_a_target_without_its_factory(capsys):
    assert main(["models", "check", "tests.unit.user_models:", "scale=smoke"]) == 2
    err = capsys.readouterr().err  # was read as the YAML mapping {'tests.unit.user_models': None}
    assert "'model.target' must look like 'pkg.module:factory', got 'tests.unit.user_models:'" in err
