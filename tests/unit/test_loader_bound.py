"""Predictions with the loader: every iteration takes max(step time, time to load its per-GPU batch)."""

import json
import subprocess

import pytest

from harness.measure.loader_bound import (
    LoaderRates,
    load_rates,
    loader_bound_seconds,
    loader_bound_shapes,
    rates_from_bench,
)
from harness.schedule import baseline_spec, build_plan
from harness.schedule.trained import iterations_by_shape
from harness.spec import SpecError

from .helpers import TINY, spec


def _step_ms(plan):
    """A made-up step time per shape that grows with the clip volume (what a GPU roughly does)."""
    return {key: 1e-3 * key[0] * key[1] ** 2 * key[2] for key in iterations_by_shape(plan)}


def _bench_record(plan, rate_of, cache=True):
    """A `harness data bench` record of one loader (rates by worker count) for every planned (t, s)."""
    shapes = sorted({(t, s) for t, s, _, _ in iterations_by_shape(plan)})
    rows = []
    for t, s in shapes:
        row = {"t": t, "s": s, "loader_clips_per_s": {"0": rate_of(t, s) / 4, "8": rate_of(t, s)}}
        if cache:
            row["cache_loader_clips_per_s"] = {"0": 2 * rate_of(t, s), "8": 10 * rate_of(t, s)}
        rows.append(row)
    return {"kind": "data-bench", "shapes": rows}


def test_a_fast_loader_leaves_the_compute_prediction_and_a_slow_one_sets_the_pace():
    plan = build_plan(spec(**TINY))
    step_ms = _step_ms(plan)
    counts = iterations_by_shape(plan)
    compute = sum(n * step_ms[k] / 1e3 for k, n in counts.items())
    assert loader_bound_seconds(plan, step_ms, LoaderRates("fast", everywhere=1e9)) == pytest.approx(compute)
    slow = LoaderRates("slow", everywhere=1e-3)
    assert loader_bound_seconds(plan, step_ms, slow) == pytest.approx(sum(n * k[2] / 1e-3 for k, n in counts.items()))
    assert {row["bound"] for row in loader_bound_shapes(plan, step_ms, slow)} == {"loader"}


def test_multigrid_coarse_shapes_are_the_first_the_loader_caps():
    """At one clips/s for every shape, the shapes with large batches of small clips become loader-bound first,
    so the loader-bound speedup falls below the compute-only one."""
    s = spec(**TINY)
    plan, base = build_plan(s), build_plan(baseline_spec(s))
    step_ms = _step_ms(plan) | _step_ms(base)
    base_batch = max(k[2] for k in iterations_by_shape(base))
    base_step_s = max(step_ms[k] for k in iterations_by_shape(base)) / 1e3
    rates = LoaderRates("just enough for the baseline", everywhere=1.01 * base_batch / base_step_s)
    rows = loader_bound_shapes(plan, step_ms, rates)
    assert {r["bound"] for r in rows} == {"loader", "step"}
    assert all(r["bound"] == "step" for r in loader_bound_shapes(base, step_ms, rates))
    compute = sum(n * step_ms[k] for k, n in iterations_by_shape(base).items()) / sum(
        n * step_ms[k] for k, n in iterations_by_shape(plan).items())
    bound = loader_bound_seconds(base, step_ms, rates) / loader_bound_seconds(plan, step_ms, rates)
    assert bound < compute


