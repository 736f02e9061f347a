"""--no-wait: every command that holds a board's lock while it measures refuses at once
(exit 75, one line naming the holder) when another run holds that board, and the option's
help names exactly those commands (cli/commands.py: Command.holds_board)."""

import subprocess
import sys

import recordfactory as rf
from bringup import records
from bringup.cli import commands
from conftest import run_cli

# a process that holds the boards' locks until told to let go (a line on its standard input)
HOLDER = """
import sys
from contextlib import ExitStack
from bringup.util import lock
with ExitStack() as held:
    for d in sys.argv[1:]:
        held.enter_context(lock.board(d, "footprint"))
    print("held", flush=True)
    sys.stdin.readline()
"""

MEASURING = ("boot-timing", "footprint-report", "workloads", "study", "aa")


def test_no_wait_names_every_command_that_holds_a_board():
    flagged = tuple(c.name for c in commands.TABLE if c.holds_board)
    assert flagged == MEASURING
    text = " ".join(run_cli("--help").stdout.split())
    assert f"--no-wait a measuring step ({', '.join(MEASURING)}) refuses at once" in text


def test_each_command_that_holds_a_board_refuses_with_no_wait_naming_the_holder(tmp_path, monkeypatch):
    """The A/A check holds a board of its own (<board>-aa): held too, it refuses as the others.
    No command asks apt first (the workloads' packages are resolved under the lock: apt takes
    about 30 s): a PrivateApt made here fails the test."""
    from bringup.measure import workloads

    made: list[str] = []

    class NoApt:
        def __init__(self, *a, **kw):
            made.append(str(a[0]) if a else "apt")
            raise AssertionError("apt asked before the board's lock")

    monkeypatch.setattr(workloads, "PrivateApt", NoApt)
    logs = tmp_path / "logs"
    for k in ("5.10", "6.12"):  # the commands get as far as the board's lock
        records.write(logs / "qemu-arm" / k / "build.json", rf.build(k))
    dirs = [str(logs / "qemu-arm"), str(logs / "qemu-arm-aa")]
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, *dirs], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        env = {"BRINGUP_LOGS": str(logs), "BRINGUP_CACHE": str(tmp_path / "cache")}
        for c in commands.TABLE:
            if not c.holds_board:
                continue
            p = run_cli("--no-wait", c.name, "-b", "qemu-arm", env_extra=env)
            assert p.returncode == 75, (c.name, p.stderr)
            assert p.stderr.count("\n") == 1, (c.name, p.stderr)
            assert f"is being measured by pid {holder.pid}, footprint, since " in p.stderr, (c.name, p.stderr)
            assert p.stderr.rstrip().endswith("not waiting (--no-wait)"), (c.name, p.stderr)
            assert made == [], (c.name, made)
    finally:
        holder.stdin.write("done\n")
        holder.stdin.flush()
        assert holder.wait(30) == 0
