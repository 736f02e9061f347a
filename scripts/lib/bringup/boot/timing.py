"""Boot timing: boot each kernel several times over its serial console and
time the milestones.

  boot_timing()  runs interleaved across kernels (A B A B ...), each one a
                 BootSession (session.py) on a fresh target from the caller's
                 factory, statistics, logs/<board>/boot-timing.json and the
                 seed-002 table.  The rounds are the round engine's
                 (boot/rounds.py): with several places (identical boards of a
                 labgrid lab) one worker per place runs whole rounds in
                 parallel, and the summary says which place ran each round and
                 each value; on a local board, `jobs` workers.

Rounds: the round engine (boot/rounds.py: run()) boots every kernel once per
round, in its balanced orders; boot timing passes it one kernel's boot (boot_once
into the round's run directory), the headline values --until-ci judges (headline())
and what becomes of each run (its boot.json with round and host, its line).  With
the guard, the host-load guard (util/hostload.py) judges every run; a good run on a
disturbed host is done again, up to MAX_REDO times, and the redone run is listed as
disturbed instead of entering the statistics.

until_ci (a width in %): more rounds until the 95 % interval of every headline
difference (the milestones the summary states: headline()) is that narrow, at most
max_rounds: the rule of stats.UntilCI; the summary's `stopped` says why the rounds
stopped.

A boot profile (configs/profiles/): its arguments for each kernel's version are
added to the command line, the milestones it makes optional are not required, and
with `initcalls` each kernel's initcalls over the runs go into the summary
(initcall_summary).  The summary of a profile other than `timing` is its own file.

The statistics are boot/timingsummary.py's, the terminal's table boot/timingtable.py's.
The engine talks to a Target (target.py) and a Console (console.py); it does
not know whether the target is QEMU or a board on the bench.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bringup import records, stats
from bringup.boot import rounds
from bringup.boot.session import BootOptions, boot_once, check_path_root
from bringup.boot.target import Place, TargetFactory
from bringup.boot.timingsummary import (  # the summaries' names, as boot timing's
    GUEST_REFERENCE,
    _log,
    baud_of,
    clock_time,
    console_bytes,
    console_summary,
    deferred_summary,
    headline,
    initcall_summary,
    log_key,
    on_guest_clock,
    reference,
    summarize,
)
from bringup.boot.timingtable import render_table, run_line
from bringup.errors import BringupError
from bringup.model.board import Board
from bringup.model.bootpath import check_boot_path, check_root
from bringup.model.milestones import load_rules
from bringup.model.profiles import Profile
from bringup.parse import milestones as ms
from bringup.util import clock, lock, space

__all__ = [
    "GUEST_REFERENCE",
    "MAX_REDO",
    "_log",
    "baud_of",
    "boot_timing",
    "clock_time",
    "console_bytes",
    "console_summary",
    "deferred_summary",
    "headline",
    "initcall_summary",
    "log_key",
    "on_guest_clock",
    "plan",
    "reference",
    "render_table",
    "summarize",
]

MAX_REDO = rounds.MAX_REDO  # a run on a disturbed host is done again at most this many times


def plan(
    board: Board, logs: Path, path: str, root: str = "ramdisk", only: list | None = None
) -> dict[str, tuple[records.Build, Path]]:
    """Check what boot_timing is asked, before anything is built: the kernels to boot,
    with their build records and record directories."""
    check_path_root(path, root)
    check_boot_path(board, path)  # 'direct' on a real board, 'u-boot' without [uboot]
    check_root(board, root)  # an external NFS server's export directory that is not there
    kernels = [k.id for k in board.kernels if not only or k.id in only]
    if only and set(only) - set(kernels):
        raise BringupError(f"board {board.name}: no kernel {sorted(set(only) - set(kernels))[0]!r}")
    builds = {}
    for kernel_id in kernels:
        recdir = Path(logs) / board.name / kernel_id
        f = recdir / "build.json"
        if not f.exists():
            raise BringupError(
                f"{board.name}/{kernel_id}: no build record {f} (run: make build-all BOARD={board.name})"
            )
        builds[kernel_id] = (records.read(f, records.Build), recdir)
    return builds


@dataclass
class Timing:
    """One boot-timing invocation, checked and resolved: what its rounds and its summary share."""

    board: Board
    logs: Path
    builds: dict[str, tuple[records.Build, Path]]  # plan(): each kernel's build record and record directory
    rules: ms.Rules
    rule: stats.UntilCI
    boot: BootOptions  # path, root, timeout factor; each run adds its round, arguments and cancel
    places: Sequence[Place]
    jobs: int
    guard: bool
    say: Callable[[str], Any]
    runs: int  # the rounds asked
    rootfs: records.RootfsRef
    initrd: Path
    profile: Profile | None
    args: dict[str, str] = field(init=False)  # each kernel's command-line arguments of the profile

    def __post_init__(self) -> None:
        p = self.profile
        self.args = {
            kernel_id: p.cmdline(build.version or build.kernelrelease) if p else ""
            for kernel_id, (build, _) in self.builds.items()
        }

    @property
    def kernels(self) -> list[str]:
        return list(self.builds)

    @property
    def profile_name(self) -> str:
        return self.profile.name if self.profile is not None else "timing"

    @property
    def place_names(self) -> list[str | None]:
        return [p.name for p in self.places]

    @property
    def tag(self) -> str:
        """The run directories' tag: -nfs for an NFS root, -<profile> for a profile but timing."""
        pname = self.profile_name
        return f"{'-nfs' if self.boot.root == 'nfs' else ''}{'' if pname == 'timing' else '-' + pname}"

    @property
    def bdir(self) -> Path:
        return Path(self.logs) / self.board.name


