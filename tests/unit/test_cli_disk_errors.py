"""A write the disk refuses while a command runs (harness.cli): a message naming the file and the fix, no traceback."""

import errno
import os

import pytest


@pytest.mark.parametrize(("error", "code"), [(errno.ENOSPC, 2), (errno.EROFS, 2), (errno.ENOENT, None)])
def test_a_write_the_disk_refuses_mid_command_is_a_message_not_a_traceback(monkeypatch, capsys, error, code):
    """A disk filling up or a folder turning read-only during a run: the message says what to fix and how to go
    on; other OS errors (bugs, or refused before any work by the commands' own checks) still raise."""
    from harness import cli, cli_train

    def fails(args):
        raise OSError(error, os.strerror(error), "/runs/a/checkpoints/checkpoint_000000008.pt")

    monkeypatch.setattr(cli_train, "cmd_train", fails)  # as if the disk failed while training
    if code is None:
        with pytest.raises(OSError):
            cli.main(["train", "scale=smoke"])
        return
    assert cli.main(["train", "scale=smoke"]) == code
    err = capsys.readouterr().err
    assert err.startswith("harness train: error: could not write /runs/a/checkpoints/checkpoint_000000008.pt: ")
    assert "resume=true" in err and "Traceback" not in err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs Linux's /dev/full, a device that is always full")
def test_a_full_disk_s_message_names_the_file_that_could_not_be_written(monkeypatch, capsys, tmp_path):
    from harness import cli, cli_train
    from harness.io import write_atomic

    def fill(tmp):
        with open("/dev/full", "w") as full:  # the disk's own refusal, which names no file
            full.write("x" * 100_000)

    monkeypatch.setattr(cli_train, "cmd_train", lambda args: write_atomic(tmp_path / "record.json", fill))
    assert cli.main(["train", "scale=smoke"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"harness train: error: could not write {tmp_path / 'record.json'}: No space left on device")
    assert not list(tmp_path.iterdir())  # nor a temporary file left
