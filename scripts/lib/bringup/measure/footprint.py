"""Footprint and OS performance in a ramdisk (seed 002's last two sections).

For each kernel of a board: boot the ramdisk with mem_eat and lmbench in it,
log in, read `free` and /proc/meminfo, eat memory until the allocator or the
OOM killer stops it, run the lmbench set through the runner, and write
logs/<board>/<kernel>/footprint.json and lmbench.json.  The kernel's
`Memory:` line comes from the boot's own console lines.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pexpect

from bringup import records, stats, targets
from bringup.boot import rounds
from bringup.boot.session import BootOptions, BootSession
from bringup.boot.shell import expect
from bringup.boot.target import Place, TargetFactory
from bringup.builder import lmbench as lmbench_build
from bringup.builder import rootfs
from bringup.errors import BootFailed, BringupError
from bringup.model import benchset
from bringup.model.benchset import BenchSet, load_set
from bringup.model.board import Board
from bringup.model.bootpath import measure_path
from bringup.model.clocks import clock_of
from bringup.model.milestones import load_rules
from bringup.parse import lmbench as lp
from bringup.parse import meminfo
from bringup.util import clock, cpio, debs, environment, lock, paths, space
from bringup.util.aptprivate import PrivateApt
from bringup.util.progress import Progress

SKIP_PREFIXES = (
    "usr/share/doc",
    "usr/share/man",
    "usr/share/locale",
    "usr/share/lintian",
    "usr/share/info",
    "usr/include",
    "usr/share/bug",
)


def mem_eat_binary(board: Board, cache: Path) -> Path:
    cc = f"{rootfs.userspace_prefix(board, cache)}gcc"
    if not shutil.which(cc):
        raise BringupError(f"mem_eat needs {cc} for the {board.arch.debian_arch} userspace (make deps)")
    src = paths.ROOT / "scripts" / "mem_eat" / "mem_eat.c"
    out = (
        cache / "userspace" / board.arch.debian_arch / ("mem_eat" if board.libc == "glibc" else f"mem_eat-{board.libc}")
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists() and out.stat().st_mtime >= src.stat().st_mtime:
        return out
    p = subprocess.run([cc, "-static", "-O2", "-o", str(out), str(src)], capture_output=True, text=True)
    if p.returncode != 0:
        raise BringupError(f"building mem_eat with {cc} failed: {p.stderr.strip()[-300:]}")
    return out


def deb_entries(deb: Path, remap=None) -> list[cpio.Entry]:
    """A .deb's files as cpio entries (docs and headers left out)."""
    out, data = [], {}
    for member in debs.members(deb):
        m, name = member.info, member.name
        if not name or name.startswith(SKIP_PREFIXES):
            continue
        if remap:
            name = remap(name)
            if name is None:
                continue
        if m.isdir():
            out.append(cpio.directory(name, m.mode & 0o7777))
        elif m.issym():
            out.append(cpio.symlink(name, m.linkname))
        elif m.isfile():
            data[name] = member.read()
            out.append(cpio.file(name, data[name], m.mode & 0o7777))
        elif m.islnk():
            target = debs.path_in_deb(m.linkname)
            if target in data:
                out.append(cpio.file(name, data[target], m.mode & 0o7777))
    return out


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


def bench_files(bset: BenchSet, mode: str, instruction_clock: bool = False) -> list[cpio.Entry]:
    """The runner's benchmark list and environment; on the instruction clock the quick set
    exports instruction_clock_env after quick_env (a longer interval: docs/clock.md)."""
    q = bset.quick_flags if mode == "quick" else ""
    lines = []
    for b in bset.bench:
        if mode == "quick" and not b.quick:
            continue
        lines.append(f"{b.name}\t{b.cmd.replace('{q}', q)}")
    env = ["LMBENCH_BIN=/usr/lib/lmbench/bin", f"BENCH_SETUP='{bset.setup}'"]
    if mode == "quick" and bset.quick_env:
        env.append(f"export {bset.quick_env}")
    if mode == "quick" and instruction_clock and bset.instruction_clock_env:
        env.append(f"export {bset.instruction_clock_env}")
    return [
        cpio.directory("etc/bringup"),
        cpio.file("etc/bringup/bench.list", ("\n".join(lines) + "\n").encode()),
        cpio.file("etc/bringup/bench.env", ("\n".join(env) + "\n").encode()),
    ]


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


