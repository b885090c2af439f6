"""`scale=NAME` on `harness plan` and `harness train`: applied as `harness reproduce` applies it, or refused."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest

from harness import cli_train
from harness.cli import main
from harness.config import compose
from harness.suite import load_scale, load_suite, resolve_suite


def _fake_prepare(calls: list):
    def prepare(scale):
        calls.append(scale.name)
        return "/data/smoke-synthetic", None
    return prepare


def test_plan_at_smoke_scale_is_smoke_sized(capsys):
    assert main(["plan", "--json", "scale=smoke"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert (plan["num_gpus"], plan["global_batch"], plan["train_videos"]) == (1, 2, 48)
    assert plan["max_epoch"] < 20 and plan["phases"][-1]["s"] == 32


def test_train_at_smoke_scale_trains_the_scaled_recipe_on_the_scales_data(monkeypatch, tmp_path, capsys):
    import harness.reproduce.inputs
    import harness.train.loop

    seen, calls = [], []
    monkeypatch.setattr(harness.reproduce.inputs, "prepare_synthetic", _fake_prepare(calls))
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path / "data"))  # where the prepare lock lives

    def fake_train(spec):
        seen.append(spec)
        raise harness.train.loop.TrainingDiverged("stopped by the test")

    monkeypatch.setattr(harness.train.loop, "train", fake_train)
    assert main(["train", "scale=smoke", f"output_dir={tmp_path}", "data.num_frames=8"]) == 3
    spec = seen[0]
    assert calls == ["smoke"] and spec.data.root == "/data/smoke-synthetic" and spec.data.name == "synthetic"
    assert (spec.scale, spec.num_gpus, spec.solver.batch_size, spec.data.train_videos) == ("smoke", 1, 2, 48)
    assert spec.model.width == 0.0625 and spec.data.crop_size == 32
    assert spec.data.num_frames == 8  # the user's overrides win over the scale's


@pytest.mark.parametrize(("output_dir", "message"), [
    ("output_dir=/proc/harness-test/out", "'output_dir' '/proc/harness-test/out' is not a writable folder"),
    (None, "Set output_dir=DIR"),
])
def test_train_refuses_its_output_dir_before_generating_the_scales_data(monkeypatch, capsys, output_dir, message):
    import harness.reproduce.inputs

    calls: list = []
    monkeypatch.setattr(harness.reproduce.inputs, "prepare_synthetic", _fake_prepare(calls))
    assert main(["train", "scale=smoke", *([output_dir] if output_dir else [])]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert calls == []  # no synthetic data generated for a run that cannot write its results


@pytest.mark.parametrize(("in_the_way", "message"), [
    ("checkpoints", "checkpoints' is not a writable folder (File exists). It is the run's checkpoint folder"),
    ("record.json", "record.json' is a folder; the run writes its record to that file: move it away"),
])
def test_train_refuses_what_stands_where_it_writes_its_checkpoints_or_record(monkeypatch, capsys, tmp_path,
                                                                            in_the_way, message):
    """A file named checkpoints would end the run at its first checkpoint, a folder named record.json after its
    last step with nothing recorded: both are named before any data is generated."""
    import harness.reproduce.inputs

    calls: list = []
    monkeypatch.setattr(harness.reproduce.inputs, "prepare_synthetic", _fake_prepare(calls))
    out = tmp_path / "out"
    out.mkdir()
    if in_the_way == "record.json":
        (out / in_the_way).mkdir()
    else:
        (out / in_the_way).write_text("not a folder")
    assert main(["train", "scale=smoke", f"output_dir={out}"]) == 2
    err = capsys.readouterr().err
    assert message in err and str(out / in_the_way) in err and "Traceback" not in err
    assert calls == []


def test_train_refuses_an_output_dir_another_run_is_writing_in(monkeypatch, capsys, tmp_path):
    """Two runs in one folder would prune and resume each other's checkpoints: while one holds the folder (here
    this test, as a run would), another is refused before any data is generated, and once it is released the
    folder can be taken again."""
    import harness.reproduce.inputs
    from harness.results import output_dir_lock

    calls: list = []
    monkeypatch.setattr(harness.reproduce.inputs, "prepare_synthetic", _fake_prepare(calls))
    out = tmp_path / "out"
    out.mkdir()
    with output_dir_lock(out):
        assert main(["train", "scale=smoke", f"output_dir={out}"]) == 2
    err = capsys.readouterr().err
    assert f"'output_dir' {out} is in use by another training run (pid {os.getpid()} on" in err
    assert "Traceback" not in err and calls == []
    with output_dir_lock(out):  # released: taken again
        pass


def test_ctrl_c_during_training_says_how_to_resume_without_a_traceback(monkeypatch, tmp_path, capsys):
    import harness.reproduce.inputs
    import harness.train.loop

    monkeypatch.setattr(harness.reproduce.inputs, "prepare_synthetic", _fake_prepare([]))
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path / "data"))

    def interrupted(spec):
        raise KeyboardInterrupt

    monkeypatch.setattr(harness.train.loop, "train", interrupted)
    assert main(["train", "scale=smoke", f"output_dir={tmp_path / 'out'}"]) == 130
    err = capsys.readouterr().err
    assert "harness train: interrupted. Run the same command with resume=true" in err and "Traceback" not in err


@pytest.mark.parametrize(("tags", "message"), [
    (["suite=kinetics_ablaton", "variant=baseline"], "Did you mean 'kinetics_ablation'"),
    (["suite=kinetics_ablation", "variant=basline"], "Did you mean 'baseline'"),
    (["suite=kinetics_ablation"], "suite=kinetics_ablation needs variant=NAME"),
])
def test_train_refuses_a_misspelt_suite_run_before_any_work(monkeypatch, capsys, tmp_path, tags, message):
    """Its record would be filed under results/<suite>/ where neither reproduce nor report looks."""
    import harness.reproduce.inputs

    calls: list = []
    monkeypatch.setattr(harness.reproduce.inputs, "prepare_synthetic", _fake_prepare(calls))
    assert main(["train", "scale=smoke", f"output_dir={tmp_path}", *tags]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert calls == []


@pytest.mark.parametrize(("argv", "message"), [
    (["--suite", "smoke", "--variants", "multigrid", "multigrd"],
     "--variants: suite smoke has no variant 'multigrd'. Did you mean 'multigrid'? Its variants: baseline, multigrid."),
    (["--suite", "kinetics_1gpu", "--variants", "baseline"],
     "--variants: none of them is timed in suite kinetics_1gpu at scale smoke (baseline needs model.pretrained"),
])
def test_scaling_names_variants_it_cannot_time_before_any_step(argv, message, tmp_path, capsys):
    out = tmp_path / "scaling.json"
    assert main(["scaling", "--scale", "smoke", "--repeats", "1", "--out", str(out), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and not out.exists()


@pytest.mark.parametrize("argv", [
    ["scaling", "--suite", "smoke", "--scale", "smoke", "--warmup", "0", "--repeats", "1"],
    ["profile", "scale=smoke", "--warmup", "0", "--repeats", "1"],
])
def test_measurements_refuse_an_out_they_could_not_write_before_timing(argv, tmp_path, capsys):
    """Written only after every shape is timed: a folder there, or a file where its folder should be, lost it all."""
    assert main([*argv, "--out", str(tmp_path)]) == 2
    assert f"'--out' '{tmp_path}' is a folder; give the path of the file to write in it" in capsys.readouterr().err
    (tmp_path / "file").write_text("")
    assert main([*argv, "--out", str(tmp_path / "file" / "record.json")]) == 2
    err = capsys.readouterr().err
    assert f"'--out' '{tmp_path / 'file'}' is not a writable folder" in err and "Traceback" not in err


def test_reproduces_train_commands_are_unchanged_by_their_scale():
    """reproduce passes scale=smoke with every scaled key already set: applying the scale again changes nothing."""
    suite = load_suite("smoke")
    for run in resolve_suite(suite, load_scale("smoke"), ["num_gpus=2"], "/data/synthetic"):
        overrides = [*run.overrides, "output_dir=/tmp/x"]
        calls: list = []
        assert compose(cli_train.scaled_overrides(overrides, _fake_prepare(calls))) == compose(overrides)
        assert calls == []  # data.root is given: nothing to generate


@pytest.mark.parametrize(("overrides", "message"), [
    (["scale=smok"], "Did you mean 'smoke'"),
    (["scale=smoke", "solver.max_epoch=12"], "For a smoke-sized run drop solver.max_epoch=; to choose it, also set "
                                             "solver.steps (or train longer or shorter at this scale with "
                                             "baseline.epoch_factor=F"),
    (["scale=smoke", "solver.batch_size=4"], "the scale sets solver.batch_size=2 and solver.base_lr="),
    (["scale=proxy", "data.crop_size=64"], "the scale sets data.crop_size=112 and data.jitter="),
])
def test_unsound_or_unknown_scales_are_refused_with_the_fix(overrides, message, capsys, tmp_path):
    for command in ("plan", "train"):
        assert main([command, *overrides, f"output_dir={tmp_path / 'never'}"]) == 2
        assert message in capsys.readouterr().err


def test_scaled_keys_given_together_are_accepted():
    spec = compose(cli_train.scaled_overrides(["scale=smoke", "solver.max_epoch=12", "solver.steps=[0,8,10]"]))
    assert (spec.solver.max_epoch, spec.solver.steps, spec.num_gpus) == (12, (0, 8, 10), 1)
    assert compose(cli_train.scaled_overrides(["scale=paper"])) == compose([])


@pytest.mark.parametrize("repeated", ["solver.batch_size=2", "data.crop_size=32"])
def test_repeating_the_scales_own_value_is_accepted(repeated):
    # It was refused as if it changed what the scale derives from it.
    assert compose(cli_train.scaled_overrides(["scale=smoke", repeated])) == compose(
        cli_train.scaled_overrides(["scale=smoke"]))


def test_the_readmes_first_train_example_is_smoke_sized(capsys):
    """The Quick start's first `harness train` command is a new user's first run: about 20 s on 2 idle CPU cores,
    synthetic data included (38 iterations of the 1/16-width recipe at 32 px). Its size is guarded here, its time
    is not (CI machines vary): the recipe at another scale would run for hours."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    line = next(x for x in quick_start.splitlines() if x.strip().startswith("harness train"))
    argv = shlex.split(line, comments=True)[2:]
    assert "scale=smoke" in argv
    spec = compose(cli_train.scaled_overrides(argv, _fake_prepare([])))
    assert (spec.num_gpus, spec.model.width, spec.data.crop_size) == (1, 0.0625, 32)
    assert main(["plan", "--json", *argv]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["iterations"] <= 60 and plan["forward_cost"] <= 100  # 38 and 77 baseline clips of 16×32²


def test_profile_and_models_check_apply_the_scale(monkeypatch):
    """Every command that plans a run applies scale= as `harness train` does, instead of recording it unused."""
    import harness.measure.predict
    import harness.models.check

    seen = []

    class Seen(Exception):
        pass

    def stop(spec_or_model, *args, **kwargs):
        seen.append(spec_or_model if not args else args[0])
        raise Seen

    monkeypatch.setattr(harness.measure.predict, "profile_plan", stop)
    monkeypatch.setattr(harness.models.check, "check_shapes", stop)
    for argv in (["profile", "scale=smoke", "--json"], ["models", "check", "i3d_r50", "scale=smoke", "--json"]):
        with pytest.raises(Seen):
            main(argv)
    spec, shapes = seen
    assert (spec.scale, spec.model.width, spec.data.crop_size, spec.data.num_frames) == ("smoke", 0.0625, 32, 16)
    assert max(s for _, s in shapes) == 32  # the smoke scale's planned shapes, not the recipe's 224 px


def test_profile_takes_scale_as_a_flag_without_a_suite_too(monkeypatch, capsys):
    """`harness profile --scale smoke` profiles the recipe at the smoke scale (it used to be read with --suite only
    and left the recipe at paper scale: minutes a step on a CPU), as `scale=smoke` does; the two must agree."""
    import harness.measure.predict

    seen = []

    class Seen(Exception):
        pass

    def stop(spec, *args, **kwargs):
        seen.append(spec)
        raise Seen

    monkeypatch.setattr(harness.measure.predict, "profile_plan", stop)
    with pytest.raises(Seen):
        main(["profile", "--scale", "smoke", "--json"])
    assert (seen[0].scale, seen[0].model.width) == ("smoke", 0.0625)
    assert main(["profile", "--scale", "smoke", "scale=proxy"]) == 2
    assert "--scale smoke and the override scale=proxy disagree" in capsys.readouterr().err
    assert len(seen) == 1  # refused before any timing
