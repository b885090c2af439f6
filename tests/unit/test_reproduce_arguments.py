"""`harness reproduce` refuses arguments that would train the wrong runs, before any data or run."""

import pytest

import harness.reproduce
from harness.cli import main


@pytest.mark.parametrize(("arguments", "message"), [
    (["--seeds", "0", "1", "0"], "--seeds lists 0 more than once; give each seed once."),
    (["--seeds", "-1"], "'seed' must be in [0, 2**32), got -1."),
    (["--dry-run", "--launcher", "slurm", "--nodes", "0"], "--nodes must be >= 1, got 0."),
    (["--gpus", "-1"], "--gpus must be >= 0"),
    (["scale=proxy"], "scale=proxy: reproduce sets scale for every run; give the scale as --scale NAME."),
    (["variant=baseline"], "pick runs with --only VARIANT"),
    (["output_dir=/tmp/elsewhere"], "reproduce sets output_dir for every run"),
])
def test_unsound_arguments_are_refused_before_any_run(monkeypatch, tmp_path, capsys, arguments, message):
    def no_run(*args, **kwargs):
        raise AssertionError("a run started")

    monkeypatch.setattr(harness.reproduce, "_run_one", no_run)
    monkeypatch.setattr(harness.reproduce, "suite_data", lambda *a, **k: ("/data/never-made", None))
    code = main(["reproduce", "--suite", "smoke", "--scale", "smoke", "--results", str(tmp_path), "--no-report",
                 *arguments])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err


@pytest.mark.parametrize(("arguments", "message"), [
    (["data.root={tmp}/nowhere"], "'data.root' '{tmp}/nowhere' is not a directory."),
    (["data.root={data}", "data.num_classes=3"], "data.num_classes=3, but the annotations at {data} define 2 classes"),
    (["data.root={data}", "data.num_classes=2", "model.pretrained={tmp}/wide.pt"],
     "'model.pretrained': {tmp}/wide.pt holds a ResNet-50 with 16 stem channels, but the model's stem has 4"),
])
def test_inputs_every_run_would_stop_on_are_named_before_any_run(monkeypatch, tmp_path, capsys, arguments, message):
    """Each run stopped on them in its own log, and the suite ended saying it holds no run record."""
    import torch

    from harness.models.resnet2d import backbone_state, resnet50_2d

    def no_run(*args, **kwargs):
        raise AssertionError("a run started")

    data = tmp_path / "data"
    data.mkdir()
    (data / "train.csv").write_text("a.mp4 0\nb.mp4 1\n")  # the videos are not opened before the runs
    (data / "classes.txt").write_text("abseiling\nzumba\n")
    torch.save(backbone_state(resnet50_2d(2, 0.25)), tmp_path / "wide.pt")  # the smoke scale's model is 0.0625 wide
    monkeypatch.setattr(harness.reproduce, "_run_one", no_run)
    monkeypatch.chdir(tmp_path)  # where the runs' outputs/ folder is made
    for prepare in ([], ["--prepare-only"]):
        code = main(["reproduce", "--suite", "smoke", "--scale", "smoke", "--results", str(tmp_path / "results"),
                     "--no-report", *prepare, "data.name=synthetic",
                     *[a.format(tmp=tmp_path, data=data) for a in arguments]])
        err = capsys.readouterr().err
        assert code == 2 and message.format(tmp=tmp_path, data=data) in err and "Traceback" not in err