def autorun_steps(lmbench: bool) -> list[cpio.Entry]:
    """The ramdisk's steps.list: free, /proc/meminfo, mem_eat, and the lmbench pass."""
    steps = [("free", "free"), ("meminfo", "cat /proc/meminfo"), ("mem_eat", "mem_eat 1024")]
    steps += [("lmbench", "bringup-bench")] if lmbench else []
    return [
        cpio.directory("etc/bringup"),
        cpio.file("etc/bringup/steps.list", "".join(f"{n}\t{c}\n" for n, c in steps).encode()),
    ]


def _step(exp, name: str, timeout: float, cancel) -> tuple[str, int]:
    try:
        expect(exp, rf"@@@ STEP BEGIN {name} @@@\r?\n", timeout, cancel)
        expect(exp, rf"@@@ STEP END {name} rc=(-?\d+) @@@", timeout, cancel)
    except pexpect.TIMEOUT:
        raise BootFailed(f"step '{name}' did not finish within {timeout:.0f}s") from None
    return exp.before.replace("\r\n", "\n").replace("\r", ""), int(exp.match.group(1))


def measure_autorun(
    session: BootSession, bset: BenchSet, mode: str, lm_missing: str | None, timeout_factor: float, say=print
) -> dict:
    """The footprint steps the ramdisk ran by itself (AUTORUN): their outputs, as measure()
    gives them, read from the console between their markers; nothing is typed."""
    exp = session.console.expect(timeout=60 * timeout_factor)
    cancel = session.cancel
    out: dict = {}
    for name in ("free", "meminfo", "mem_eat"):
        if name == "mem_eat":
            say("    mem_eat ...")
        out[name], rc = _step(exp, name, STEP_TIMEOUTS[name] * timeout_factor, cancel)
        if name == "mem_eat":
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
    out["console_text"] = "\n".join(line.text for line in session.console.lines)
    return out


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
) -> dict:
    """The footprint steps in a booted ramdisk, through the session's shell: free,
    /proc/meminfo, mem_eat, and the lmbench passes; their outputs (each lmbench pass
    also parsed, once: `lmbench_parsed`)."""
    sh = session.shell()
    free_out, _ = sh.run("free", timeout=20, name="free")
    mi_out, _ = sh.run("cat /proc/meminfo", timeout=20, name="meminfo")
    say("    mem_eat ...")
    eat_out, eat_rc = sh.run("mem_eat 1024", timeout=300, name="mem_eat")
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
    out["console_text"] = "\n".join(line.text for line in session.console.lines)
    return out


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
) -> dict:
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
    for kid in only or []:
        board.kernel(kid)  # an unknown --kernel is refused here, before the ramdisk is built
    rule = rounds.rule(lmbench_runs, until_ci, max_rounds)  # refused here, before any work
    if mode not in ("quick", "full", "none"):
        raise BringupError(f"lmbench mode {mode!r}: use quick, full or none")
    measure_path(board)  # a real board without [uboot] is refused here, before any work
    where = targets.places(board, places, say=say)  # PLACES on a board not in a lab: refused here
    rounds.check(where, jobs, guard)  # --jobs that cannot work: refused here
    kernels = [k.id for k in board.kernels if not only or k.id in only]
    builds = build_records(board, kernels, logs)
    bdir = Path(logs) / board.name
    with lock.board(bdir, "footprint", say=say):  # one measurement of a board at a time
        return _footprint_locked(
            board, logs, cache, kernels, builds, mode, timeout_factor, lmbench_source, rule, guard, where, jobs, say
        )


