"""Counts and sizes out of range on the measurement and model commands' flags, and empty paths, are named before
any work."""

import json

import pytest
import torch

from harness.cli import main


@pytest.mark.parametrize(("argv", "message"), [
    (["profile", "--repeats", "0", "scale=smoke"], "argument --repeats: must be >= 1, got 0"),
    (["profile", "--warmup", "-1", "scale=smoke"], "argument --warmup: must be >= 0, got -1"),
    (["scaling", "--suite", "smoke", "--scale", "smoke", "--repeats", "0"], "argument --repeats: must be >= 1"),
    (["throughput", "--batches", "8", "0"], "argument --batches: must be >= 1, got 0"),
    (["bn-bench", "--splits", "0"], "argument --splits: must be >= 1, got 0"),
    (["bn-bench", "--channels", "-1"], "argument --channels: must be >= 1, got -1"),
    (["bn-bench", "--batch", "8", "--splits", "3"], "--batch 8 does not split into --splits 3 equal groups"),
    (["flops", "i3d_r50", "--crop", "-5"], "argument --crop: must be >= 1, got -5"),
    (["flops", "i3d_r50", "--frames", "0"], "argument --frames: must be >= 1, got 0"),  # was read as the default
    (["flops", "i3d_r50", "--crop", "abc"], "argument --crop: must be an integer, got 'abc'"),
    (["flops", "slowfast_r50_8x8", "--frames", "1"], "--frames 1: slowfast_r50_8x8 needs at least 4 frames"),
    (["flops", "i3d_r50", "--width", "0"], "--width must be > 0"),
    (["flops", "s3d", "--width", "0.5"], "--width scales only the harness's own models"),  # named model.width before
    # S3D pools its last 2×2×2 window without padding; the ResNets' padding keeps one pixel (their 1-px clips run)
    (["flops", "s3d", "--crop", "1"], "--crop 1: s3d needs at least 17 px at 16 frames"),
    (["flops", "s3d", "--frames", "8", "--crop", "16"], "--crop 16: s3d needs at least 17 px at 8 frames"),
    (["models", "check", "i3d_r50", "--batch", "0"], "argument --batch: must be >= 1, got 0"),
    (["data", "cache", "--out", "cache", "--workers", "-3"], "argument --workers: must be >= 1, got -3"),  # was 1
    (["data", "bench", "--clips", "0"], "argument --clips: must be >= 1, got 0"),  # streamed no batch, forever
    (["data", "bench", "--workers", "0,-2"], "--workers must be a comma-separated list of counts >= 0"),
    (["data", "bench", "--min-seconds", "nan"], "argument --min-seconds: must be a number of seconds >= 0"),
    (["data", "bench", "--min-seconds", "-1"], "argument --min-seconds: must be a number of seconds >= 0"),
    (["data", "bench", "--threads", "0"], "argument --threads: must be >= 1, got 0"),
    (["data", "check", "--workers", "0"], "argument --workers: must be >= 1, got 0"),
    (["data", "check", "--min-frames", "-1"], "argument --min-frames: must be >= 1, got -1"),
    (["data", "synth", "--out", "s", "--workers", "0"], "argument --workers: must be >= 1, got 0"),
    (["data", "prepare", "--out", "p", "--workers", "0"], "argument --workers: must be >= 1, got 0"),
    (["data", "prepare", "--out", "p", "--keyframe-interval", "0"], "argument --keyframe-interval: must be >= 1"),
    (["data", "prepare", "--out", "p", "--frame-step", "0"], "argument --frame-step: must be >= 1, got 0"),
    (["data", "prepare", "--out", "p", "--short-side", "-4"], "argument --short-side: must be >= 0, got -4"),
    (["data", "synth", "--out", "s", "--seed", "-1"], "--seed must be >= 0, got -1"),  # numpy's error, data half made
    (["report", "--suite", "smoke", "--gpus", "0"], "argument --gpus: must be >= 1, got 0"),
    (["profile", "--device", "tpu", "scale=smoke"], "argument --device: invalid choice: 'tpu'"),  # torch's error
    (["throughput", "--device", "gpu"], "argument --device: invalid choice: 'gpu'"),
])
def test_out_of_range_flags_exit_2_naming_the_flag(argv, message, capsys):
    try:
        code = main(argv)
    except SystemExit as exit:  # argparse's own refusal
        code = exit.code
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err


@pytest.mark.skipif(torch.cuda.is_available(), reason="names the missing GPU")
@pytest.mark.parametrize("argv", [
    ["profile", "--device", "cuda", "scale=smoke", "--repeats", "1", "--warmup", "0"],
    ["throughput", "--device", "cuda", "--recipes", "k400_i3d_r50", "--batches", "1"],
    ["models", "pretrain-2d", "--device", "cuda", "--out", "{tmp}/w.pt", "scale=smoke"],
])
def test_device_cuda_without_a_gpu_is_named_before_any_work(argv, capsys, tmp_path):
    assert main([a.format(tmp=tmp_path) for a in argv]) == 2  # was torch's traceback at the first step
    err = capsys.readouterr().err
    assert "error: --device cuda: no CUDA GPU is visible here. Use --device cpu." in err and "Traceback" not in err


@pytest.mark.parametrize("argv", [
    ["data", "synth", "--out", ""],
    ["data", "cache", "--out", "", "data.name=synthetic", "data.root=."],
    ["data", "prepare", "--out", " ", "data.name=synthetic", "data.root=."],
    ["data", "bench", "--prepared", "", "data.name=synthetic", "data.root=."],
    ["report", "--suite", "smoke", "--out", ""],
    ["report", "--suite", "smoke", "--results", ""],
    ["reproduce", "--suite", "smoke", "--results", "", "--dry-run"],
    ["profile", "--out", "", "scale=smoke", "--repeats", "1", "--warmup", "0"],
    ["models", "pretrain-2d", "--out", "", "scale=smoke", "--iterations", "1"],
])
def test_an_empty_path_is_refused_not_read_as_the_current_folder(argv, capsys, tmp_path, monkeypatch):
    """`--out "$DIR"` with DIR unset: read as a path, "" is the current folder, which would be written into."""
    monkeypatch.chdir(tmp_path)
    try:
        code = main(argv)
    except SystemExit as exit:  # argparse's own refusal
        code = exit.code
    err = capsys.readouterr().err
    flag = argv[[a.strip() for a in argv].index("") - 1]
    assert code == 2 and f"argument {flag}: must name a file or folder, got an empty value" in err
    assert list(tmp_path.iterdir()) == []


def test_flops_counts_at_the_smallest_crop_it_names(capsys):
    assert main(["flops", "s3d", "--frames", "8", "--crop", "17", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["crop"] == 17


def test_flops_given_an_override_names_the_form_it_takes(capsys):
    assert main(["flops", "model.name=slowfast_r50_8x8"]) == 2
    assert "harness flops slowfast_r50_8x8" in capsys.readouterr().err
