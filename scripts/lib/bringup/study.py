"""The whole study in one command (make all / make study): build-all,
boot-timing, footprint-report and report, in that order, skipping a step whose
records are already there and up to date.

Up to date means:
- build: build-all's own content key (source, config inputs, toolchain, recipe);
- boot timing: boot-timing.json (boot-timing-nfs.json for root=nfs) was made
  from the current builds (build keys), with the same ramdisk, the same boot
  path, and at least as many runs; the same for each boot profile with
  `study_runs` (configs/profiles/: initcalls, boot-timing-initcalls.json), with
  its own number of runs;
- footprint: footprint.json and lmbench.json of every kernel were made from the
  current build, in the same lmbench mode, with at least as many lmbench runs,
  on the same ramdisk.
"The same ramdisk" is decided from records (the ramdisk a record ran on, the
ramdisk's own record) and the key of the ramdisk's inputs, without building it.
Every decision reads records only; a record that does not read is redone.
- workloads: workloads.json of every kernel was made from the current build, in
  the same mode, with at least as many rounds, on the same ramdisk, and holds
  every workload asked for (with the packages its file names now; after editing
  a workload's steps, FORCE=1); skipped altogether with WORKLOADS=none;
- build cost (build_cost=True; make all's default, BUILD_COST=0 leaves it out): the
  cold cost of each kernel's build (measure/buildcost.py), up to date while
  build-cost.json (or the cache's copy) measured the same build keys with the same
  -j and at least as many rounds;
- report: always rewritten (it takes a few seconds).
force=True runs every step.

At the end a line says where the time went, step by step (wall time; "up to date"
for a step skipped), so a study's cost is read off its own output.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from bringup import records, targets
from bringup.boot import timing as boottiming
from bringup.builder import kernel as build
from bringup.builder import lmbench as lmbench_build
from bringup.builder import rootfs
from bringup.errors import BootFailed, BringupError
from bringup.measure import buildcost, footprint
from bringup.measure import workloads as appworkloads
from bringup.model.benchset import load_set
from bringup.model.board import Board
from bringup.model.bootpath import check_boot_path, check_root
from bringup.model.clocks import clock_of, for_root
from bringup.model.profiles import Profile, study_profiles
from bringup.model.workload import Mode
from bringup.model.workload import load_all as load_workloads
from bringup.records import BootTiming, Build, Footprint, Lmbench, Rootfs, RootfsRef, Workloads
from bringup.report import buildcost as costreport
from bringup.report import page as report
from bringup.util import paths
from bringup.util.progress import fmt_duration
from bringup.util.switches import env_switch

R = TypeVar("R", bound=records.Record)


class StepClock:
    """The wall time of each step of a study, said in one line at the end:
    `Time: build-all 5m14s, boot-timing 0m35s, ..., report 0m04s; total 16m28s`."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.start = clock()
        self.steps: list[tuple[str, float | None]] = []

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        t = self.clock()
        try:
            yield
        finally:
            self.steps.append((name, self.clock() - t))

    def skipped(self, name: str) -> None:
        self.steps.append((name, None))

    def line(self) -> str:
        parts = [f"{n} {fmt_duration(s)}" if s is not None else f"{n} up to date" for n, s in self.steps]
        return f"Time: {', '.join(parts)}; total {fmt_duration(self.clock() - self.start)}"


def _read(f: Path, model: type[R]) -> tuple[R | None, str | None]:
    """The record, or None and why not (a record that does not read is redone, not trusted)."""
    if not f.exists():
        return None, None
    try:
        return records.read(f, model), None
    except BringupError as e:
        return None, f"a record does not read: {e}"


def set_problem(board: Board, logs: Path, step: str) -> str | None:
    """Why a step's set cannot be trusted as up to date (records/sets.py): a member that is not
    the file its set wrote, or a kernel the last run left out (a failure record); None when fine."""
    bdir = Path(logs) / board.name
    try:
        _, problems = records.sets.check(bdir, step)
    except BringupError as e:
        return f"its set does not read: {e}"
    if problems:
        return problems[0]
    if step in ("footprint", "workloads"):
        for k in board.kernels:
            f = bdir / k.id / records.failed_name(step)
            if f.exists():
                return f"{k.id}: its last {step} run failed ({f.name})"
    return None


def set_read(board: Board, logs: Path, step: str) -> str:
    """ " (set <id>)": which set of the step a skip trusts."""
    with contextlib.suppress(BringupError):
        man, _ = records.sets.check(Path(logs) / board.name, step)
        if man is not None:
            return f" (set {man.set})"
    return ""