def _footprint_locked(
    board, logs, cache, kernels, builds, mode, timeout_factor, lmbench_source, rule, guard, where, jobs, say
) -> dict:
    bdir = Path(logs) / board.name
    records.sets.tidy(bdir, say)
    space.check(bdir, FOOTPRINT_BYTES * len(kernels), "footprint")
    extra = [cpio.file("usr/bin/mem_eat", mem_eat_binary(board, cache).read_bytes(), 0o755)]
    bset = load_set()
    entries, lm_info, lm_missing = lmbench_payload(board, bset, mode, lmbench_source, cache, say)
    extra += entries
    # on the instruction clock the ramdisk runs the steps itself, nothing is typed (AUTORUN)
    auto = clock_of(board).deterministic
    if auto:
        extra += autorun_steps(mode != "none" and lm_missing is None)
    rd = rootfs.build(
        board,
        logs,
        cache,
        extra=extra,
        name="footprint",
        extra_key={"mem_eat": True, **lm_info, "mode": mode, "autorun": auto},
        say=say,
    )
    step = Step(
        board,
        logs,
        builds,
        Path(logs) / board.name / "rootfs" / rd.file,
        timeout_factor,
        "footprint-runs",
        cmdline=AUTORUN if auto else "",
    )
    done = run_rounds(step, kernels, bset, mode, lm_missing, rule, guard, say, places=where, jobs=jobs)
    results = {}
    failed: dict[str, dict] = {}
    with records.ResultSet(bdir, "footprint") as rset:  # every kernel's two records land at once, or none
        for kid in kernels:
            recdir = bdir / kid
            bad = next((r for r in done[kid]["rounds"] if "failed" in r), None)
            if bad is None:
                try:
                    fp, lm = _records(board, kid, builds[kid], recdir, done[kid], rd, bset, mode, lm_info, lm_missing)
                except BootFailed as e:
                    bad = {"failed": str(e), "run_dir": done[kid]["rounds"][0]["run_dir"]}
            if bad is not None:  # its earlier records stay; the failure record goes beside them
                failed[kid] = bad
                rset.write(recdir / FAILED, _failure(board, kid, bad, recdir), records.Failure)
                continue
            fp["stopped"] = rule.stopped
            rset.write(recdir / "footprint.json", fp, records.Footprint)
            rset.write(recdir / "lmbench.json", lm, records.Lmbench)
            rset.remove(recdir / FAILED)  # a stale failure record of an earlier run
            results[kid] = (fp, lm)
            say(
                f"  {kid}: code+data {fp['kernel_code_data_kb']} kB, free total {fp['total_free_kb']} kB, "
                f"malloc {fp['malloc_kb']} kB (median of {len(fp['rounds'])} round(s))"
            )
    say(f"  footprint set {rset.id}: {', '.join(results) or 'no kernel'} ({paths.rel(bdir / records.sets.SETS)})")
    if failed:
        left = "; ".join(f"{k}: {r['failed']}" for k, r in failed.items())
        raise BootFailed(
            f"footprint: left out {', '.join(failed)} (earlier records kept, failure records beside them): {left}"
        )
    return results


FAILED = records.failed_name("footprint")
FOOTPRINT_BYTES = 16 * 1024 * 1024  # what a kernel's footprint run writes, about: console logs, lmbench output


def _failure(board: Board, kid: str, bad: dict, recdir: Path) -> dict:
    """The failure record of a kernel the step left out."""
    keep = recdir / "footprint.json"
    return {
        "step": "footprint",
        "board": board.name,
        "kernel": kid,
        "created": clock.now(),
        "error": records.plain_text(bad["failed"], 2000),
        "run": str(Path(bad["run_dir"]).relative_to(recdir)) if bad.get("run_dir") else None,
        "kept": "footprint.json" if keep.exists() else None,
    }


