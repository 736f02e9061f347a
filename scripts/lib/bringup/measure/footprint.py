"""Footprint and OS performance in a ramdisk (seed 002's last two sections).

For each kernel of a board: boot the ramdisk with mem_eat and lmbench in it,
log in, read `free` and /proc/meminfo, eat memory until the allocator or the
OOM killer stops it, run the lmbench set through the runner, and write
logs/<board>/<kernel>/footprint.json and lmbench.json.  The kernel's
`Memory:` line comes from the boot's own console lines.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pexpect

from bringup import records, stats, targets
from bringup.boot import rounds
from bringup.boot.session import DEFAULTS, BootOptions, BootSession
from bringup.boot.shell import expect
from bringup.boot.target import Place, TargetFactory
from bringup.builder import lmbench as lmbench_build
from bringup.builder import rootfs
from bringup.builder.memeat import mem_eat_binary
from bringup.errors import BootFailed, BringupError
from bringup.measure.footprintrecords import (
    BootT,
    FootprintBoot,
    GuestOutputs,
    KernelFootprint,
    KernelRounds,
    Payload,
    build_records,
    cannot_run,
    failure_record,
    headline,
    kernel_records,
    left_out,
    merge_runs,
)
from bringup.measure.footprinttable import render_footprint, render_lmbench
from bringup.measure.guestfiles import MEM_EAT, autorun_steps, bench_files, deb_entries
from bringup.model import benchset
from bringup.model.benchset import BenchSet, load_set
from bringup.model.board import Board
from bringup.model.bootpath import measure_path
from bringup.model.clocks import clock_of
from bringup.model.milestones import load_rules
from bringup.parse import lmbench as lp
from bringup.parse import meminfo
from bringup.util import clock, cpio, lock, paths, space
from bringup.util.aptprivate import PrivateApt
from bringup.util.progress import Progress

__all__ = [  # besides its own: the names of its parts, as the footprint's (workloads, the command line)
    "autorun_steps",
    "bench_files",
    "build_records",
    "cannot_run",
    "deb_entries",
    "footprint",
    "merge_runs",
    "render_footprint",
    "render_lmbench",
]


def lmbench_entries(arch: str, cache: Path, say=print) -> tuple[list[cpio.Entry], dict]:
    """Debian's lmbench binaries for a Debian architecture, flattened into
    /usr/lib/lmbench/bin, plus the shared libraries they need (libc6, libtirpc3
    and the closure apt resolves)."""
    apt = PrivateApt(
        cache / "apt",
        rootfs.USERSPACE_SUITE,
        components=("main", "non-free"),
        architectures=tuple(dict.fromkeys(("amd64", arch))),
    )
    try:
        version = apt.candidate(f"lmbench:{arch}")
    except BringupError:
        version = None
    if version is None:
        raise BringupError(
            f"lmbench: Debian has no lmbench binaries for {arch}; give an lmbench 3.0-a9 "
            f"source to build it (LMBENCH_SRC=<tree|tarball|URL> [LMBENCH_SHA256=...])"
        )

    def flatten(name):
        parts = name.split("/")
        if name.startswith("usr/lib/lmbench/bin/") and len(parts) == 6:
            if parts[5].endswith((".o", ".a")):
                return None
            return f"usr/lib/lmbench/bin/{parts[5]}"
        if name.startswith("usr/lib/lmbench/bin"):
            return "usr/lib/lmbench/bin" if len(parts) <= 5 else None
        return None if name.startswith("usr/bin") else name

    say(f"  lmbench {version} ({arch}) and its libraries from Debian")
    entries = deb_entries(apt.download(f"lmbench:{arch}"), flatten)
    libs = [
        p for p in apt.depends_closure([f"libc6:{arch}", f"libtirpc3:{arch}"]) if p.endswith(f":{arch}") or ":" not in p
    ]
    libs_arch = [pkg if ":" in pkg else f"{pkg}:{arch}" if pkg != "libtirpc-common" else pkg for pkg in libs]
    debs = apt.download_many(libs_arch)  # one apt-cache call and one apt-get call for all
    for pkg in libs_arch:
        entries += deb_entries(debs[pkg])
    return entries, {
        "lmbench": f"debian {rootfs.USERSPACE_SUITE} lmbench:{arch} {version}",
        "origin": "debian",
        "version": version,
        "libraries": libs,
    }


def run_benchmarks(
    exp, bset: BenchSet, mode: str, factor: float, say=print, only: list | None = None, cancel=None
) -> str:
    """Start the runner and follow its blocks; each benchmark has its own timeout.  cancel:
    once set (another worker failed, Ctrl-C), the pass stops as interrupted."""
    exp.sendline(f"bringup-bench {' '.join(only or [])}; echo '@@@ ''RUNNER DONE' $?")
    text = follow_benchmarks(exp, bset, mode, factor, say, only, cancel)
    exp.expect(r"@@@ RUNNER DONE \d+", timeout=30 * factor)
    return text


def follow_benchmarks(
    exp, bset: BenchSet, mode: str, factor: float, say=print, only: list | None = None, cancel=None
) -> str:
    """Follow the runner's blocks as they come (typed, or started by the ramdisk itself)."""
    names = [b for b in bset.bench if (mode == "full" or b.quick) and (not only or b.name in only)]
    mult = 1 if mode == "quick" else bset.full_timeout_factor
    text = []
    # a line per benchmark when not on a terminal: a pass takes minutes under emulation
    with Progress("    lmbench pass", total=len(names), unit="benchmarks", say=say, every=0) as prog:
        for b in names:
            t = b.timeout * mult * factor
            try:
                expect(exp, rf"@@@ BEGIN {b.name} @@@", t, cancel)
                expect(exp, rf"@@@ END {b.name} rc=-?\d+ @@@", t, cancel)
            except pexpect.TIMEOUT:
                raise BootFailed(f"lmbench step '{b.name}' did not finish within {t:.0f}s") from None
            text.append(f"@@@ BEGIN {b.name} @@@{exp.before}{exp.after}")
            prog.advance(note=b.name)
    return "\n".join(text)