def boot_timing(
    board: Board,
    logs: Path,
    initrd: Path,
    target_for: TargetFactory | None,
    runs: int = 5,
    path: str | None = None,
    only: list | None = None,
    until_ci: float | None = None,
    max_rounds: int = stats.UNTIL_CI_MAX_ROUNDS,
    timeout_factor: float = 1.0,
    root: str = "ramdisk",
    say=print,
    rootfs_ref: records.RootfsRef | None = None,
    guard: bool = True,
    profile: Profile | None = None,
    places: Sequence[Place] | None = None,
    jobs: int = 1,
) -> records.BootTiming:
    """Boot each kernel `runs` times (the module's docstring: rounds, until_ci, profile).
    initrd: the board's ramdisk (the caller builds it: build.rootfs; rootfs_ref is its
    record's reference, kept in the summary); target_for(run_dir): a fresh target for one
    boot (bringup.targets.for_board), or places (bringup.targets.places): where the boots
    go, each held for the whole run (a labgrid place: acquired once, released at the end).
    With several places, one worker per place takes whole rounds in parallel
    (rounds.Dealer); a set-up fault or Ctrl-C on one stops them all, and every place is
    released.  jobs: on a board that is not a labgrid board, up to `jobs` boots at once,
    each worker booting fresh targets of its own (without the guard: rounds.check())."""
    path = path or board.boot
    rule = rounds.rule(runs, until_ci, max_rounds)  # refused here, before any work
    if places is None:
        if target_for is None:
            raise ValueError("boot_timing: give target_for or places")
        places = [rounds.Plain(target_for)]
    rounds.check(places, jobs, guard)  # refused here, before any work
    builds = plan(board, logs, path, root, only)
    rules = load_rules(board.milestones).for_root(root)  # e.g. an NFS boot must show the mount
    if profile is not None:
        rules = rules.optional(profile.spec.optional_milestones)
    timing = Timing(
        board,
        logs,
        builds,
        rules,
        rule,
        BootOptions(path=path, root=root, timeout_factor=timeout_factor),
        places,
        jobs,
        guard,
        say,
        runs,
        rootfs_ref or _rootfs_ref(Path(initrd)),
        Path(initrd),
        profile,
    )
    with lock.board(timing.bdir, "boot-timing", say=say):  # one measurement of a board at a time
        records.sets.tidy(timing.bdir, say)
        space.check(timing.bdir, BOOT_BYTES * len(timing.kernels) * rule.limit, "boot-timing")
        return _measure(timing)


BOOT_BYTES = 2 * 1024 * 1024  # what one boot's run directory holds, about (console logs, records; tftp/ is removed)


def _rootfs_ref(initrd: Path) -> records.RootfsRef:
    """A ramdisk given without its record's reference: its name and sha256."""
    return records.RootfsRef(file=initrd.name, sha256=hashlib.sha256(initrd.read_bytes()).hexdigest(), inputs_key=None)


def _measure(timing: Timing) -> records.BootTiming:
    """The rounds, their summary, and the summary written with its runs' records; the summary
    as written."""
    runs = _Runs(timing)
    recs, out = runs.run()
    summary = _summary(timing, runs, recs, out)
    failed = sum(k["failed"] for k in summary["kernels"].values())
    root, pname = timing.boot.root, timing.profile_name
    name = records.boot_timing_name(root, failed=failed > 0, profile=pname)
    # the summary lands with its runs' records (written as each run ended, in directories of their own)
    with records.ResultSet(timing.bdir, name.removesuffix(".json").removesuffix("-failed")) as rset:
        written = rset.write(timing.bdir / name, summary, records.BootTiming)
        if not failed:  # a failure record of an earlier invocation is stale now
            rset.remove(timing.bdir / records.boot_timing_name(root, failed=True, profile=pname))
    return written