def run_rounds(
    step: Step,
    kernels: list[str],
    bset: BenchSet,
    mode: str,
    lm_missing: str | None,
    rule: stats.UntilCI,
    guard: bool,
    say=print,
    places: Sequence[Place] | None = None,
    jobs: int = 1,
) -> dict[str, dict]:
    """The footprint's rounds on the round engine (Step.rounds), until `rule` says stop
    (rule.stopped says why); each boots every kernel once and measures free,
    /proc/meminfo, mem_eat and one lmbench pass, parsed once as the boot ends.  The
    unit of replication is the boot.  A round on a disturbed host (util/hostload.py)
    is done again.  Per kernel: its rounds (round, host, run_dir, after: the guest's
    outputs, eat: mem_eat parsed, lmbench: the pass parsed) and how many were done again."""
    of = f"{rule.limit}" if rule.pct is None else f"at most {rule.limit}"

    def boot(run: rounds.Run) -> dict:
        run_dir = step.run_dir(run)
        run.say(f"  round {run.round} of {of}, {run.kernel}: booting the ramdisk")
        try:
            after = _one_boot(step, run, run_dir, bset, mode, lm_missing)
        except BootFailed as e:  # this kernel is left out; the step goes on with the next one
            run.say(f"  {e}")
            return {"run_dir": run_dir, "failed": str(e), "eat": None, "lmbench": None}
        parsed = after.get("lmbench_parsed") or [None]
        return {
            "run_dir": run_dir,
            "after": after,
            "eat": meminfo.parse_mem_eat(after["mem_eat"]),
            "lmbench": parsed[0],
        }

    return step.rounds(kernels, rule, boot, places, jobs, guard, lambda kept: headline(kept, kernels), "footprint", say)


def headline(kept: list[rounds.Done[dict]], kernels: list[str]) -> dict[str, dict[str, dict[int, float]]]:
    """The headline values of the footprint for --until-ci, as metric -> kernel ->
    round -> value: what the management summary tests, i.e. the memory available to
    malloc() (mem_eat's total, kB) and every lmbench metric (one pass per round), from
    the values each boot parsed.  Kernel Code + Data and total "free" are not among
    them: the summary states them as sizes, untested."""
    out: dict[str, dict[str, dict[int, float]]] = {}
    for d in kept:
        eat, passed = d.result["eat"], d.result["lmbench"]
        if eat:
            out.setdefault("memory available to malloc()", {k: {} for k in kernels})[d.kernel][d.round] = eat["kb"]
        for b in (passed or {}).values():
            for m in b["metrics"]:
                out.setdefault(f"lmbench {m['name']}", {k: {} for k in kernels})[d.kernel][d.round] = m["value"]
    return out


def build_records(board: Board, kernels: list[str], logs: Path) -> dict:
    """The build record of each kernel; a kernel not built is one line saying what to run."""
    builds = {}
    for kid in kernels:
        f = Path(logs) / board.name / kid / "build.json"
        if not f.exists():
            raise BringupError(f"{board.name}/{kid}: no build record {f} (run: make build-all BOARD={board.name})")
        builds[kid] = records.read_json(f, "bringup.build")
    return builds


def measure_session(
    board,
    kid,
    build,
    recdir,
    initrd,
    run_dir,
    rules,
    timeout_factor,
    say,
    target_for: TargetFactory | None = None,
    disk: Path | None = None,
    cancel: threading.Event | None = None,
    extra_args: str = "",
    run_index: int = 0,
) -> BootSession:
    """A boot of a measurement ramdisk (footprint, workloads): QEMU boots the kernel
    directly; a real board loads the kernel we built through its bootloader, never
    whatever is in its flash.  target_for: a held place's targets (default: a fresh
    target of the board).  disk: an image QEMU attaches (the disk workloads'; a real
    board's disk is its own partition).  cancel: once set (another worker failed,
    Ctrl-C), the boot stops as interrupted."""
    return BootSession(
        board,
        kid,
        build,
        recdir,
        initrd,
        run_dir,
        target_for(run_dir) if target_for is not None else targets.for_board(board, run_dir, say=say, disk=disk),
        rules,
        options=BootOptions(
            path=measure_path(board),
            timeout_factor=timeout_factor,
            cancel=cancel,
            extra_args=extra_args,
            run_index=run_index,  # the round: its seed on the instruction clock
        ),
    )


