"""Config files under suites/ edited by hand (a recipe, a suite, a scale): one that is no YAML, no UTF-8, of
another shape or with unknown keys is named with the file and the fix (exit 2), never a traceback, and a scale is
never silently read as another."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.config import _recipe_tree
from harness.paths import suites_dir

SMOKE_SCALE = ("frames_factor: 0.5\ncrop_factor: 0.14\nmax_epoch: 6\nmodel_width: 0.0625\nnum_gpus: 1\n"
               "per_gpu_batch: 2\n")
RUN = "runs:\n  baseline:\n    recipe: k400_slowfast_r50_8x8\n"


@pytest.fixture
def suites(tmp_path, monkeypatch) -> Path:
    """A copy of suites/ that HARNESS_SUITES_DIR points at, so its files can be edited."""
    copy = Path(shutil.copytree(suites_dir(), tmp_path / "suites"))
    monkeypatch.setenv("HARNESS_SUITES_DIR", str(copy))
    _recipe_tree.cache_clear()  # recipes composed from the checkout's suites/ earlier in this process
    yield copy
    _recipe_tree.cache_clear()


RECIPE = "recipe/k400_slowfast_r50_8x8.yaml"
REPRODUCE = ["reproduce", "--suite", "smoke", "--scale", "smoke", "--dry-run"]
REPORT = ["report", "--suite", "smoke", "--out", "{tmp}/reports"]


@pytest.mark.parametrize(("file", "content", "command", "message"), [
    (RECIPE, b"description: [unclosed\n", ["plan"], "a config file is not valid YAML: while parsing a flow sequence"),
    (RECIPE, "# @package _global_\nsolver:\n  base_lr: caf\xe9\n".encode("latin-1"), ["plan"],
     "k400_slowfast_r50_8x8.yaml is not UTF-8 text (invalid continuation byte at byte 42); re-save it as UTF-8."),
    (RECIPE, b"solver:\n  max_epoch: 3\n", ["plan"],
     "k400_slowfast_r50_8x8.yaml lacks its first line '# @package _global_'"),  # was "'recipe' must be a string"
    (RECIPE, b"# @package _global_\nsolver:\n  max_epok: 3\n", ["plan"],
     "k400_slowfast_r50_8x8.yaml: Unknown config key 'solver.max_epok'. Did you mean 'solver.max_epoch'?"),
    (RECIPE, b"7\n", ["plan"], "k400_slowfast_r50_8x8.yaml must hold a mapping of keys (solver:, data:, ...)"),
    ("experiments/smoke.yaml", b"runs: 3\n", REPRODUCE, "smoke.yaml: 'runs' must be a mapping of run names to runs"),
    ("experiments/smoke.yaml", b"runs: 3\n", REPORT, "smoke.yaml: 'runs' must be a mapping of run names to runs"),
    ("experiments/smoke.yaml", b"runs:\n  baseline: 3\n", REPRODUCE,
     "smoke.yaml: run 'baseline' must be a mapping of keys (recipe:, overrides:, ...), got 3."),
    ("experiments/smoke.yaml", RUN.encode() + b"    overrides: solver.max_epoch=3\n", REPRODUCE,
     "run 'baseline': 'overrides' must be a list, e.g. [solver.max_epoch=120], got 'solver.max_epoch=3'."),
    ("experiments/smoke.yaml", RUN.encode() + b"    paper: [1a, baseline]\n", REPORT,
     "run 'baseline': 'paper' must be a list of [table, row] pairs"),
    ("experiments/smoke.yaml", b"description: d\xe9j\xe0\n", ["suites"], "smoke.yaml is not UTF-8 text"),
    ("scales/smoke.yaml", b"description: no sizes\nmax_epoch: 6\n", ["plan", "scale=smoke"],
     "smoke.yaml: a scale that shrinks the recipe sets all of frames_factor, crop_factor, max_epoch, model_width, "
     "num_gpus, per_gpu_batch; frames_factor, crop_factor, model_width, num_gpus, per_gpu_batch missing"),
    ("scales/smoke.yaml", SMOKE_SCALE.replace("6", "abc").encode(), ["plan", "scale=smoke"],
     "smoke.yaml: 'max_epoch' must be a whole number >= 1, got 'abc'."),
    ("scales/smoke.yaml", SMOKE_SCALE.encode() + b"train: 3\n", REPRODUCE,
     "smoke.yaml: 'train' must be a mapping of keys, got 3."),
])
def test_a_config_file_edited_out_of_shape_is_named_with_the_fix(suites, tmp_path, capsys, file, content, command,
                                                                 message):
    (suites / file).write_bytes(content)
    code = main([c.format(tmp=tmp_path) for c in command])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.startswith(f"harness {command[0]}: error: ") and str(suites / file.split("/")[0]) in err
    assert message in err


def test_a_scale_with_every_size_plans_as_the_scale_says(suites, capsys):
    (suites / "scales" / "smoke.yaml").write_text(SMOKE_SCALE.replace("per_gpu_batch: 2", "per_gpu_batch: 3"))
    assert main(["plan", "--json", "scale=smoke"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert (plan["global_batch"], plan["phases"][-1]["s"]) == (3, 31)  # 224 px × 0.14