def test_rates_from_a_data_bench_record(tmp_path):
    plan = build_plan(spec(**TINY))
    record = _bench_record(plan, lambda t, s: 100.0 * t)
    rates = rates_from_bench(record, "bench.json")
    some = record["shapes"][0]
    assert rates.at(some["t"], some["s"]) == pytest.approx(100.0 * some["t"])  # the best worker count
    assert rates_from_bench(record, "bench.json", "cache").at(some["t"], some["s"]) == pytest.approx(
        1000.0 * some["t"])
    paths = {"paths": [{"name": "pyav", "shapes": [{"t": 4, "s": 32, "clips_per_s": 7.0}]},
                       {"name": "nvdec", "shapes": [{"t": 4, "s": 32, "clips_per_s": 70.0}]}]}
    assert rates_from_bench(paths, "p.json").at(4, 32) == 7.0  # the first path unless one is named
    assert rates_from_bench(paths, "p.json", "nvdec").at(4, 32) == 70.0
    with pytest.raises(SpecError, match=r"no loader rate at t=8, s=16 .*harness data bench"):
        rates_from_bench(paths, "p.json").at(8, 16)
    with pytest.raises(SpecError, match="no loader path 'cache'"):
        rates_from_bench(paths, "p.json", "cache")
    with pytest.raises(SpecError, match="without a frame cache"):
        rates_from_bench(_bench_record(plan, lambda t, s: 1.0, cache=False), "b.json", "cache")
    with pytest.raises(SpecError, match="positive number"):
        rates_from_bench({"paths": [{"name": "x", "shapes": [{"t": 4, "s": 32, "clips_per_s": 0}]}]}, "z.json")
    with pytest.raises(SpecError, match="not a `harness data bench` record"):
        rates_from_bench({"runs": []}, "profile.json")

    file = tmp_path / "bench.json"
    file.write_text(json.dumps(record))
    assert load_rates(str(file)).at(some["t"], some["s"]) == pytest.approx(100.0 * some["t"])
    assert load_rates(f"{file}:cache").source == f"{file}:cache"
    assert load_rates("250").at(1, 1) == 250.0
    with pytest.raises(SpecError, match="no such file"):
        load_rates(str(tmp_path / "missing.json"))
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(SpecError, match="cannot read"):
        load_rates(str(tmp_path / "bad.json"))
    with pytest.raises(SpecError, match="positive number"):
        load_rates("-3")


@pytest.mark.parametrize("record, message", [
    ({"paths": [{"name": "pyav", "shapes": [{"t": "8", "s": 32, "clips_per_s": 5.0}]}]},
     r"p.json:pyav is not a `harness data bench` record: the shape .* no integer 't' and 's'"),
    ({"paths": [{"name": "pyav", "shapes": [3]}]}, "the shape 3 has no integer"),
    ({"paths": [{"name": "pyav", "shapes": "x"}]}, "its 'shapes' is no list"),
    ({"paths": [{"name": ["pyav"], "shapes": []}]}, "has no loader path"),
    ({"shapes": [{"s": 32, "loader_clips_per_s": {"2": 5.0}}]}, "the shape .* no integer 't' and 's'"),
    ({"shapes": [{"t": 8, "s": 32, "loader_clips_per_s": {"0": "x", "2": 5.0}}]}, "positive number.*'x'"),
])
def test_a_bench_record_of_another_shape_is_a_clear_error(tmp_path, record, message):
    """A record edited by hand or of another tool: an error naming the file, not a traceback."""
    with pytest.raises(SpecError, match=message):
        rates_from_bench(record, "p.json")
    file = tmp_path / "p.json"
    file.write_text(json.dumps(record))
    with pytest.raises(SpecError, match=message.replace("p.json", f"{file}")):
        load_rates(str(file))


def _profile_cli(tmp_path, data):
    overrides = [f"{k}={json.dumps(v).replace(' ', '') if isinstance(v, list) else v}" for k, v in TINY.items()]
    out = tmp_path / "profile.json"
    done = subprocess.run(["harness", "profile", "--device", "cpu", "--repeats", "1", "--warmup", "1", "--data", data,
                           "--out", str(out), *overrides], capture_output=True, text=True, timeout=600)
    return done, out


def test_profile_cli_predicts_with_the_loader_and_checks_the_rates_before_timing(tmp_path):
    plan = build_plan(spec(**TINY))
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps(_bench_record(plan, lambda t, s: 0.5)))
    done, out = _profile_cli(tmp_path, str(bench))
    assert done.returncode == 0, done.stderr[-2000:]
    bound = json.loads(out.read_text())["loader_bound"]
    assert bound["loader"]["source"] == str(bench) and bound["predicted_speedup"] > 0
    assert all(row["bound"] == "loader" for row in bound["shapes"])  # 0.5 clips/s: the loader is the pace

    bench.write_text(json.dumps({"kind": "data-bench", "shapes": [
        {"t": 99, "s": 99, "loader_clips_per_s": {"2": 10.0}}]}))
    done, _ = _profile_cli(tmp_path, str(bench))
    assert done.returncode == 2 and "no loader rate at t=" in done.stderr and "Traceback" not in done.stderr
    assert "timing" not in done.stderr  # refused before the first shape was timed
