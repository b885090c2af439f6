"""A suite run's overrides name each key once, as `harness train` takes them, the user's value winning."""

from __future__ import annotations

from harness.cli_args import require_each_key_once
from harness.config import compose
from harness.suite import load_scale, load_suite, resolve_suite


def test_a_user_override_of_a_scaled_key_reaches_train_once_and_wins():
    user = ["solver.batch_size=1", "solver.base_lr=0.0015625", "data.train_videos=9"]
    for run in resolve_suite(load_suite("smoke"), load_scale("smoke"), user, data_root="/data/synthetic"):
        require_each_key_once(list(run.overrides))  # harness train refused the scale's and the user's batch
        assert compose(list(run.overrides)) == run.spec
        assert (run.spec.solver.batch_size, run.spec.data.train_videos) == (1, 9)
