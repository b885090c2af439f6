"""A user's model (model.target) is named as the model that ran: in the record, the profile and the progress bar."""

from __future__ import annotations

import json

from harness.cli import main
from harness.models import is_paper_model
from harness.spec import ModelSpec

from .conftest import smoke_overrides

FACTORY = "tests.unit.user_models:tiny_c3d"


def test_only_the_papers_registered_models_count_as_the_papers():
    assert is_paper_model(ModelSpec())
    assert not is_paper_model(ModelSpec(target=FACTORY))  # the recipe's model.name is still slowfast_r50_8x8
    assert not is_paper_model(ModelSpec(name="r2plus1d_18"))  # a torchvision model: no paper row describes it


def test_a_user_models_run_names_it_in_record_and_progress_bar(synth_root, tmp_path, capsys):
    out = tmp_path / "run"
    overrides = [o for o in smoke_overrides(synth_root, out) if not o.startswith("model.name=")]
    assert main(["train", *overrides, f"model.target='{FACTORY}'", "train.log_every=1"]) == 0
    record = json.loads((out / "record.json").read_text())
    assert record["plan"]["model"] == FACTORY
    assert record["plan"]["paper_model"] is False
    assert f"{FACTORY} multigrid" in capsys.readouterr().err
    assert "slowfast" not in record["plan"]["model"]


def test_a_paper_models_run_is_marked_as_the_papers(synth_root, tmp_path):
    out = tmp_path / "run"
    assert main(["train", *smoke_overrides(synth_root, out)]) == 0
    plan = json.loads((out / "record.json").read_text())["plan"]
    assert plan["model"] == "i3d_r50" and plan["paper_model"] is True


def test_the_profile_names_the_user_model(capsys):
    argv = ["profile", "--json", "--repeats", "1", "--warmup", "0", "scale=smoke", f"model.target='{FACTORY}'"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["model"] == FACTORY
