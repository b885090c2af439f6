"""`harness profile`'s table: durations in a readable unit, no memory column or "per GPU" on a CPU, the model
profiled named, and a warning that smoke-scale step times are noise."""

from __future__ import annotations

from harness.cli import main
from harness.cli_measure import format_duration

FACTORY = "tests.unit.user_models:tiny_c3d"


def test_durations_read_in_seconds_minutes_or_hours():
    assert format_duration(4.04) == "4.0 s"
    assert format_duration(600) == "10.0 min"
    assert format_duration(3 * 3600) == "3.00 h"


def test_a_cpu_profile_at_smoke_scale_names_the_model_and_warns(capsys):
    argv = ["profile", "--device", "cpu", "--repeats", "1", "--warmup", "0", "scale=smoke",
            f"model.target='{FACTORY}'"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert FACTORY in out.splitlines()[0] and "scale=smoke" in out.splitlines()[0]
    assert "smoke-scale step times are noise" in out
    assert "mem GiB" not in out and "0.00 h" not in out
    predicted = next(line for line in out.splitlines() if line.startswith("predicted on cpu"))
    assert "per CPU process" in predicted and "per GPU" not in predicted
    assert " s vs baseline " in predicted