# --- a measurement boot without typed input (the instruction clock) ----------------
#
# A command typed on the serial console reaches the guest at a virtual time the host
# decides; on the instruction clock everything after it shifts (the tick's phase, the
# entropy), and lmbench's short intervals move by tens of percent from boot to boot
# (docs/instruction-clock.md).  So on that clock the footprint's steps are written into
# the ramdisk (/etc/bringup/steps.list), the kernel argument AUTORUN makes rcS run them
# (rootfs-overlay/usr/bin/bringup-steps), and bringup only reads their output between
# the markers, typing nothing: two boots of one kernel print the same numbers.

AUTORUN = "bringup.autorun"
STEP_TIMEOUTS = {"free": 20, "meminfo": 20, "mem_eat": 300}


def _step(exp, name: str, timeout: float, cancel) -> tuple[str, int]:
    try:
        expect(exp, rf"@@@ STEP BEGIN {name} @@@\r?\n", timeout, cancel)
        expect(exp, rf"@@@ STEP END {name} rc=(-?\d+) @@@", timeout, cancel)
    except pexpect.TIMEOUT:
        raise BootFailed(f"step '{name}' did not finish within {timeout:.0f}s") from None
    return exp.before.replace("\r\n", "\n").replace("\r", ""), int(exp.match.group(1))


def measure_autorun(
    session: BootSession, bset: BenchSet, mode: str, lm_missing: str | None, timeout_factor: float, say=print
) -> GuestOutputs:
    """The footprint steps the ramdisk ran by itself (AUTORUN): their outputs, as measure()
    gives them, read from the console between their markers; nothing is typed."""
    exp = session.console.expect(timeout=60 * timeout_factor)
    cancel = session.cancel
    out: dict = {}
    for name in ("free", "meminfo", "mem_eat"):
        if name == "mem_eat":
            say("    mem_eat ...")
        out[name], rc = _step(exp, name, STEP_TIMEOUTS[name] * timeout_factor, cancel)
    out["mem_eat_rc"] = rc
    if mode != "none" and lm_missing is None:
        t = 60 * timeout_factor
        try:
            expect(exp, r"@@@ STEP BEGIN lmbench @@@", t, cancel)
        except pexpect.TIMEOUT:
            raise BootFailed(f"step 'lmbench' did not start within {t:.0f}s") from None
        text = follow_benchmarks(exp, bset, mode, timeout_factor, say, cancel=cancel)
        _step_end(exp, "lmbench", t, cancel)
        # no second try of a benchmark that printed nothing: the same boot prints the same
        out["lmbench"], out["lmbench_parsed"], out["lmbench_retried"] = [text], [lp.parse_runner(text)], []
    return GuestOutputs(**out, console_text="\n".join(line.text for line in session.console.lines))


