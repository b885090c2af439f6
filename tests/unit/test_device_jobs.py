"""The GPU job lists of tools/device name runs that exist, with settings that compose: a typo would leave a run
untrained on a lent machine."""

import subprocess
from pathlib import Path

import pytest

from harness.suite import load_scale, load_suite, resolve_suite

JOBS = sorted((Path(__file__).resolve().parents[2] / "tools" / "device").glob("*.jobs"))


@pytest.mark.parametrize("jobs", JOBS, ids=[p.name for p in JOBS])
def test_every_job_names_a_suite_variant_and_seed(jobs):
    lines = [line.split() for line in jobs.read_text().splitlines() if line.strip() and not line.startswith("#")]
    assert lines
    for suite, seed, variant, *overrides in lines:
        assert variant in {run.variant for run in load_suite(suite).runs}, (jobs.name, suite, variant)
        assert int(seed) >= 0
        if overrides:  # resolved at the proxy scale as reproduce resolves them: raises SpecError naming a bad one
            runs = resolve_suite(load_suite(suite), load_scale("proxy"), overrides, data_root="/nonexistent")
            assert next(r for r in runs if r.run.variant == variant).spec is not None, (jobs.name, variant)
    assert len({tuple(line) for line in lines}) == len(lines), "a job listed twice"


def test_recorded_jobs_names_the_recorded_lines_only(tmp_path):
    """tools/device/recorded_jobs.py: what converged_proxy.sh skips without starting the harness per line."""
    import sys

    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "tools" / "device"))
    try:
        from recorded_jobs import recorded_lines
    finally:
        sys.path.pop(0)
    jobs = tmp_path / "some.jobs"
    jobs.write_text("# a comment\n"
                    "kinetics_generalization 1 t16_baseline\n"  # recorded in results/
                    "kinetics_generalization 0 imagenet_multigrid\n"  # recorded, from the pre-trained stand-in
                    "kinetics_generalization 7 t16_baseline\n"  # a seed never run
                    "kinetics_generalization 1 t16_multigrid train.eval_clips=1\n")  # overrides: the harness checks
    assert recorded_lines(jobs, root / "results") == [("kinetics_generalization", 1, "t16_baseline"),
                                                      ("kinetics_generalization", 0, "imagenet_multigrid")]


SCRIPTS = sorted((Path(__file__).resolve().parents[2] / "tools" / "device").glob("*.sh"))


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_every_device_script_parses(script):
    """A syntax error would cost a lent machine's call before the script says anything."""
    result = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