def _other_clock(board: Board, measured: str) -> str | None:
    """Why a record measured on another clock than the board's is not up to date (None: the same)."""
    now = clock_of(board).kind
    return None if measured == now else f"measured on the {measured} clock, the {now} clock wanted"


def build_keys(board: Board, logs: Path) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for k in board.kernels:
        rec, _ = _read(Path(logs) / board.name / k.id / "build.json", Build)
        out[k.id] = rec.key if rec else None
    return out


def ramdisk_changed(board: Board, logs: Path, used: RootfsRef, name: str) -> str | None:
    """None when the ramdisk a measurement ran on (`used`, from its record) is the one
    bringup would use now; else why not.  Decided from records and the ramdisk's
    inputs (rootfs.inputs_key), never by building it."""
    now = rootfs.inputs_key(board)
    if used.inputs_key is not None and used.inputs_key != now:
        return "the ramdisk's inputs changed since"
    rec, why = _read(Path(logs) / board.name / "rootfs" / f"{name}.json", Rootfs)
    if rec is None:
        return None if used.inputs_key == now else why or f"no record of the ramdisk {used.file}"
    if rec.sha256 != used.sha256:
        return "the ramdisk changed since"
    if used.inputs_key is None and rec.inputs_key != now:
        return "the ramdisk's inputs changed since"
    return None


def boot_fresh(
    board: Board, logs: Path, cache: Path, runs: int, path: str, root: str = "ramdisk", say=print, profile="timing"
) -> str | None:
    """None when boot-timing.json (boot-timing-nfs.json, boot-timing-<profile>.json) is up to date, else why not."""
    name = records.boot_timing_name(root, profile=profile)
    if (bad := set_problem(board, logs, name.removesuffix(".json"))) is not None:
        return bad
    s, why = _read(Path(logs) / board.name / name, BootTiming)
    if s is None:
        return why or f"no {name}"
    if s.rootfs is None or s.imported is not None:
        return f"{name} is an imported record"
    if s.path != path:
        return f"made with boot path {s.path}, not {path}"
    if (why_clock := _other_clock(board, s.clock.kind)) is not None:
        return why_clock
    for kid, key in build_keys(board, logs).items():
        k = s.kernels.get(kid)
        if k is None:
            return f"no runs of {kid}"
        if k.ok < runs:
            return f"{kid}: {k.ok} good runs, {runs} wanted"
        if key is None or k.build_key != key:
            return f"{kid} was rebuilt since"
    return ramdisk_changed(board, logs, s.rootfs, "initramfs")


def footprint_fresh(board: Board, logs: Path, mode: str, lmbench_runs: int = 1) -> str | None:
    if (bad := set_problem(board, logs, "footprint")) is not None:
        return bad
    for kid, key in build_keys(board, logs).items():
        fp, why_fp = _read(Path(logs) / board.name / kid / "footprint.json", Footprint)
        lm, why_lm = _read(Path(logs) / board.name / kid / "lmbench.json", Lmbench)
        if fp is None or lm is None:
            return why_fp or why_lm or f"no footprint records for {kid}"
        if fp.rootfs is None or fp.imported is not None or lm.imported is not None:
            return f"{kid}: its records are imported (docs/import.md)"
        if (why_clock := _other_clock(board, fp.clock.kind)) is not None:
            return f"{kid}: {why_clock}"
        if key is None or fp.build_key != key:
            return f"{kid} was rebuilt since"
        if lm.mode != mode:
            return f"{kid}: lmbench {lm.mode}, {mode} wanted"
        if lm.measured and lm.runs < lmbench_runs:
            return f"{kid}: {lm.runs} lmbench run(s), {lmbench_runs} wanted"
        if not lm.measured and lm.mode != "none" and lm.source.lmbench is None and _lmbench_source_found():
            return f"{kid}: lmbench not measured, and bringup can now build it (configs/lmbench.toml [source] found)"
        changed = ramdisk_changed(board, logs, fp.rootfs, "footprint")
        if changed:
            return f"{kid}: {changed}"
    return None


def _lmbench_source_found() -> bool:
    """configs/lmbench.toml's [source] is in a download directory (a record that says
    lmbench was not measured for want of binaries is then out of date)."""
    try:
        lmbench_build.default_spec(load_set().source, paths.cache_dir(), say=lambda m: None)
    except BringupError:
        return False
    return True


