"""`harness profile` (harness.measure.predict) on a tiny model on the CPU: every planned shape timed and predicted."""

import json
import subprocess

import pytest

from harness.measure.predict import profile_plan, profile_summary
from harness.models import build_model
from harness.models.flops import count_flops
from harness.records import PlanProfileRecord
from harness.schedule import build_plan
from harness.schedule.trained import iterations_by_shape

from .helpers import TINY, spec


def test_profile_predicts_every_planned_shape():
    s = spec(**TINY)
    profile = profile_plan(s, device="cpu", warmup=1, repeats=2)
    plan = build_plan(s)
    assert set(iterations_by_shape(plan)) <= set(profile.step_times)
    assert all(st.median_ms > 0 for st in profile.step_times.values())
    summary = profile_summary(profile)
    assert summary["predicted_speedup"] == pytest.approx(profile.baseline_predicted_s / profile.predicted_s)
    assert sum(row["iterations"] for row in summary["shapes"]) == plan.iterations
    # Prediction = Σ iterations × step time, for the run and for its baseline.
    assert profile.predicted_s == pytest.approx(
        sum(row["iterations"] * row["median_ms"] / 1e3 for row in summary["shapes"]))
    # Every shape's FLOPs utilisation: its model's FLOPs at that clip size times the clips/s it trains.
    for row in summary["shapes"]:
        forward = count_flops(build_model(s.model, 5), row["t"], row["s"]).gflops
        assert row["mfu"]["train_gflop_per_clip"] == pytest.approx(6 * forward)
        assert row["mfu"]["achieved_tflop_s"] == pytest.approx(6 * forward * row["clips_per_s"] / 1e3)
        assert row["mfu"]["share_of_peak"] is None  # a CPU: no datasheet peak, no bf16 matmul
    assert "multiply-add" in summary["assumptions"]


def test_profile_cli_writes_a_record(tmp_path):
    out = tmp_path / "profile.json"
    overrides = [f"{k}={json.dumps(v).replace(' ', '') if isinstance(v, list) else v}" for k, v in TINY.items()]
    done = subprocess.run(["harness", "profile", "--device", "cpu", "--repeats", "2", "--warmup", "1", "--out",
                           str(out), "--plain-bn", "--sub-batch-bn", "auto", *overrides],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    record = json.loads(out.read_text())
    assert record["device"] == "cpu" and record["predicted_speedup"] > 0
    assert record["spec"]["train"]["sub_batch_bn"] == "auto"
    # --plain-bn: every sub-batch shape is timed with plain BN too; plain-BN shapes need no second timing.
    sub_batch = [row for row in record["shapes"] if row["bn_splits"] > 1]
    assert sub_batch and all(row["plain_bn_ms"] > 0 for row in sub_batch)
    assert all("plain_bn_ms" not in row for row in record["shapes"] if row["bn_splits"] == 1)
    assert "plain BN ms" in done.stdout
    assert all(row["mfu"]["achieved_tflop_s"] > 0 for row in record["shapes"]) and "MFU" in done.stdout
    assert record["provenance"]["hardware"]["cpu_count"] >= 1
    assert record["record_version"] == PlanProfileRecord.VERSION
    assert "predicted on cpu" in done.stdout


def test_sub_batch_and_plain_bn_are_timed_in_turns(monkeypatch):
    # Eager steps drift with the host's pace: --plain-bn times the two settings alternately, each the median of its
    # turns, so a drift cannot make one look faster than the other.
    from harness.measure import predict
    from harness.measure.step_bench import StepTime

    calls, clock = [], iter(range(1, 100))

    def timed(model, optimizer, key, *, repeats, **timing):
        calls.append((key[3], repeats))
        return StepTime(*key, float(next(clock)), 1.0, 0.5)

    monkeypatch.setattr(predict, "_timed_step", timed)
    result = predict._timed_against_plain_bn(None, None, (8, 56, 16, 4), repeats=10)
    assert calls == [(4, 4), (1, 4)] * predict.PLAIN_BN_TURNS  # in turns, the repeats shared out between them
    assert (result.median_ms, result.plain_bn_ms) == (3.0, 4.0)  # medians of the turns 1, 3, 5 and 2, 4, 6
    assert result.bn_splits == 4 and result.clips_per_s == pytest.approx(16 / 3.0 * 1e3)


def test_profile_times_the_runs_that_start_from_pre_trained_weights():
    # Table 4's runs require model.pretrained; their steps take the same time with any weights, so the suite's
    # profile predicts them without the weights file.
    from harness.measure.predict import profile_suite

    record = profile_suite("kinetics_1gpu", "smoke", device="cpu", warmup=0, repeats=1)
    assert {r["variant"] for r in record["runs"]} == {"baseline", "multigrid"}
    assert all(r["predicted_speedup"] > 0 for r in record["runs"]) and record["shapes"]
