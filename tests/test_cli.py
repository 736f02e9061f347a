"""Every command's arguments reach its function: run each against an empty logs
directory and expect the one-line error that names what is missing.  Output
that cannot be written ends bringup quietly or in one line."""

import os
import subprocess
import sys

import pytest

from bringup import cli


@pytest.fixture
def empty_logs(tmp_path, monkeypatch):
    monkeypatch.setenv("BRINGUP_LOGS", str(tmp_path / "logs"))
    return tmp_path


@pytest.mark.parametrize(
    "argv, message",
    [
        (["boot-timing", "-b", "qemu-arm", "--runs", "1", "--root", "nfs"], "no build record"),
        (["boot-timing", "-b", "qemu-arm", "--path", "direct", "--root", "ramdisk"], "no build record"),
        (["footprint-report", "-b", "qemu-arm", "--lmbench", "none", "--lmbench-runs", "2"], "no build record"),
        (["report", "-b", "qemu-arm"], "no records under"),
        (["build-report", "-b", "qemu-arm"], "no build records"),
        (["compare", "qemu-arm/5.10", "qemu-arm/6.12"], "is neither a build.json"),
        (["show", "no-such-board"], "no-such-board"),
    ],
)
def test_commands_fail_in_one_line(empty_logs, capsys, argv, message):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("bringup: error: ") and message in err[0], err


def test_footprint_rejects_zero_lmbench_runs(empty_logs, capsys):
    assert cli.main(["footprint-report", "-b", "qemu-arm", "--lmbench-runs", "0"]) == 2
    assert "lmbench runs 0: give 1 or more" in capsys.readouterr().err


def test_study_arguments_reach_the_study(empty_logs, monkeypatch, capsys):
    from bringup import study

    seen = {}

    def fake_run(board, logs, cache, **kw):
        seen.update(kw, board=board.name)
        from bringup.errors import BringupError

        raise BringupError("stop here")

    monkeypatch.setattr(study, "run", fake_run)
    assert (
        cli.main(
            [
                "study",
                "-b",
                "qemu-arm",
                "--runs",
                "3",
                "--root",
                "nfs",
                "--lmbench",
                "none",
                "--lmbench-runs",
                "4",
                "--path",
                "direct",
                "--force",
            ]
        )
        == 2
    )
    assert seen == {
        "board": "qemu-arm",
        "runs": 3,
        "path": "direct",
        "lmbench": "none",
        "jobs": None,
        "force": True,
        "lmbench_source": None,
        "lmbench_runs": 4,
        "root": "nfs",
        "say": cli._say,
    }


def _bringup(*args, stdout):
    return subprocess.run(
        [sys.executable, "-m", "bringup", *args], stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=60
    )


@pytest.mark.parametrize("unbuffered", ["1", ""])
@pytest.mark.parametrize("argv", [["boards"], ["doc", "board-files"]])
def test_a_reader_that_went_away_ends_bringup_quietly(argv, unbuffered, monkeypatch):
    """`bringup boards | head -1`: no traceback, the status of a tool killed by SIGPIPE."""
    monkeypatch.setenv("PYTHONUNBUFFERED", unbuffered)
    r, w = os.pipe()
    os.close(r)  # the reader is gone before bringup writes anything
    try:
        p = _bringup(*argv, stdout=w)
    finally:
        os.close(w)
    assert (p.returncode, p.stderr) == (141, "")


def test_output_that_cannot_be_written_is_one_line():
    with open("/dev/full", "w") as full:
        p = _bringup("doc", "board-files", stdout=full)
    assert p.returncode == 1
    assert p.stderr == "bringup: error: cannot write to standard output: No space left on device\n"


def test_parse_of_a_missing_file_is_one_line(tmp_path, capsys):
    assert cli.main(["parse", "bootlog", str(tmp_path / "nope.log")]) == 2
    err = capsys.readouterr().err
    assert err == f"bringup: error: parse bootlog: cannot read {tmp_path / 'nope.log'}: No such file or directory\n"