def workloads_fresh(board: Board, logs: Path, names: list[str] | None, mode: str, runs: int) -> str | None:
    """None when workloads.json of every kernel is up to date for these workloads
    (names; None: every file of configs/workloads/), else why not."""
    wanted = load_workloads(names)
    if (bad := set_problem(board, logs, "workloads")) is not None:
        return bad
    for kid, key in build_keys(board, logs).items():
        rec, why = _read(Path(logs) / board.name / kid / "workloads.json", Workloads)
        if rec is None:
            return why or f"no workloads record for {kid}"
        if key is None or rec.build_key != key:
            return f"{kid} was rebuilt since"
        if rec.mode != mode:
            return f"{kid}: workloads {rec.mode}, {mode} wanted"
        if (why_clock := _other_clock(board, rec.clock.kind)) is not None:
            return f"{kid}: {why_clock}"
        if rec.runs < runs:
            return f"{kid}: {rec.runs} workload round(s), {runs} wanted"
        for n, wl in wanted.items():
            got = rec.workloads.get(n)
            if got is None:
                return f"{kid}: workload {n} not in its record"
            if sorted(got.packages) != sorted(wl.packages):
                return f"{kid}: workload {n}'s packages changed since"
        changed = ramdisk_changed(board, logs, rec.rootfs, "workloads")
        if changed:
            return f"{kid}: {changed}"
    return None


def run(
    board: Board,
    logs: Path,
    cache: Path,
    runs: int = 5,
    path: str | None = None,
    lmbench: str = "quick",
    jobs: int | None = None,
    force: bool = False,
    lmbench_source: dict | None = None,
    lmbench_runs: int = 1,
    root: str = "ramdisk",
    say=print,
    guard: bool = True,
    places: list[str] | None = None,
    workloads: list[str] | None = None,
    workload_runs: int = 3,
    workload_mode: Mode = "quick",
    boot_jobs: int = 1,
    build_cost: bool = False,
    build_cost_runs: int = buildcost.DEFAULT_ROUNDS,
) -> report.Report:
    """places: the labgrid places to use instead of the board file's (PLACES=a,b).
    build_cost: also measure the cold build cost (build_cost_runs rounds; the command
    line's default, `make all BUILD_COST=0` leaves it out).
    workloads: the application workloads to run (None: all of configs/workloads/;
    []: none, the step is left out)."""
    path = path or board.boot
    check_boot_path(board, path)  # before any work
    check_root(board, root)
    where = targets.places(board, places, say=say)  # PLACES on a board not in a lab: refused here
    if workloads != []:
        load_workloads(workloads or None)  # a bad or unknown workload file: refused here, before any work
    if lmbench not in ("quick", "full", "none"):
        raise BringupError(f"lmbench mode {lmbench!r}: use quick, full or none")
    if lmbench != "none":
        load_set()  # a bad configs/lmbench.toml: refused here, not after the builds
    profiles = study_profiles()  # a bad boot profile (configs/profiles/): refused here, not after the builds
    steps = 4 if workloads == [] else 5
    clock = StepClock()
    say(f"== {board.name}: measured on the {clock_of(board).label}")
    say(f"== [1/{steps}] build-all {board.name}: {', '.join(k.id for k in board.kernels)}")
    with clock.step("build-all"):
        build.build_all(board, logs, cache, force=force, jobs=jobs, say=say)
    if build_cost:
        say(f"== [1/{steps}] build cost {board.name}: cold builds without ccache, {build_cost_runs} rounds")
        # builds run on the host whatever the board's clock: the host-load guard as BRINGUP_HOST_GUARD says
        _build_cost(board, logs, cache, clock, build_cost_runs, jobs, env_switch("BRINGUP_HOST_GUARD"), force, say)

    # an NFS root's boots are measured on the host clock (model/clocks.py for_root), one at a time, guarded
    whole = board
    board = for_root(whole, root, say)
    boot_guard, boot_jobs_now = (guard, boot_jobs) if board is whole else (env_switch("BRINGUP_HOST_GUARD"), 1)
    boot_where = where if board is whole else targets.places(board, places, say=say)
    why = "FORCE" if force else boot_fresh(board, logs, cache, runs, path, root, say)
    if why is None:
        say(f"== [2/{steps}] boot-timing ({root} root): up to date, skipped")
        clock.skipped("boot-timing")
    else:
        say(f"== [2/{steps}] boot-timing {board.name}: {runs} runs per kernel, {path}, {root} root ({why})")
        with clock.step("boot-timing"):
            _boot_timing(board, logs, cache, boot_where, runs, path, root, say, boot_guard, jobs=boot_jobs_now)

    for prof in profiles:  # e.g. initcalls: a few boots with initcall_debug, for "Boot time explained"
        # on the instruction clock one boot is a measurement (docs/clock.md); the host clock takes the profile's rounds
        n = 1 if clock_of(board).deterministic else prof.spec.study_runs or 1
        why = "FORCE" if force else boot_fresh(board, logs, cache, n, path, root, say, profile=prof.name)
        if why is None:
            say(f"== [2/{steps}] boot-timing, profile {prof.name}: up to date, skipped")
            clock.skipped(prof.name)
            continue
        say(f"== [2/{steps}] boot-timing {board.name}, profile {prof.name}: {n} runs per kernel ({why})")
        with clock.step(prof.name):
            _boot_timing(board, logs, cache, boot_where, n, path, root, say, boot_guard, prof, jobs=boot_jobs_now)
    board = whole

    why = "FORCE" if force else footprint_fresh(board, logs, lmbench, lmbench_runs)
    if why is None:
        say(f"== [3/{steps}] footprint-report: up to date{set_read(board, logs, 'footprint')}, skipped")
        clock.skipped("footprint-report")
    else:
        say(f"== [3/{steps}] footprint-report {board.name}: lmbench {lmbench} ({why})")
        with clock.step("footprint-report"):
            footprint.footprint(
                board,
                logs,
                cache,
                mode=lmbench,
                lmbench_source=lmbench_source,
                lmbench_runs=lmbench_runs,
                say=say,
                guard=guard,
                places=places,
                jobs=boot_jobs,
            )

    if workloads != []:
        names = workloads or None
        why = "FORCE" if force else workloads_fresh(board, logs, names, workload_mode, workload_runs)
        if why is None:
            say(f"== [4/{steps}] workloads: up to date{set_read(board, logs, 'workloads')}, skipped")
            clock.skipped("workloads")
        else:
            say(f"== [4/{steps}] workloads {board.name}: {workload_runs} rounds, {workload_mode} ({why})")
            with clock.step("workloads"):
                appworkloads.workloads(
                    board,
                    logs,
                    cache,
                    names=names,
                    mode=workload_mode,
                    runs=workload_runs,
                    guard=guard,
                    say=say,
                    jobs=boot_jobs,
                )

    say(f"== [{steps}/{steps}] report {board.name}")
    with clock.step("report"):
        rep = report.write(board, logs, say=say)
    say(clock.line())
    return rep


