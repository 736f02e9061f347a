"""Options that several commands take, declared once (commands.py names them in each
command's row), and the small helpers that make the ones that differ only in their help."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bringup.cli.values import UNTIL_CI_DEFAULT, count, names, number


@dataclass(frozen=True)
class Option:
    """One argument of a command: its option strings (a name for a positional) and what
    argparse's add_argument takes besides."""

    strings: tuple[str, ...]
    settings: Mapping[str, Any] = field(default_factory=dict)

    def add(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(*self.strings, **self.settings)

    def but(self, **changes: Any) -> Option:
        """The same option with some settings changed (another help text, say)."""
        return Option(self.strings, {**self.settings, **changes})


def opt(*strings: str, **settings: Any) -> Option:
    return Option(strings, settings)


BOARD = opt("--board", "-b", required=True)
KERNELS = opt("--kernel", "-k", action="append", help="only this kernel id (repeatable)")
MAKE_JOBS = opt("-j", "--jobs", type=count(1, 1024), default=None)  # make -j of builds


def force(help: str) -> Option:
    return opt("--force", action="store_true", help=help)


def rounds(name: str, help: str) -> Option:
    """A number of rounds (--runs, --lmbench-runs, ...): 1..100, N."""
    return opt(name, type=count(1, 100), default=None, metavar="N", help=help)


def timeout_factor(help: str) -> Option:
    return opt("--timeout-factor", type=number(0, 100), default=1.0, help=help)


def top(help: str) -> Option:
    return opt("--top", type=count(1, 100000), default=20, help=help)


# --- the measuring steps ----------------------------------------------------------------

CLOCK = opt(  # make's CLOCK=: what measures time, instead of the board's qemu.clock
    "--clock",
    choices=("host", "instructions"),
    default=None,
    help="what measures time (default: the board's qemu.clock): instructions (QEMU icount, deterministic: "
    "one boot per kernel, differences judged against the A/A floor) or host (rounds and tests); "
    "docs/clock.md",
)

PLACES = opt(  # make's PLACES=: the labgrid places a step's boots go to
    "--places",
    type=names,
    metavar="A,B",
    help="labgrid places to use instead of the board file's place/places (make PLACES=a,b); with "
    "several, boot-timing spreads whole rounds over them in parallel, one worker per place "
    "(docs/labgrid.md)",
)

JOBS = opt(  # make's JOBS=: local parallel boots of a measuring step (the round engine)
    "--jobs",
    "-j",
    type=count(1, 1024),
    default=None,
    metavar="N",
    help="on a board that is not a labgrid board (QEMU, a bench board): up to N boots at once, each "
    "worker with targets of its own (default: one per CPU on the instruction clock, 1 on the host "
    "clock); on the host clock turns the host-load guard off unless "
    "BRINGUP_HOST_GUARD=1 asks for it, which is refused with N above 1",
)

# the boot-timing step's (boot-timing, study, aa)
BOOT = (
    opt(
        "--runs",
        "-n",
        type=count(1, 1000),
        default=None,
        help="boots per kernel (default: 1 on the instruction clock, 5 on the host clock)",
    ),
    CLOCK,
    opt("--path", choices=("direct", "u-boot"), help="boot path (default: the board's 'boot')"),
    opt(
        "--root",
        choices=("ramdisk", "nfs"),
        default="ramdisk",
        help="root filesystem: the ramdisk (default), or the same files over NFS with the "
        "kernel's nfsroot, served by NFS-Ganesha for each run (board file [nfs]); "
        "results go to boot-timing-nfs.json",
    ),
)

LMBENCH_MODE = opt(
    "--lmbench",
    choices=("quick", "full", "none"),
    default="quick",
    help="quick: the seed's set with lmbench's speed knobs (about a minute per kernel "
    "under emulation); full: lmbench's defaults; none: footprint only",
)

# the footprint step's (footprint-report, study)
LMBENCH = (
    LMBENCH_MODE,
    opt(
        "--lmbench-source",
        metavar="TREE|TARBALL|URL",
        help="build lmbench 3.0-a9 from this source (static, with the board's cross compiler) "
        "instead of using Debian's binaries; the route for 32-bit PowerPC",
    ),
    opt("--lmbench-sha256", metavar="HEX", help="sha256 of the source tarball (required for a URL)"),
    rounds(
        "--lmbench-runs",
        "N rounds: each round boots every kernel once (order A B, B A, ...) and measures free, "
        "mem_eat and one lmbench pass; the report tests differences across the boots (default: 1 on the "
        "instruction clock, 5 on the host clock)",
    ),
)


def until_ci(what: str, *aliases: str) -> tuple[Option, ...]:
    """--until-ci [PCT] and --max-rounds N (boot-timing, footprint-report, workloads, build-cost):
    `what` names the headline differences whose interval is judged."""
    return (
        opt(
            "--until-ci",
            nargs="?",
            const=UNTIL_CI_DEFAULT,
            type=number(0, 100),
            metavar="PCT",
            help=f"add rounds (at least the rounds asked and 3) until the 95%% interval of every headline "
            f"difference ({what}) is within ±PCT%% of the first kernel's median (default width 5), at most "
            "--max-rounds; the record's 'stopped' says why the rounds stopped (docs/report.md)",
        ),
        opt(
            "--max-rounds",
            *aliases,
            dest="max_rounds",
            type=count(1, 1000),
            default=None,
            metavar="N",
            help="at most N rounds with --until-ci (default 20)",
        ),
        opt("--ci-pct-alone", default=None, help=argparse.SUPPRESS),  # make's CI_PCT= without UNTIL_CI=
    )
