"""key=value overrides on the command line: each key once, and never taken as values of the flag before them; and
`harness plan` refuses what `harness train` refuses of a plan."""

from __future__ import annotations

import pytest

from harness.cli import main


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("command", [["plan"], ["train", "output_dir={tmp}/run"]])
def test_a_key_given_twice_is_refused_by_name(capsys, tmp_path, command):
    code, _, err = _run(capsys, *(c.format(tmp=tmp_path) for c in command), "solver.base_lr=0.1", "scale=smoke",
                        "+solver.base_lr=0.2")
    assert code == 2 and "'solver.base_lr' is given twice (solver.base_lr=0.1 and +solver.base_lr=0.2)" in err
    assert not (tmp_path / "run").exists()  # refused before any work


def test_only_and_seeds_stop_at_the_overrides_after_them(capsys, tmp_path):
    code, out, err = _run(capsys, "reproduce", "--suite", "smoke", "--scale", "smoke", "--dry-run", "--results",
                          str(tmp_path), "--only", "baseline", "solver.weight_decay=0.0002", "--seeds", "0", "1",
                          "train.log_every=7")
    assert code == 0, err
    lines = [line for line in out.splitlines() if " harness train " in line]
    wanted = ("baseline", "solver.weight_decay=0.0002", "train.log_every=7", "seed=")
    assert len(lines) == 2 and all(word in line for line in lines for word in wanted)
    assert {line.split("seed=")[1].split()[0] for line in lines} == {"0", "1"}
    with pytest.raises(SystemExit):  # argparse's error: exit 2 with the flag named
        main(["reproduce", "--suite", "smoke", "--dry-run", "--seeds", "0", "x"])
    assert "argument --seeds: invalid N: 'x'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["reproduce", "--suite", "smoke", "--dry-run", "--only", "seed=1"])
    assert "argument --only: expected at least one VARIANT before seed=1" in capsys.readouterr().err


def test_plan_refuses_a_phase_shorter_than_the_model_takes_as_train_does(capsys, tmp_path):
    overrides = ("scale=smoke", "data.num_frames=8")  # the long cycle's first phase: 2 frames, SlowFast needs 4
    refusal = "The plan trains at 2 frames but slowfast_r50_8x8 needs at least 4. Raise data.num_frames (now 8)"
    for command in (["plan"], ["plan", "--json"], ["train", f"output_dir={tmp_path / 'run'}"]):
        code, out, err = _run(capsys, *command, *overrides)
        assert code == 2 and refusal in err and out == ""