@dataclass
class Step:
    """What every boot of a measuring step (the footprint, the workloads) shares, and its
    rounds on the round engine.  runs: the directory of the kernel's record directory
    its run directories go to (footprint-runs, workload-runs)."""

    board: Board
    logs: Path
    builds: dict
    initrd: Path
    timeout_factor: float
    runs: str
    stamp: str = field(default_factory=clock.stamp)
    cmdline: str = ""  # added to every boot's command line (the footprint's AUTORUN)

    def __post_init__(self) -> None:
        self.rules = load_rules(self.board.milestones)

    def recdir(self, kid: str) -> Path:
        return Path(self.logs) / self.board.name / kid

    def run_dir(self, run: rounds.Run) -> Path:
        return self.recdir(run.kernel) / self.runs / f"{self.stamp}{run.suffix}"

    def session(self, run: rounds.Run, run_dir: Path, disk: Path | None = None) -> BootSession:
        """The boot session of one run (measure_session) on the run's target, or, with a
        disk image, on a fresh QEMU target that attaches it."""
        k = run.kernel
        return measure_session(
            self.board,
            k,
            self.builds[k],
            self.recdir(k),
            self.initrd,
            run_dir,
            self.rules,
            self.timeout_factor,
            run.say,
            target_for=None if disk else run.target_for,
            disk=disk,
            cancel=run.cancel,
            extra_args=self.cmdline,
            run_index=run.round,
        )

    def failed(self, run: rounds.Run, what: str, e: BootFailed, run_dir: Path) -> BootFailed:
        return BootFailed(
            f"{self.board.name}/{run.kernel}: {what} run failed: {e} (log: {paths.rel(run_dir / 'console.log')})"
        )

    def rounds(self, kernels, rule, boot, places, jobs, guard, headline, what: str, say) -> dict[str, dict]:
        """The rounds on the round engine (boot/rounds.py: run): per kernel the rounds kept
        (round, host and the boot's result) and how many were done again."""
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
            kid: {
                "rounds": [{"round": d.round, "host": d.host, **d.result} for d in out.kept(kid)],
                "disturbed": out.redone(kid),
            }
            for kid in kernels
        }


def _one_boot(step: Step, run: rounds.Run, run_dir: Path, bset, mode, lm_missing) -> dict:
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
        raise step.failed(run, "footprint", e, run_dir) from None
    (run_dir / "steps.txt").write_text("\n".join(f"=== {k}\n{v}" for k, v in after.items() if k != "console_text"))
    return after


LOADER_FAILED = re.compile(
    r"error while loading shared libraries: [^\r\n]*|cannot execute binary file[^\r\n]*|"
    r"FATAL: kernel too old|Illegal instruction"
)


def cannot_run(texts: list[str], parsed: list[dict] | None = None) -> str | None:
    """Why the lmbench binaries could not run at all in this boot (every benchmark exited
    126/127 or the loader refused them, with no number), or None.  parsed: the texts
    already parsed (lp.parse_runner), so they are not parsed again."""
    results = parsed if parsed is not None else [lp.parse_runner(x) for x in texts]
    if not results or any(m for r in results for b in r.values() for m in b["metrics"]):
        return None
    if not any(r for r in results):
        return None
    m = next((LOADER_FAILED.search(x) for x in texts if LOADER_FAILED.search(x)), None)
    if m is None and not all(b.get("rc") in (126, 127) for r in results for b in r.values()):
        return None
    why = m.group(0).strip() if m else "every benchmark exited 126/127"
    return f"the lmbench binaries cannot run on this kernel ({why}); build lmbench static with LMBENCH_SRC="


