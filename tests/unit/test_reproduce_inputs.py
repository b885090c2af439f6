"""harness.reproduce.inputs: what a suite's runs need (the data and weights the user gave, the scale's synthetic data),
checked or made before any run."""

import pytest

from harness.cli import main
from harness.reproduce import pool


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
    monkeypatch.setattr(pool, "_run_one", no_run)
    monkeypatch.chdir(tmp_path)  # where the runs' outputs/ folder is made
    for prepare in ([], ["--prepare-only"]):
        code = main(["reproduce", "--suite", "smoke", "--scale", "smoke", "--results", str(tmp_path / "results"),
                     "--no-report", *prepare, "data.name=synthetic",
                     *[a.format(tmp=tmp_path, data=data) for a in arguments]])
        err = capsys.readouterr().err
        assert code == 2 and message.format(tmp=tmp_path, data=data) in err and "Traceback" not in err
