"""The training progress bar follows the run (epoch, LR, the short cycle's shapes) and the final line says what a
top-5 of few classes is worth."""

from __future__ import annotations

import re

from harness.cli import main
from harness.config import compose
from harness.schedule import build_plan
from harness.train.progress import phase_shapes

from .conftest import smoke_overrides


def test_the_bar_shows_every_epoch_and_the_short_cycles_shapes(synth_root, tmp_path, capsys):
    # 4 epochs of a few iterations each: fewer than the default log_every of 20 in all
    assert main(["train", *smoke_overrides(synth_root, tmp_path / "run")]) == 0
    captured = capsys.readouterr()
    bar = captured.err.replace("\r", "\n")
    epochs = {int(e) for e in re.findall(r"epoch=(\d+)", bar)}
    assert len(epochs) >= 3  # it was set once, at iteration 20, and never again
    assert "short_cycle=" in bar  # the sizes alternating every iteration, beside the long cycle's base shape
    assert "top-5 not shown: of 4 classes it is always 100" in captured.out and "chance 25.00" in captured.out


def test_a_phases_shapes_are_its_base_and_short_cycle():
    plan = build_plan(compose(smoke_overrides("/nonexistent", "/tmp/out")))
    first = plan.phases[0]
    shown = phase_shapes(plan, 0)
    assert shown["shape"].endswith(f"×{first.base.t}×{first.base.s}²")
    assert all(f"×{c.s}²" in shown["short_cycle"] for c in first.cycle if c.s != first.base.s)
    baseline = build_plan(compose(smoke_overrides("/nonexistent", "/tmp/out", "multigrid.long_cycle=false",
                                                  "multigrid.short_cycle=false")))
    assert phase_shapes(baseline, 0) == {"shape": "2×8×32²"}  # one shape: no short cycle to show