def _step_end(exp, name: str, timeout: float, cancel) -> None:
    try:
        expect(exp, rf"@@@ STEP END {name} rc=-?\d+ @@@", timeout, cancel)
    except pexpect.TIMEOUT:
        raise BootFailed(f"step '{name}' did not end within {timeout:.0f}s") from None


def lmbench_payload(
    board: Board,
    bset: BenchSet,
    mode: str,
    lmbench_source: dict | None,
    cache: Path,
    say=print,
    toolchain: str | None = None,
) -> tuple[list[cpio.Entry], dict, str | None]:
    """The ramdisk's lmbench files, where they came from, and why lmbench cannot be
    measured (None: it can).  A source the user names is built; otherwise Debian's
    binaries where Debian has them, else bringup's build of configs/lmbench.toml's
    [source] (from the download directories).  toolchain: the one of
    [source_build.toolchains] to build with (default: the set's own)."""
    if mode == "none":
        return [], {}, None
    arch = board.arch.debian_arch
    progs = benchset.programs(bset)
    # a musl board's lmbench is built with its musl prefix: Debian's glibc binaries cannot run on 2.4
    ucc = rootfs.userspace_prefix(board, cache, say)
    if toolchain is None and board.libc != "glibc":
        toolchain = board.libc
    if lmbench_source:  # a source the user named and that cannot be used is an error, not a footnote
        entries, info = lmbench_build.build(
            lmbench_source, bset.source_build, ucc, arch, cache, say, programs=progs, toolchain=toolchain
        )
        return entries + bench_files(bset, mode, clock_of(board).deterministic), info, None
    try:
        if board.libc != "glibc":
            raise BringupError(
                f"lmbench: Debian's binaries need glibc, and board {board.name}'s userspace is {board.libc}"
            )
        entries, info = lmbench_entries(arch, cache, say)
    except BringupError as e:  # no Debian binaries for this architecture (or libc): bringup's own build
        try:
            spec = lmbench_build.default_spec(bset.source, cache, say)
            say(f"  {e}: bringup builds lmbench {bset.source.version} from {spec['tarball']}")
            entries, info = lmbench_build.build(
                spec, bset.source_build, ucc, arch, cache, say, programs=progs, toolchain=toolchain
            )
        except BringupError as e2:  # no source, or it does not build here: footprint only, said so
            say(f"  {e}; {e2}: footprint only")
            return [], {}, f"{e}; {e2}"
        info["verified"] = spec["verified"]
    return entries + bench_files(bset, mode, clock_of(board).deterministic), info, None


def measure(
    session: BootSession,
    bset: BenchSet,
    mode: str,
    lm_missing: str | None,
    lmbench_runs: int,
    timeout_factor: float,
    say=print,
) -> GuestOutputs:
    """The footprint steps in a booted ramdisk, through the session's shell: free,
    /proc/meminfo, mem_eat, and the lmbench passes; their outputs (each lmbench pass
    also parsed, once: `lmbench_parsed`)."""
    sh = session.shell()
    free_out, _ = sh.run("free", timeout=20, name="free")
    mi_out, _ = sh.run("cat /proc/meminfo", timeout=20, name="meminfo")
    say("    mem_eat ...")
    eat_out, eat_rc = sh.run(MEM_EAT, timeout=300, name="mem_eat")
    out: dict = {"free": free_out, "meminfo": mi_out, "mem_eat": eat_out, "mem_eat_rc": eat_rc}
    if mode != "none" and lm_missing is None:
        sh.run("true", timeout=10, name="settle")
        texts: list[str] = []
        parsed: list[dict] = []
        retried: list[str] = []
        for i in range(lmbench_runs):
            if lmbench_runs > 1:
                say(f"    lmbench run {i + 1}/{lmbench_runs}")
            text = run_benchmarks(sh.exp, bset, mode, timeout_factor, say, cancel=sh.cancel)
            got = lp.parse_runner(text)  # each pass is parsed once, here
            # lmbench prints nothing when a result comes out <= 0 after its overhead
            # correction, which happens now and then with -N 1 under emulation: run
            # those once more, and record that they were retried
            empty = [n for n, v in got.items() if not v["metrics"]]
            if empty:
                say(f"    no number from {', '.join(empty)}: running once more")
                again = run_benchmarks(sh.exp, bset, mode, timeout_factor, say, only=empty, cancel=sh.cancel)
                text += "\n" + again
                got.update(lp.parse_runner(again))  # what parsing the whole text gives: a later block wins
            texts.append(text)
            parsed.append(got)
            retried += empty
        out["lmbench"], out["lmbench_parsed"], out["lmbench_retried"] = texts, parsed, retried
    return GuestOutputs(**out, console_text="\n".join(line.text for line in session.console.lines))


