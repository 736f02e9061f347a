"""The commands of the command line, as a table: each command once, with its help, its
options (those shared by several commands are declared once in options.py) and its handler;
build_parser() makes argparse's parser from it."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

from bringup import __version__
from bringup.cli import building, measuring, reading
from bringup.cli.options import (
    BOARD,
    BOOT,
    CLOCK,
    JOBS,
    KERNELS,
    LMBENCH,
    LMBENCH_MODE,
    MAKE_JOBS,
    PLACES,
    Option,
    force,
    opt,
    rounds,
    timeout_factor,
    top,
    until_ci,
)
from bringup.cli.values import Parser, count, names


@dataclass(frozen=True)
class Command:
    """A command: its name, its line in `bringup --help`, its text in `bringup <name> --help`
    (None: the line), its options in the order --help lists them, its handler (the parsed
    arguments in, the exit status out), and whether it holds a board's lock while it measures."""

    name: str
    help: str
    run: Callable[[argparse.Namespace], int]
    options: tuple[Option, ...] = ()
    description: str | None = None
    holds_board: bool = False  # it measures a board, holding its lock (util/lock.board): --no-wait is for it


PROGRAM = "Build, boot and measure Linux kernels for board bring-up. " + (
    "Boards are boards/<name>.toml; results go to logs/<board>/<kernel>/."
)
TABLE = (
    Command("boards", "list the boards under boards/", building.cmd_boards),
    Command("show", "show one board and its kernels", building.cmd_show, (opt("board"),)),
    Command(
        "build-all",
        "fetch sources and build every kernel of a board",
        building.cmd_build_all,
        (
            BOARD,
            KERNELS,
            force("rebuild even when up to date"),
            MAKE_JOBS.but(help="make -j (default: number of CPUs)"),
            opt(
                "--cross-compile",
                metavar="PREFIX",
                help="use this CROSS_COMPILE prefix for every kernel of the board, e.g. an external "
                "gcc 3/4-era toolchain: /opt/eldk/usr/bin/ppc_8xx-",
            ),
        ),
        description="Fetch sources and build every kernel listed for the board. "
        "A kernel whose source, config and toolchain are unchanged is "
        "not rebuilt. Writes logs/<board>/<kernel>/build.json.",
    ),
    Command(
        "build-report",
        "print the build results table (seed 002 style)",
        building.cmd_build_report,
        (BOARD, opt("--format", choices=("text", "csv", "json"), default="text")),
    ),
    Command(
        "build-cost",
        "the cold build cost of every kernel: make of the image without ccache, in interleaved rounds",
        building.cmd_build_cost,
        (
            BOARD,
            rounds("--runs", "rounds: cold builds of each kernel (default 3)"),
            *until_ci("the CPU time of each kernel against the first"),
            MAKE_JOBS.but(help="make -j (default: the study build's)"),
            force("measure again even when up to date"),
            opt(
                "--aa",
                action="store_true",
                help="the A/A check: --kernel (default the board's last) as two arms a and b (board <board>-aa); "
                "exits 1 when a difference is claimed",
            ),
            opt("--kernel", "-k", help="with --aa: the kernel id"),
            opt(
                "--parallel",
                type=count(1, 64),
                default=1,
                metavar="N",
                help="N builds at once, in round order (default 1): on a host shared with other work the "
                "measurement gets N shares of it; CPU time stays each build's own, wall time is shared; "
                "the host-load guard is then off",
            ),
        ),
        description="Build every kernel of the board again, only to time it: a scratch build directory, the "
        "same config and -j as the study's build, no ccache; rounds interleaved across the kernels; CPU time "
        "(user+sys of make's process tree) and wall time. The study's builds and records are not touched. "
        "Writes logs/<board>/build-cost.json (reused while the builds are the same; --force measures again) "
        "and prints each kernel against the first: the % change of CPU and wall time with its 95 % interval "
        "(paired t-test of the per-round log ratios, Benjamini-Hochberg). docs/building.md.",
    ),
    Command(
        "boot-timing",
        "boot each kernel RUNS times and time the console milestones",
        measuring.cmd_boot_timing,
        (
            BOARD,
            KERNELS,
            *BOOT,
            *until_ci("the boot milestones the summary states", "--max-runs"),
            PLACES,
            JOBS,
            opt(
                "--profile",
                default="timing",
                metavar="NAME",
                help="boot profile, configs/profiles/NAME.toml: timing (default; the board's command line), "
                "initcalls (initcall_debug: each run's initcalls go into boot-timing-initcalls.json), quiet "
                "(a silent console)",
            ),
            timeout_factor("scale every milestone timeout (0 .. 100]"),
        ),
        description="Boot every kernel of the board over its serial console (QEMU or a "
        "real board), interleaved across kernels, and time the milestones "
        "of configs/milestones.toml. Writes logs/<board>/<kernel>/boot/<run>/ "
        "and logs/<board>/boot-timing.json.",
        holds_board=True,
    ),
    Command(
        "footprint-report",
        "boot the ramdisk: kernel code+data, free memory, memory for malloc(), lmbench",
        measuring.cmd_footprint,
        (
            BOARD,
            KERNELS,
            *LMBENCH,
            CLOCK,
            *until_ci("memory available to malloc() and every lmbench metric"),
            timeout_factor("scale every timeout (0 .. 100]"),
            PLACES,
            JOBS,
        ),
        description="Boot each kernel with a ramdisk holding mem_eat and lmbench, and "
        "report seed 002's footprint table and the lmbench tables. Writes "
        "logs/<board>/<kernel>/footprint.json and lmbench.json.",
        holds_board=True,
    ),
    Command(
        "workloads",
        "boot a ramdisk with the application workloads of configs/workloads/ and run them in rounds",
        measuring.cmd_workloads,
        (
            BOARD,
            KERNELS,
            opt(
                "--workloads",
                "-w",
                type=names,
                metavar="A,B",
                help="the workloads to run (default: the default set of configs/workloads/; all: every one)",
            ),
            rounds("--runs", "rounds: boots of each kernel (default: 1 on the instruction clock, 3 on the host clock)"),
            opt(
                "--mode",
                choices=("quick", "full"),
                default="quick",
                help="each workload's quick (default) or full size",
            ),
            timeout_factor("scale every timeout (0 .. 100]"),
            *until_ci("every workload metric"),
            PLACES,
            JOBS,
            CLOCK,
        ),
        description="Put the Debian packages of the workloads (configs/workloads/<name>.toml, docs/workloads.md) "
        "and their libraries into a ramdisk, boot every kernel once per round (order A B, B A, ...) and run "
        "every workload in each boot. Writes logs/<board>/<kernel>/workloads.json.",
        holds_board=True,
    ),
    Command(
        "report",
        "write the study as an HTML page and Markdown: tables, charts, summary",
        reading.cmd_report,
        (BOARD,),
        description="Write logs/<board>/report/index.html (self-contained: inline CSS and SVG "
        "charts) and report.md from the board's records: build table and sizes, "
        "symbol and .config diffs, boot timeline, footprint, lmbench and the bw_mem "
        "cascade, and a management summary that states only significant "
        "differences (docs/report.md). Prints the page's path.",
    ),
    Command(
        "study",
        "the whole study: build-all, boot-timing, footprint-report, workloads, report",
        measuring.cmd_study,
        (
            BOARD,
            *BOOT,
            *LMBENCH,
            PLACES,
            opt(
                "--workloads",
                type=names,
                metavar="A,B|none",
                help="the application workloads of the workloads step (default: the default set of "
                "configs/workloads/; all: every one; none: no step)",
            ),
            rounds("--workload-runs", "workload rounds (default: 1 on the instruction clock, 3 on the host clock)"),
            opt("--workload-mode", choices=("quick", "full"), default="quick", help="workload size (default quick)"),
            MAKE_JOBS.but(
                help="make -j of the builds (default: number of CPUs); on the instruction clock also the boots "
                "at once of the measuring steps (default: one per CPU)"
            ),
            force("run every step again"),
            opt(
                "--no-build-cost",
                dest="build_cost",
                action="store_false",
                help="leave out the cold build cost (make all BUILD_COST=0): every kernel built again without "
                "ccache, in rounds, only to be timed (bringup build-cost)",
            ),
            rounds("--build-cost-runs", "rounds of the cold build cost (default 3)"),
        ),
        description="Run build-all, boot-timing, footprint-report, workloads and report for the board, "
        "in order, skipping a step whose records are up to date (same builds, "
        "ramdisk, boot path, runs, lmbench mode and workloads). Prints the report's path.",
        holds_board=True,
    ),
    Command(
        "aa",
        "A/A check: one kernel as two arms through boot timing and footprint; the summary must claim nothing",
        measuring.cmd_aa,
        (
            BOARD,
            opt("--kernel", "-k", help="the kernel id (default: the board's last kernel)"),
            *BOOT,
            LMBENCH_MODE,
            rounds("--lmbench-runs", "footprint rounds (default: 2 on the instruction clock, 5 on the host clock)"),
            opt(
                "--delay-ms",
                type=count(0, 60000),
                default=0,
                metavar="MS",
                help="the sensitivity check (make ab): arm b's init waits MS ms before 'userspace up' "
                "(bringup.delay_ms= on its command line; arm a gets bringup.delay_ms=0); the summary must claim "
                "that difference, right sign and size, and nothing else",
            ),
        ),
        description="Boot the same build of one kernel as two arms 'a' and 'b' (board <board>-aa; nothing is "
        "built) through boot timing and the footprint in rounds, and report what the management summary would "
        "claim (it must claim nothing) and the per-metric false-positive rate before and after the "
        "Benjamini-Hochberg correction. Writes logs/<board>-aa/aa.json; exits 1 when a difference is claimed.",
        holds_board=True,
    ),
    Command(
        "compare",
        "compare two build records (deltas, symbol sizes, .config), or with --boot two kernels' boots",
        reading.cmd_compare,
        (
            opt("a"),
            opt("b"),
            opt("--boot", action="store_true", help="compare boots (boot-timing records), not builds"),
            top("symbols and config lines to show (default 20)"),
            opt("--csv", metavar="FILE", help="also write the deltas as CSV"),
            opt("--json", metavar="FILE", help="also write everything as JSON"),
        ),
        description="Compare two build records (two kernels, one kernel on two boards, or "
        "two runs on different days): the build table's deltas, a per-symbol "
        "size diff in the manner of bloat-o-meter, and a .config diff. A record "
        "is a build.json path, its directory, or <board>/<kernel> under logs/. "
        "With --boot, two kernels' boots from boot-timing records: each milestone's medians, shift "
        "with its 95 % interval and the study's test over the boots (Benjamini-Hochberg), and the "
        "initcall attribution when both booted with initcall_debug; a side is <record>.json:<kernel> "
        "or <board>/<kernel> (its boot-timing-initcalls.json, else boot-timing.json).",
    ),
    Command(
        "parse",
        "parse a log made elsewhere and print JSON",
        reading.cmd_parse,
        (
            opt("what", choices=("bootlog", "lmbench", "initcalls")),
            opt("file", help="the log file, or - for standard input"),
            opt("--board", "-b", help="use this board's milestone overrides"),
            opt(
                "--json",
                action="store_true",
                help="print JSON (bootlog and lmbench always do; initcalls prints a table without it)",
            ),
            opt(
                "--map",
                metavar="SYSTEM_MAP",
                help="initcalls: the kernel's System.map, to name initcalls printed as addresses (no "
                "CONFIG_KALLSYMS) and give each its level (early, core, ..., late)",
            ),
            top("initcalls: the slowest N in the table (default 20)"),
        ),
        description="parse bootlog FILE: kernel version, bootloader, Memory: and Freeing lines, "
        "milestones with their times and the first fault of any boot log (raw console, dmesg, "
        "syslog/journalctl, dmesg -T, grabserial/bringup stamps; mail-quoted, wrapped, CRLF, "
        "ANSI: the format assumed is in the output). "
        "parse lmbench FILE: the values (with units and the better direction) of lmbench "
        "1.x-3.x summary tables, results files, raw tool output or the footprint runner's "
        "blocks, in lmbench.json's structure. "
        "parse initcalls FILE: the initcall_debug lines of any era (2.6.0's 'Calling initcall 0x...', 2.6.25's "
        "'ran for N msecs', today's 'calling fn @ pid' / 'returned N after N usecs'): per initcall the function, "
        "module, duration, start time and return value. See docs/formats.md.",
    ),
    Command(
        "import",
        "import a boot log or an lmbench result made elsewhere as a pseudo-kernel of a board",
        reading.cmd_import,
        (
            opt("what", choices=("bootlog", "lmbench")),
            opt("file", help="the boot log or lmbench file"),
            BOARD.but(help="the board whose report shows it"),
            opt("--kernel", "-k", required=True, help="the pseudo-kernel's id (not a kernel of the board)"),
            opt("--label", help="a note kept with the records and shown in the report"),
            opt("--host", help="lmbench: the host (or 'host OS') of a summary with several"),
            opt("--root", choices=("ramdisk", "nfs"), help="bootlog: the boot table it joins (default ramdisk)"),
            opt("--replace", action="store_true", help="overwrite earlier records of KERNEL"),
        ),
        description="Store the values of a boot log (milestones with their times, the Memory: line) or of "
        "an lmbench summary, results file or raw output as the records of a pseudo-kernel KERNEL of "
        "BOARD (logs/BOARD/KERNEL/), marked imported with the file's sha256, so that `make report` "
        "shows it beside the live kernels (never tested). Formats: docs/formats.md; see docs/import.md.",
    ),
    Command(
        "validate",
        "check data files (boards, configs) and records without doing any work",
        reading.cmd_validate,
        (
            opt("files", nargs="+", metavar="FILE"),
            opt("--kind", choices=reading.VALIDATE_KINDS, help="what the files are (default: from where they are)"),
        ),
        description="Check each FILE as the step that reads it would: a board file (any .toml elsewhere), "
        "configs/arch/*.toml, configs/era/*.toml, configs/milestones.toml, configs/lmbench.toml, "
        "configs/profiles/*.toml, configs/workloads/*.toml, or a record (*.json). The first fault ends "
        "it in one line naming the file, the field and the value (docs/errors.md).",
    ),
    Command(
        "doc",
        "print generated documentation (board-files: docs/board-files.md; board-schema: "
        "docs/board-schema.json, the JSON Schema of a board file; errors: docs/errors.md)",
        reading.cmd_doc,
        (opt("what", choices=("board-files", "board-schema", "errors")),),
    ),
)

COMMANDS = {c.name: c for c in TABLE}  # by name; the order is --help's

PROGRAM_OPTIONS = (
    opt("--version", action="version", version=f"bringup {__version__}"),
    opt(
        "--no-wait",
        action="store_true",
        help=f"a measuring step ({', '.join(c.name for c in TABLE if c.holds_board)}) refuses at once, naming "
        "the holder, when another run measures the board, instead of waiting for it (make NO_WAIT=1); one "
        "measurement of a board at a time (docs/records.md)",
    ),
)


def build_parser() -> argparse.ArgumentParser:
    """argparse's parser of the table: each command with its options and its handler (`fn`)."""
    parser = Parser(prog="bringup", description=PROGRAM)
    for option in PROGRAM_OPTIONS:
        option.add(parser)
    sub = parser.add_subparsers(dest="cmd", metavar="COMMAND", required=True, parser_class=Parser)
    for command in COMMANDS.values():
        s = sub.add_parser(command.name, help=command.help, description=command.description)
        for option in command.options:
            option.add(s)
        s.set_defaults(fn=command.run)
    return parser