def _summary(timing: Timing, runs: _Runs, recs: list[dict], out: rounds.Outcome[dict]) -> dict:
    """boot-timing.json: the statistics (summarize) and what the invocation was."""
    taken = out.rounds()
    several = any(timing.place_names)
    summary = summarize(timing.board, recs, timing.rules, timing.kernels, runs.place_of_run if several else None)
    summary["path"] = timing.boot.path
    summary["root"] = timing.boot.root
    summary["runs_requested"] = timing.runs
    for kernel_id in timing.kernels:
        summary["kernels"][kernel_id]["build_key"] = timing.builds[kernel_id][0].key
    summary["rootfs"] = timing.rootfs.model_dump()
    summary["order"] = [out.order[r] for r in taken]
    summary["round_places"] = [out.place_of[r] for r in taken] if several else []
    summary["places"] = [n for n in timing.place_names if n]
    summary["stopped"] = timing.rule.stopped
    summary["profile"] = timing.profile_name
    summary["cmdline_args"] = timing.args
    for kernel_id in timing.kernels:
        mine = [r for r in recs if r["kernel"] == kernel_id]
        recdir = timing.builds[kernel_id][1]
        summary["kernels"][kernel_id]["console"] = console_summary(
            mine, recdir, timing.rules, timing.board.console, runs.logs
        )
        summary["kernels"][kernel_id]["deferred"] = deferred_summary(mine, recdir, runs.logs)
    if timing.profile is not None and timing.profile.record_initcalls:
        for kernel_id in timing.kernels:
            build, recdir = timing.builds[kernel_id]
            smap = build.artifacts.get("System.map")
            timing.say(f"  {kernel_id}: reading the initcalls of its runs")
            summary["kernels"][kernel_id]["initcalls"] = initcall_summary(
                [r for r in recs if r["kernel"] == kernel_id],
                recdir,
                recdir / smap if smap else None,
                timing.rules,
                runs.logs,
            )
    return summary


class _Runs:
    """boot_timing()'s rounds on the round engine (run()): every run's record (redone ones
    marked) and the engine's outcome; besides, the place of each run (by run id) on labgrid
    places, and each good run's console.log, read once as its boot ends, for the summaries
    that read the console's lines again (console_summary, deferred_summary, initcall_summary)."""

    def __init__(self, timing: Timing):
        self.timing = timing
        self.stamp = clock.stamp()
        self.logs: dict[str, bytes] = {}
        self.place_of_run: dict[str, str] = {}

    def run_dir(self, kernel_id: str, suffix: str) -> Path:
        return (
            self.timing.builds[kernel_id][1] / "boot" / f"{self.stamp}-{self.timing.boot.path}{self.timing.tag}{suffix}"
        )

    def boot(self, run: rounds.Run) -> dict:
        """One kernel's boot of a round."""
        timing = self.timing
        build, recdir = timing.builds[run.kernel]
        d = self.run_dir(run.kernel, run.suffix)
        options = replace(timing.boot, run_index=run.round, extra_args=timing.args[run.kernel], cancel=run.cancel)
        r = boot_once(
            timing.board, run.kernel, build, recdir, timing.initrd, d, run.target_for(d), timing.rules, options
        )
        if r.get("status") == "ok" and r.get("log"):
            with contextlib.suppress(OSError):  # the summaries read the file when this fails
                # once, while the page cache holds it; keyed by kernel too: a round's run ids are alike
                self.logs[log_key(r)] = (d / r["log"]).read_bytes()
        return r

    def on_done(self, done: rounds.Done[dict]) -> None:
        """Each attempt's record gets its round and the guard's verdict, is written, and said."""
        r = done.result
        r["round"] = done.round
        if done.host is not None:
            r["host"] = done.host
        records.write(self.run_dir(done.kernel, done.run.suffix) / "boot.json", r, records.Boot)
        if done.place is not None:
            self.place_of_run[r["run_id"]] = done.place
        on = f" on {done.place}" if len(self.timing.places) > 1 and done.place else ""
        done.run.say(run_line(r, done.round, self.timing.rule.limit, self.timing.rules, on))
        if done.redone:
            r["redone"] = True  # not in the statistics; listed as disturbed

    def run(self) -> tuple[list[dict], rounds.Outcome[dict]]:
        timing = self.timing
        out = rounds.run(
            timing.kernels,
            timing.rule,
            self.boot,
            places=timing.places,
            jobs=timing.jobs,
            guard=timing.guard,
            headline=lambda kept: headline([d.result for d in kept], timing.kernels, timing.rules),
            redo_if=lambda r: r["status"] == "ok",  # a failed boot is not done again
            on_done=self.on_done,
            label="  boot rounds",
            say=timing.say,
        )
        return [d.result for d in out.runs], out