def footprint(
    board: Board,
    logs: Path,
    cache: Path,
    only: list | None = None,
    mode: str = "quick",
    timeout_factor: float = 1.0,
    lmbench_source: dict | None = None,
    lmbench_runs: int = 1,
    say=print,
    guard: bool = True,
    until_ci: float | None = None,
    max_rounds: int = stats.UNTIL_CI_MAX_ROUNDS,
    places: list[str] | None = None,
    jobs: int = 1,
) -> dict[str, KernelFootprint]:
    """lmbench_runs rounds of boots (one per kernel per round); footprint.json and
    lmbench.json per kernel, with every round's values.  until_ci (a width in %):
    more rounds until the 95 % interval of every headline difference (headline()) is
    that narrow, at most max_rounds (stats.UntilCI); footprint.json's `stopped`
    says why the rounds stopped.  The rounds run on the round engine (boot/rounds.py):
    a labgrid place is held for all the rounds (acquired once, released at the end),
    several places (places, or the board file's) run whole rounds in parallel, and a
    board that is not a labgrid board runs up to `jobs` boots at once (without the
    guard: rounds.check())."""
    if lmbench_runs < 1:
        raise BringupError(f"lmbench runs {lmbench_runs}: give 1 or more")
    for kernel_id in only or []:
        board.kernel(kernel_id)  # an unknown --kernel is refused here, before the ramdisk is built
    rule = rounds.rule(lmbench_runs, until_ci, max_rounds)  # refused here, before any work
    if mode not in ("quick", "full", "none"):
        raise BringupError(f"lmbench mode {mode!r}: use quick, full or none")
    measure_path(board)  # a real board without [uboot] is refused here, before any work
    where = targets.places(board, places, say=say)  # PLACES on a board not in a lab: refused here
    rounds.check(where, jobs, guard)  # --jobs that cannot work: refused here
    kernels = [k.id for k in board.kernels if not only or k.id in only]
    builds = build_records(board, kernels, logs)
    ask = Ask(board, Path(logs), cache, builds, mode, timeout_factor, lmbench_source, rule, guard, where, jobs, say)
    with lock.board(ask.bdir, "footprint", say=say):  # one measurement of a board at a time
        return _footprint_locked(ask)


@dataclass
class Ask:
    """One footprint invocation, checked: what its ramdisk, rounds and records share."""

    board: Board
    logs: Path
    cache: Path
    builds: dict[str, records.Build]  # each kernel's build record (build_records)
    mode: str  # lmbench: quick, full or none
    timeout_factor: float
    lmbench_source: dict | None
    rule: stats.UntilCI
    guard: bool
    places: Sequence[Place]
    jobs: int
    say: Callable[[str], Any]

    @property
    def kernels(self) -> list[str]:
        return list(self.builds)

    @property
    def bdir(self) -> Path:
        return self.logs / self.board.name


def _footprint_locked(ask: Ask) -> dict[str, KernelFootprint]:
    records.sets.tidy(ask.bdir, ask.say)
    space.check(ask.bdir, FOOTPRINT_BYTES * len(ask.kernels), "footprint")
    payload = _ramdisk(ask)
    step = MeasuringStep(
        ask.board,
        ask.logs,
        ask.builds,
        ask.bdir / "rootfs" / payload.rootfs.file,
        ask.timeout_factor,
        "footprint-runs",
        cmdline=AUTORUN if payload.autorun else "",
    )
    return _write(ask, _rounds(step, ask, payload), payload)


def _ramdisk(ask: Ask) -> Payload:
    """The footprint's ramdisk: mem_eat, lmbench (lmbench_payload) and, on the instruction
    clock, the steps the ramdisk runs by itself (AUTORUN: nothing is typed)."""
    board, logs, cache, mode, say = ask.board, ask.logs, ask.cache, ask.mode, ask.say
    extra = [cpio.file("usr/bin/mem_eat", mem_eat_binary(board, cache).read_bytes(), 0o755)]
    bset = load_set()
    entries, lm_info, lm_missing = lmbench_payload(board, bset, mode, ask.lmbench_source, cache, say)
    extra += entries
    auto = clock_of(board).deterministic
    if auto:
        extra += autorun_steps(mode != "none" and lm_missing is None)
    ramdisk = rootfs.build(
        board,
        logs,
        cache,
        extra=extra,
        name="footprint",
        extra_key={"mem_eat": True, **lm_info, "mode": mode, "autorun": auto},
        say=say,
    )
    return Payload(ramdisk, bset, lm_info, lm_missing, auto)


