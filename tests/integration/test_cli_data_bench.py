"""`harness data bench`: its record, a loader path whose workers time out, and a bench cut off midway."""

from __future__ import annotations

import json

import pytest

from harness.records import DataBenchRecord

from .data_cli import harness


def test_cli_bench_writes_a_record(synth, tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert harness("data", "bench", "--min-seconds", "0",
                   "--clips", "4", "--workers", "0", "--out", str(out), "data.name=synthetic",
                   f"data.root={synth}", "data.num_frames=8", "data.crop_size=32", "data.jitter=[36,48]",
                   "data.num_classes=4", "data.train_videos=8") == 0
    record = json.loads(out.read_text())
    assert record["record_version"] == DataBenchRecord.VERSION and "shapes" in record
    assert {"hardware", "versions", "commit", "date"} <= record["provenance"].keys()
    shapes = {(r["t"], r["s"]) for r in record["shapes"]}
    assert (8, 32) in shapes and (2, 16) in shapes
    assert all(r["decode_clips_per_s"] > 0 and r["loader_clips_per_s"]["0"] > 0 for r in record["shapes"])
    assert record["planned_shapes"] == len(record["shapes"])
    assert "clips/s" in capsys.readouterr().out


def test_a_loader_path_whose_workers_time_out_is_recorded_as_failed_and_the_bench_goes_on(synth, tmp_path,
                                                                                          monkeypatch, capsys):
    import harness.measure.data_bench_rates as data_bench_rates

    monkeypatch.setattr(data_bench_rates, "WORKER_TIMEOUT_S", 0.001)  # no worker delivers its first batch that fast
    out = tmp_path / "bench.json"
    assert harness("data", "bench", "--min-seconds", "0",
                   "--clips", "4", "--workers", "0,1", "--out", str(out), "data.name=synthetic",
                   f"data.root={synth}", "data.num_frames=8", "data.crop_size=32", "data.jitter=[36,48]",
                   "data.num_classes=4", "data.train_videos=8") == 0
    record = json.loads(out.read_text())
    for row in record["shapes"]:
        assert row["loader_clips_per_s"]["1"] is None and row["loader_clips_per_s"]["0"] > 0  # in-process: no timeout
        assert "timed out" in row["errors"]["loader_clips_per_s w=1"]
    assert all(s["workers"] == 0 for s in record["paths"][0]["shapes"])
    printed = capsys.readouterr()
    assert "w=1: failed" in printed.out + printed.err and "timed out" in printed.out


def test_a_bench_cut_off_keeps_the_shapes_it_measured_baseline_first(synth, tmp_path, monkeypatch):
    import harness.measure.data_bench as data_bench

    measure, calls = data_bench._bench_shape, []

    def cut_off_at_the_second_shape(*args, **kwargs):
        calls.append(args[0])
        if len(calls) == 2:
            raise KeyboardInterrupt  # the call's time limit, or Ctrl-C
        return measure(*args, **kwargs)

    monkeypatch.setattr(data_bench, "_bench_shape", cut_off_at_the_second_shape)
    out = tmp_path / "bench.json"
    with pytest.raises(KeyboardInterrupt):
        harness("data", "bench", "--min-seconds", "0",
                "--clips", "4", "--workers", "0", "--out", str(out), "data.name=synthetic",
                f"data.root={synth}", "data.num_frames=8", "data.crop_size=32", "data.jitter=[36,48]",
                "data.num_classes=4", "data.train_videos=8")
    record = json.loads(out.read_text())
    DataBenchRecord(**{k: v for k, v in record.items() if k not in ("record_version", "kind", "provenance")})
    assert [(r["t"], r["s"]) for r in record["shapes"]] == [(8, 32)]  # the baseline's shape comes first
    assert record["planned_shapes"] > 1 and [p["name"] for p in record["paths"]] == ["pyav"]
    assert not list(tmp_path.glob(".*partial"))