def _records(board, kid, build, recdir, done, rd, bset, mode, lm_info, lm_missing) -> tuple[dict, dict]:
    """footprint.json and lmbench.json of one kernel from its rounds."""
    import statistics

    rs = done["rounds"]
    first = rs[0]
    mem_line = meminfo.parse_memory_line(first["after"]["console_text"])
    frees = [meminfo.parse_free(r["after"]["free"]) for r in rs]
    eats = [r["eat"] for r in rs]  # parsed as each boot ended
    for r, eat in zip(rs, eats, strict=True):
        if eat is None:
            raise BootFailed(f"{board.name}/{kid}: mem_eat printed no total (see {paths.rel(r['run_dir'])})")
    malloc = [e["kb"] for e in eats if e]
    free_totals = [f["total_kb"] for f in frees if f]
    rel = [r["run_dir"].relative_to(recdir).as_posix() for r in rs]
    fp = {
        "board": board.name,
        "kernel": kid,
        "kernelrelease": build["kernelrelease"],
        "build_key": build.get("key"),
        "created": clock.now(),
        "run": rel[0],
        "memory_mb": board.memory_mb,
        "memory_line": mem_line,
        "free": frees[0],
        "meminfo": meminfo.parse_meminfo(first["after"]["meminfo"]),
        "mem_eat": eats[0],
        "kernel_code_data_kb": mem_line["kernel_code_data_kb"] if mem_line else None,
        "total_free_kb": frees[0]["total_kb"] if frees[0] else None,
        "malloc_kb": int(statistics.median(malloc)),
        "rootfs": rd.ref().model_dump(),
        "rounds": [r["round"] for r in rs],
        "malloc_kb_values": malloc,
        "total_free_kb_values": free_totals,
        "runs": rel,
        "host": [r["host"] for r in rs if r["host"]],
        "disturbed": done["disturbed"],
        "clock": clock_of(board).record(),
        "environment": environment.of_board(board),
    }
    lm = {
        "board": board.name,
        "kernel": kid,
        "created": clock.now(),
        "build_key": build.get("key"),
        "mode": mode,
        "source": lm_info,
        "run": rel[0],
        "clock": clock_of(board).record(),
        "environment": environment.of_board(board),
    }
    if lm_missing or mode == "none":
        lm.update(measured=False, reason=lm_missing or "not requested", runs=0, retried=[], benchmarks={})
        return fp, lm
    texts = [r["after"]["lmbench"][0] for r in rs]
    passes = [r["lmbench"] or {} for r in rs]  # parsed as each boot ended
    cannot = cannot_run(texts, passes)
    if cannot:  # e.g. Debian's dynamic binaries on a 2.6.32 kernel: not measured, and why
        (first["run_dir"] / "lmbench.txt").write_text("\n".join(texts))
        lm.update(measured=False, reason=cannot, runs=0, retried=[], benchmarks={})
        return fp, lm
    raw = "".join(
        f"=== lmbench run {i + 1} (round {r['round']})\n{x}\n" for i, (r, x) in enumerate(zip(rs, texts, strict=True))
    )
    (first["run_dir"] / "lmbench.txt").write_text(raw)
    blocks = lp.block_lines(raw)  # where each benchmark's blocks begin: the report links there
    parsed = merge_runs(passes, [r["round"] for r in rs])
    groups = {b.name: b.group for b in bset.bench}
    for name, v in parsed.items():
        v["group"] = groups.get(name, "")
        v["raw_lines"] = blocks.get(name, [])
        v.pop("text", None)
    retried = sorted({n for r in rs for n in r["after"].get("lmbench_retried", [])})
    lm.update(measured=True, reason=None, runs=len(rs), benchmarks=parsed, retried=retried)
    return fp, lm