def _write(ask: Ask, done: dict[str, KernelRounds[FootprintBoot]], payload: Payload) -> dict[str, KernelFootprint]:
    """Every kernel's two records (kernel_records) in one result set, or its failure record
    beside its earlier ones; a kernel left out fails the step once the others are written."""
    board, bdir, builds, say = ask.board, ask.bdir, ask.builds, ask.say
    results: dict[str, KernelFootprint] = {}
    failed: dict[str, FootprintBoot] = {}
    with records.ResultSet(bdir, "footprint") as rset:  # every kernel's two records land at once, or none
        for kernel_id, rounds_of in done.items():
            recdir = bdir / kernel_id
            bad = next((r for r in rounds_of.rounds if r.failed is not None), None)
            if bad is None:
                try:
                    footprint_record, lmbench_record = kernel_records(
                        board, kernel_id, builds[kernel_id], recdir, rounds_of, payload, ask.mode
                    )
                except BootFailed as e:
                    bad = replace(rounds_of.rounds[0], failed=str(e))
            if bad is not None:  # its earlier records stay; the failure record goes beside them
                failed[kernel_id] = bad
                rset.write(recdir / FAILED, failure_record(board, kernel_id, bad, recdir), records.Failure)
                continue
            footprint_record["stopped"] = ask.rule.stopped
            written = KernelFootprint(
                rset.write(recdir / "footprint.json", footprint_record, records.Footprint),
                rset.write(recdir / "lmbench.json", lmbench_record, records.Lmbench),
            )
            rset.remove(recdir / FAILED)  # a stale failure record of an earlier run
            results[kernel_id] = written
            memory = written.footprint
            say(
                f"  {kernel_id}: code+data {memory.kernel_code_data_kb} kB, free total {memory.total_free_kb} kB, "
                f"malloc {memory.malloc_kb} kB (median of {len(memory.rounds)} round(s))"
            )
    say(f"  footprint set {rset.id}: {', '.join(results) or 'no kernel'} ({paths.rel(bdir / records.sets.SETS)})")
    if failed:
        raise left_out("footprint", {k: r.failed or "" for k, r in failed.items()})
    return results


FAILED = records.failed_name("footprint")
FOOTPRINT_BYTES = 16 * 1024 * 1024  # what a kernel's footprint run writes, about: console logs, lmbench output


def _rounds(step: MeasuringStep, ask: Ask, payload: Payload) -> dict[str, KernelRounds[FootprintBoot]]:
    """The footprint's rounds on the round engine (MeasuringStep.rounds), until the rule says stop
    (rule.stopped says why); each boots every kernel once and measures free,
    /proc/meminfo, mem_eat and one lmbench pass, parsed once as the boot ends.  The
    unit of replication is the boot.  A round on a disturbed host (util/hostload.py)
    is done again.  Per kernel: its rounds (round, host, run_dir, after: the guest's
    outputs, eat: mem_eat parsed, lmbench: the pass parsed) and how many were done again."""
    rule, kernels, bset, mode, lm_missing = ask.rule, ask.kernels, payload.bset, ask.mode, payload.lm_missing
    of = f"{rule.limit}" if rule.pct is None else f"at most {rule.limit}"

    def boot(run: rounds.Run) -> FootprintBoot:
        run_dir = step.run_dir(run)
        run.say(f"  round {run.round} of {of}, {run.kernel}: booting the ramdisk")
        try:
            after = _one_boot(step, run, run_dir, bset, mode, lm_missing)
        except BootFailed as e:  # this kernel is left out; the step goes on with the next one
            run.say(f"  {e}")
            return FootprintBoot(run_dir, failed=str(e))
        passed = after.lmbench_parsed[0] if after.lmbench_parsed else None
        return FootprintBoot(run_dir, after=after, eat=meminfo.parse_mem_eat(after.mem_eat), lmbench=passed)

    return step.rounds(
        kernels, rule, boot, ask.places, ask.jobs, ask.guard, lambda kept: headline(kept, kernels), "footprint", ask.say
    )


