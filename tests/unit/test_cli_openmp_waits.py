"""harness waits for OpenMP work passively unless the user says otherwise: spinning threads took the CPU of a busy
machine from each other (a smoke run's CPU time ×7)."""

from __future__ import annotations

import os

from harness.cli import main, passive_openmp_waits


def test_passive_waits_are_the_default_and_the_users_choice_wins():
    unset: dict[str, str] = {}
    passive_openmp_waits(unset)
    assert unset == {"OMP_WAIT_POLICY": "PASSIVE"}
    chosen = {"OMP_WAIT_POLICY": "ACTIVE"}
    passive_openmp_waits(chosen)
    assert chosen == {"OMP_WAIT_POLICY": "ACTIVE"}


def test_every_command_sets_it_before_torch_loads_in_the_process_it_starts(monkeypatch, capsys):
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    assert main(["plan", "--keys"]) == 0
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"  # inherited by the runs reproduce starts