def merge_runs(runs: list[dict], labels: list[int] | None = None) -> dict:
    """Benchmarks of several runner passes in one: each metric keeps every
    run's value in "values" (for the report's significance test), the round of
    each value in "rounds" (when labels are given), and their median in "value"."""
    import statistics

    if len(runs) == 1 and labels is None:
        return runs[0]
    out: dict = {}
    for i, r in enumerate(runs):
        for name, b in r.items():
            if name not in out:
                out[name] = {**b, "metrics": []}
            seen = {m["name"]: m for m in out[name]["metrics"]}
            for m in b["metrics"]:
                if m["name"] not in seen:
                    mm = {**m, "values": []}
                    if labels is not None:
                        mm["rounds"] = []
                    out[name]["metrics"].append(mm)
                    seen[m["name"]] = mm
                seen[m["name"]]["values"].append(m["value"])
                if labels is not None:
                    seen[m["name"]]["rounds"].append(labels[i])
            if b.get("rc"):
                out[name]["rc"] = b["rc"]
    for b in out.values():
        for m in b["metrics"]:
            m["value"] = statistics.median(m["values"])
    return out


def render_footprint(board: str, results: dict) -> str:
    kern = list(results)
    rows = [
        ("Kernel Code + Data", "kernel_code_data_kb"),
        ('total "free"', "total_free_kb"),
        ("Available for malloc()", "malloc_kb"),
    ]
    out = [
        f"Footprint for {board} (ramdisk root, {results[kern[0]][0]['memory_mb']} MB RAM)",
        "",
        "| | " + " | ".join(kern) + " | " + " | ".join(f"Delta {k}" for k in kern[1:]) + " |",
        "|---" * (1 + 2 * len(kern) - 1) + "|",
    ]
    for label, key in rows:
        vals = [results[k][0][key] for k in kern]
        cells = [f"{v} kB" if v is not None else "-" for v in vals]
        deltas = []
        for v in vals[1:]:
            if v is None or not vals[0]:
                deltas.append("n/a")
            else:
                d = v - vals[0]
                deltas.append(
                    f"{'+' if d >= 0 else '-'} {abs(d) / vals[0] * 100:.0f} % = {'+' if d >= 0 else '-'} {abs(d)} kB"
                )
        out.append(f"| {label} | " + " | ".join(cells) + " | " + " | ".join(deltas) + " |")
    return "\n".join(out) + "\n"


def render_lmbench(results: dict) -> str:
    kern = list(results)
    lms = {k: results[k][1] for k in kern}
    missing = [k for k in kern if not lms[k]["measured"]]
    out = []
    for k in missing:
        out.append(f"lmbench {k}: not measured ({lms[k]['reason']})")
    measured = [k for k in kern if lms[k]["measured"]]
    if not measured:
        return "\n".join(out) + "\n"
    table: dict[str, dict[str, dict]] = {}
    for k in measured:
        for b in lms[k]["benchmarks"].values():
            for m in b["metrics"]:
                table.setdefault(b["group"], {}).setdefault(m["name"], {"unit": m["unit"], "better": m["better"]})[
                    k
                ] = m["value"]
    for group, metrics in table.items():
        out += [
            "",
            f"{group}:",
            "| metric | unit | better | "
            + " | ".join(measured)
            + " | "
            + " | ".join(f"Delta {k}" for k in measured[1:])
            + " |",
            "|---" * (3 + 2 * len(measured) - 1) + "|",
        ]
        for name, v in metrics.items():
            vals = [v.get(k) for k in measured]
            deltas = []
            for x in vals[1:]:
                if x is None or not vals[0]:
                    deltas.append("n/a")
                else:
                    d = (x - vals[0]) / vals[0] * 100
                    deltas.append(f"{'+' if d >= 0 else '-'} {abs(d):.0f} %")
            out.append(
                f"| {name} | {v['unit']} | {v['better']} | "
                + " | ".join("-" if x is None else f"{x:g}" for x in vals)
                + " | "
                + " | ".join(deltas)
                + " |"
            )
    return "\n".join(out) + "\n"