def measure_session(
    step: MeasuringStep,
    kernel_id: str,
    run_dir: Path,
    say=print,
    *,
    target_for: TargetFactory | None = None,
    disk: Path | None = None,
    options: BootOptions = DEFAULTS,
) -> BootSession:
    """A boot of a measurement ramdisk (footprint, workloads) of the step's kernel kernel_id
    (its build, record directory, the step's ramdisk and milestones) into run_dir: QEMU boots
    the kernel directly; a real board loads the kernel we built through its bootloader, never
    whatever is in its flash.  target_for: a held place's targets (default: a fresh
    target of the board).  disk: an image QEMU attaches (the disk workloads'; a real
    board's disk is its own partition).  options: the run's (its round: the seed on the
    instruction clock; cancel: once set, another worker failed or Ctrl-C, the boot stops
    as interrupted; the command line's extra arguments); the path and the timeout
    factor are the step's."""
    board = step.board
    target = target_for(run_dir) if target_for is not None else targets.for_board(board, run_dir, say=say, disk=disk)
    options = replace(options, path=measure_path(board), timeout_factor=step.timeout_factor)
    build, recdir = step.builds[kernel_id], step.recdir(kernel_id)
    return BootSession(board, kernel_id, build, recdir, step.initrd, run_dir, target, step.rules, options=options)


@dataclass
class MeasuringStep:
    """What every boot of a measuring step (the footprint, the workloads) shares, and its
    rounds on the round engine.  runs: the directory of the kernel's record directory
    its run directories go to (footprint-runs, workload-runs)."""

    board: Board
    logs: Path
    builds: dict[str, records.Build]
    initrd: Path
    timeout_factor: float
    runs: str
    stamp: str = field(default_factory=clock.stamp)
    cmdline: str = ""  # added to every boot's command line (the footprint's AUTORUN)

    def __post_init__(self) -> None:
        self.rules = load_rules(self.board.milestones)

    def recdir(self, kernel_id: str) -> Path:
        return Path(self.logs) / self.board.name / kernel_id

    def run_dir(self, run: rounds.Run) -> Path:
        return self.recdir(run.kernel) / self.runs / f"{self.stamp}{run.suffix}"

    def session(self, run: rounds.Run, run_dir: Path, disk: Path | None = None) -> BootSession:
        """The boot session of one run (measure_session) on the run's target, or, with a
        disk image, on a fresh QEMU target that attaches it."""
        return measure_session(
            self,
            run.kernel,
            run_dir,
            run.say,
            target_for=None if disk else run.target_for,
            disk=disk,
            options=BootOptions(run_index=run.round, extra_args=self.cmdline, cancel=run.cancel),
        )

    def failed(self, run: rounds.Run, what: str, e: BootFailed, session: BootSession) -> BootFailed:
        """A failed run in one line: the kernel, the cause, the console log and, on QEMU, its pid."""
        proc = getattr(session.target, "proc", None)  # a QEMU target's process (targets/qemu.py)
        pid = f", QEMU pid {proc.pid}" if isinstance(proc, subprocess.Popen) else ""
        log = paths.rel(session.run_dir / "console.log")
        return BootFailed(f"{self.board.name}/{run.kernel}: {what} run failed: {e} (log: {log}{pid})")

    def rounds(
        self, kernels, rule, boot: Callable[[rounds.Run], BootT], places, jobs, guard, headline, what: str, say
    ) -> dict[str, KernelRounds[BootT]]:
        """The rounds on the round engine (boot/rounds.py: run): per kernel the boots kept,
        each with its round and the host-load guard's verdict, and how many were done again."""
        out = rounds.run(
            kernels,
            rule,
            boot,
            places=places or [targets.BoardPlace(self.board, say)],
            jobs=jobs,
            guard=guard,
            headline=headline,
            label=f"  {what} rounds",
            say=say,
        )
        return {
            kernel_id: KernelRounds(
                [replace(d.result, round=d.round, host=d.host) for d in out.kept(kernel_id)], out.redone(kernel_id)
            )
            for kernel_id in kernels
        }


def _one_boot(step: MeasuringStep, run: rounds.Run, run_dir: Path, bset, mode, lm_missing) -> GuestOutputs:
    session = step.session(run, run_dir)
    try:
        with session:
            try:
                if step.cmdline == AUTORUN:
                    after = measure_autorun(session, bset, mode, lm_missing, step.timeout_factor, run.say)
                else:
                    after = measure(session, bset, mode, lm_missing, 1, step.timeout_factor, run.say)
            except pexpect.EOF:  # QEMU died, the console went away: a failed boot, not a bug
                raise BootFailed(session.gone()) from None
    except BootFailed as e:
        raise step.failed(run, "footprint", e, session) from None
    (run_dir / "steps.txt").write_text(after.steps_text())
    return after