def _build_cost(board, logs, cache, clock: StepClock, runs: int, jobs, guard: bool, force: bool, say) -> None:
    """The study's build-cost step (measure/buildcost.py): measured, or up to date; its summary lines."""
    with clock.step("build-cost"):
        cost, _, reused = buildcost.measure(board, logs, cache, runs=runs, jobs=jobs, guard=guard, force=force, say=say)
    if reused:
        clock.steps[-1] = ("build-cost", None)
    for c in costreport.compare(cost):
        say(f"  {costreport.line(c)}")


def _boot_timing(
    board: Board,
    logs: Path,
    cache: Path,
    where: list[targets.Place],
    runs: int,
    path: str,
    root: str,
    say: Callable[[str], object],
    guard: bool,
    prof: Profile | None = None,
    jobs: int = 1,
) -> None:
    """One boot-timing step of the study (prof: a boot profile such as initcalls), failing
    with the record of the failed runs named."""
    rd = rootfs.build(board, logs, cache, say=say)
    summary = boottiming.boot_timing(
        board,
        logs,
        Path(logs) / board.name / "rootfs" / rd.file,
        None,
        places=where,
        runs=runs,
        path=path,
        root=root,
        say=say,
        rootfs_ref=rd.ref(),
        guard=guard,
        profile=prof,
        jobs=jobs,
    )
    failed = sum(k["failed"] for k in summary["kernels"].values())
    if failed and prof is None:
        written = Path(logs) / board.name / records.boot_timing_name(root, failed=True)
        raise BootFailed(f"{failed} boot run(s) failed; see {paths.rel(written)}")
    if failed and prof is not None:
        written = Path(logs) / board.name / records.boot_timing_name(root, failed=True, profile=prof.name)
        raise BootFailed(f"{failed} boot run(s) of profile {prof.name} failed; see {paths.rel(written)}")
