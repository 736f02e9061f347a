"""What the commands' handlers share: the board of --board with its clock, the rounds and
boots at once a measuring step takes by default, the host-load guard, --until-ci, the
workloads asked for, and the checks of files the user names."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from bringup.cli.values import UNTIL_CI_DEFAULT
from bringup.errors import BringupError
from bringup.util.switches import env_switch


def say(msg: str) -> None:
    """A progress or result line on standard error (standard output is for the command's result)."""
    print(msg, file=sys.stderr, flush=True)


def board(args: argparse.Namespace):
    """The board of --board, measured with the clock of --clock (CLOCK=) when given."""
    from bringup.model.board import load_board
    from bringup.model.clocks import with_clock

    return with_clock(load_board(args.board), getattr(args, "clock", None))


def host_guard(board=None, jobs: int = 1) -> bool:
    """The host-load guard (util/hostload.py) is on unless BRINGUP_HOST_GUARD=0 (no, false, off),
    and only on the host clock: on the instruction clock a busy host slows a run, not what it measures.
    With --jobs above 1 it is off unless BRINGUP_HOST_GUARD asks for it (parallel boots disturb
    each other; the round engine refuses the guard with parallel local workers)."""
    from bringup.model.clocks import guard_needed

    on = env_switch("BRINGUP_HOST_GUARD") and (board is None or guard_needed(board))
    if on and jobs > 1 and "BRINGUP_HOST_GUARD" not in os.environ:
        say(f"bringup: --jobs {jobs}: the host-load guard is off (parallel boots would disturb each other)")
        return False
    return on


def deterministic(board) -> bool:
    """The board measures on the instruction clock (model/clocks.py)."""
    from bringup.model.clocks import clock_of

    return clock_of(board).deterministic


def boot_jobs(board, given: int | None) -> int:
    """--jobs of a measuring step, or the clock's default (model/clocks.py boot_jobs)."""
    from bringup.model import clocks

    return clocks.boot_jobs(board, given)


def runs(board, given: int | None, kind: str) -> int:
    """Rounds asked for, or the clock's default (model/clocks.py): boot, lmbench or workload rounds."""
    from bringup.model import clocks

    table = {
        "boot": clocks.DEFAULT_RUNS,
        "lmbench": clocks.DEFAULT_LMBENCH_RUNS,
        "workload": clocks.DEFAULT_WORKLOAD_RUNS,
    }[kind]
    return clocks.default_runs(board, given, table)


def until_ci(args: argparse.Namespace) -> dict:
    """The --until-ci and --max-rounds of a command, as keyword arguments (the defaults
    live in stats: UNTIL_CI_PCT, UNTIL_CI_MAX_ROUNDS)."""
    from bringup import stats

    out: dict = {}
    if args.until_ci is not None:
        out["until_ci"] = stats.UNTIL_CI_PCT if args.until_ci is UNTIL_CI_DEFAULT else args.until_ci
    if args.max_rounds is not None:
        out["max_rounds"] = args.max_rounds
    return out


def workload_names(text: str | None) -> list[str] | None:
    """--workloads A,B: those; all: ["all"] (every file); none: [] (no workloads step); not given:
    None (the default set: every workload file without default_set = false)."""
    if text is not None and text.strip() == "none":
        return []
    return [n.strip() for n in (text or "").split(",") if n.strip()] or None


def check_output_file(p: Path) -> None:
    """A file the user names to write: its directory exists, and it is not a directory."""
    if p.is_dir():
        raise BringupError(f"{p}: is a directory; name a file to write")
    if not p.parent.is_dir():
        raise BringupError(f"{p}: its directory {p.parent} does not exist")
    if p.exists() and not p.is_file():
        raise BringupError(f"{p}: not a regular file; name a file to write")


def check_input_file(p: Path) -> None:
    """A file the user names to read: a readable regular file (no directory, FIFO or device)."""
    from bringup.model.base import regular_file

    regular_file(p)
