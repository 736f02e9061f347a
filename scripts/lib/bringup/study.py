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
- build cost (StudyPlan.build_cost; make all's default, BUILD_COST=0 leaves it out): the
  cold cost of each kernel's build (measure/buildcost.py), up to date while
  build-cost.json (or the cache's copy) measured the same build keys with the same
  -j and at least as many rounds;
- report: always rewritten (it takes a few seconds).
StudyPlan.force runs every step.

The study holds the board's lock (util/lock.py) from its first step to the report:
no other measurement of the board runs in between (docs/records.md); the lock file
says the step the study is in (`pid N, study: footprint-report, since T`).

At the end a line says where the time went, step by step (wall time; "up to date"
for a step skipped), so a study's cost is read off its own output.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TypeVar

from bringup import records, stats, targets
from bringup.boot import timing as boottiming
from bringup.boot.target import TargetFactory
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
from bringup.util import lock, paths
from bringup.util.progress import fmt_duration
from bringup.util.switches import env_switch

R = TypeVar("R", bound=records.Record)
Say = Callable[[str], None]


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
    for kernel_id, key in build_keys(board, logs).items():
        k = s.kernels.get(kernel_id)
        if k is None:
            return f"no runs of {kernel_id}"
        if k.ok < runs:
            return f"{kernel_id}: {k.ok} good runs, {runs} wanted"
        if key is None or k.build_key != key:
            return f"{kernel_id} was rebuilt since"
    return ramdisk_changed(board, logs, s.rootfs, "initramfs")


def footprint_fresh(board: Board, logs: Path, mode: str, lmbench_runs: int = 1) -> str | None:
    if (bad := set_problem(board, logs, "footprint")) is not None:
        return bad
    for kernel_id, key in build_keys(board, logs).items():
        footprint_record, why_footprint = _read(Path(logs) / board.name / kernel_id / "footprint.json", Footprint)
        lmbench_record, why_lmbench = _read(Path(logs) / board.name / kernel_id / "lmbench.json", Lmbench)
        if footprint_record is None or lmbench_record is None:
            return why_footprint or why_lmbench or f"no footprint records for {kernel_id}"
        if (
            footprint_record.rootfs is None
            or footprint_record.imported is not None
            or lmbench_record.imported is not None
        ):
            return f"{kernel_id}: its records are imported (docs/import.md)"
        if (why_clock := _other_clock(board, footprint_record.clock.kind)) is not None:
            return f"{kernel_id}: {why_clock}"
        if key is None or footprint_record.build_key != key:
            return f"{kernel_id} was rebuilt since"
        if lmbench_record.mode != mode:
            return f"{kernel_id}: lmbench {lmbench_record.mode}, {mode} wanted"
        if lmbench_record.measured and lmbench_record.runs < lmbench_runs:
            return f"{kernel_id}: {lmbench_record.runs} lmbench run(s), {lmbench_runs} wanted"
        if (
            not lmbench_record.measured
            and lmbench_record.mode != "none"
            and lmbench_record.source.lmbench is None
            and _lmbench_source_found()
        ):
            return (
                f"{kernel_id}: lmbench not measured, and bringup can now build it (configs/lmbench.toml [source] found)"
            )
        changed = ramdisk_changed(board, logs, footprint_record.rootfs, "footprint")
        if changed:
            return f"{kernel_id}: {changed}"
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
    for kernel_id, key in build_keys(board, logs).items():
        rec, why = _read(Path(logs) / board.name / kernel_id / "workloads.json", Workloads)
        if rec is None:
            return why or f"no workloads record for {kernel_id}"
        if key is None or rec.build_key != key:
            return f"{kernel_id} was rebuilt since"
        if rec.mode != mode:
            return f"{kernel_id}: workloads {rec.mode}, {mode} wanted"
        if (why_clock := _other_clock(board, rec.clock.kind)) is not None:
            return f"{kernel_id}: {why_clock}"
        if rec.runs < runs:
            return f"{kernel_id}: {rec.runs} workload round(s), {runs} wanted"
        for n, spec in wanted.items():
            got = rec.workloads.get(n)
            if got is None:
                return f"{kernel_id}: workload {n} not in its record"
            if sorted(got.packages) != sorted(spec.packages):
                return f"{kernel_id}: workload {n}'s packages changed since"
        changed = ramdisk_changed(board, logs, rec.rootfs, "workloads")
        if changed:
            return f"{kernel_id}: {changed}"
    return None


@dataclass(frozen=True)
class StudyPlan:
    """What a study is asked to do: the command line's options (`bringup study --help`).
    path None: the board's boot path.  jobs: the builds' make -j (None: one per CPU);
    boot_jobs: the measuring steps' boots at once.  places: the labgrid places to use
    instead of the board file's (PLACES=a,b).  workloads: the application workloads to
    run (None: the default set of configs/workloads/; []: none, the step is left out).
    build_cost: also measure the cold build cost (build_cost_runs rounds; the command
    line's default, `make all BUILD_COST=0` leaves it out)."""

    runs: int = 5
    path: str | None = None
    root: str = "ramdisk"
    lmbench: str = "quick"
    lmbench_source: dict | None = None
    lmbench_runs: int = 1
    jobs: int | None = None
    boot_jobs: int = 1
    force: bool = False
    guard: bool = True
    places: list[str] | None = None
    workloads: list[str] | None = None
    workload_runs: int = 3
    workload_mode: Mode = "quick"
    build_cost: bool = False
    build_cost_runs: int = buildcost.DEFAULT_ROUNDS


def run(board: Board, logs: Path, cache: Path, plan: StudyPlan = StudyPlan(), say: Say = print) -> report.Report:
    """The whole study (module docstring).  Every file and value its steps need is checked
    before the first build; then the board's lock (util/lock.py) is held from the first
    step to the report, so that no other measurement of the board slips in between (the
    steps take the same lock again: it is this process's already)."""
    study = _Study(board, logs, cache, plan, say)
    with lock.board(Path(logs) / board.name, "study", say=say):
        return study.run()


@dataclass(frozen=True)
class Boots:
    """What one boot-timing step is asked (boot/timing.py boot_timing): rounds, boot path,
    root, the host-load guard, boots at once, where the boots go (labgrid places, or a
    target factory), the boot profile (None: timing), and the command's own choices."""

    runs: int
    path: str | None
    root: str = "ramdisk"
    guard: bool = True
    jobs: int = 1
    places: list[targets.Place] | None = None
    target_for: TargetFactory | None = None
    profile: Profile | None = None
    only: list[str] | None = None
    until_ci: float | None = None
    max_rounds: int = stats.UNTIL_CI_MAX_ROUNDS
    timeout_factor: float = 1.0


def boot_on_ramdisk(board: Board, logs: Path, cache: Path, boots: Boots, say: Say) -> records.BootTiming:
    """Boot timing on the board's ramdisk (built first, or reused when up to date); the summary."""
    ramdisk = rootfs.build(board, logs, cache, say=say)
    return boottiming.boot_timing(
        board,
        logs,
        Path(logs) / board.name / "rootfs" / ramdisk.file,
        boots.target_for,
        runs=boots.runs,
        path=boots.path,
        only=boots.only,
        until_ci=boots.until_ci,
        max_rounds=boots.max_rounds,
        timeout_factor=boots.timeout_factor,
        root=boots.root,
        say=say,
        rootfs_ref=ramdisk.ref(),
        guard=boots.guard,
        profile=boots.profile,
        places=boots.places,
        jobs=boots.jobs,
    )


@dataclass(frozen=True)
class _Step:
    """A step that is skipped when its records are up to date: its number, its name on the time
    line, its words when skipped and when run, the set a skip trusts, how to tell and how to run it."""

    number: int
    name: str
    skipped: str
    doing: str
    stale: Callable[[], str | None]
    work: Callable[[], object]
    set: str | None = None


class _Study:
    """A study under way: the board, its directories and plan, the step count and the time line.
    Made only when the plan is good: what the steps will need is refused here, before any work."""

    def __init__(self, board: Board, logs: Path, cache: Path, plan: StudyPlan, say: Say) -> None:
        self.board, self.logs, self.cache, self.plan, self.say = board, logs, cache, plan, say
        self.bdir = Path(logs) / board.name  # its lock says the step the study is in (lock.doing)
        self.path = plan.path or board.boot
        check_boot_path(board, self.path)
        check_root(board, plan.root)
        self.where = targets.places(board, plan.places, say=say)  # PLACES on a board not in a lab
        if plan.workloads != []:
            load_workloads(plan.workloads or None)  # a bad or unknown workload file
        if plan.lmbench not in ("quick", "full", "none"):
            raise BringupError(f"lmbench mode {plan.lmbench!r}: use quick, full or none")
        if plan.lmbench != "none":
            load_set()  # a bad configs/lmbench.toml: refused here, not after the builds
        self.profiles = study_profiles()  # a bad boot profile (configs/profiles/): refused here too
        # the steps in the order they run, numbered on the terminal ("== [2/5] build cost ...")
        self.order = [
            "build-all",
            *(["build-cost"] if plan.build_cost else []),
            "boot-timing",
            "footprint-report",
            *(["workloads"] if plan.workloads != [] else []),
            "report",
        ]
        self.steps = len(self.order)
        self.clock = StepClock()

    def number(self, step: str) -> int:
        """A step's number on the terminal: its place in self.order."""
        return self.order.index(step) + 1

    def head(self, step: str, text: str) -> None:
        """A step's first line: "== [2/6] build cost qemu-arm: ..."."""
        self.say(f"== [{self.number(step)}/{self.steps}] {text}")

    def run(self) -> report.Report:
        self.say(f"== {self.board.name}: measured on the {clock_of(self.board).label}")
        self.build()
        if self.plan.build_cost:
            self.build_cost()
        self.boot_timing()
        self.maybe(self.footprint())
        if self.plan.workloads != []:
            self.maybe(self.workloads())
        self.head("report", f"report {self.board.name}")
        with self.clock.step("report"), lock.doing(self.bdir, "report"):
            rep = report.write(self.board, self.logs, say=self.say)
        self.say(self.clock.line())
        return rep

    def maybe(self, step: _Step) -> None:
        """The step, or its line that it is up to date (naming the set it trusts)."""
        with lock.doing(self.bdir, step.name):
            why = "FORCE" if self.plan.force else step.stale()
            if why is None:
                read = set_read(self.board, self.logs, step.set) if step.set else ""
                self.say(f"== [{step.number}/{self.steps}] {step.skipped}: up to date{read}, skipped")
                self.clock.skipped(step.name)
                return
            self.say(f"== [{step.number}/{self.steps}] {step.doing} ({why})")
            with self.clock.step(step.name):
                step.work()

    def build(self) -> None:
        board = self.board
        self.head("build-all", f"build-all {board.name}: {', '.join(k.id for k in board.kernels)}")
        with self.clock.step("build-all"), lock.doing(self.bdir, "build-all"):
            build.build_all(board, self.logs, self.cache, force=self.plan.force, jobs=self.plan.jobs, say=self.say)

    def build_cost(self) -> None:
        """The cold build cost (measure/buildcost.py): measured, or up to date; its summary lines.
        Builds run on the host whatever the board's clock: the host-load guard as BRINGUP_HOST_GUARD says."""
        plan, runs = self.plan, self.plan.build_cost_runs
        self.head("build-cost", f"build cost {self.board.name}: cold builds without ccache, {runs} rounds")
        guard = env_switch("BRINGUP_HOST_GUARD")
        with self.clock.step("build-cost"), lock.doing(self.bdir, "build-cost"):
            cost, _, reused = buildcost.measure(
                self.board,
                self.logs,
                self.cache,
                runs=runs,
                jobs=plan.jobs,
                guard=guard,
                force=plan.force,
                say=self.say,
            )
        if reused:
            self.clock.steps[-1] = ("build-cost", None)
        for c in costreport.compare(cost):
            self.say(f"  {costreport.line(c)}")

    def boot_timing(self) -> None:
        """Boot timing, then each boot profile the study runs (e.g. initcalls: a few boots with
        initcall_debug, for "Boot time explained").  An NFS root's boots are measured on the host
        clock (model/clocks.py for_root), one at a time, guarded."""
        plan, root, path = self.plan, self.plan.root, self.path
        board = for_root(self.board, root, self.say)
        boots = Boots(plan.runs, path, root, plan.guard, plan.boot_jobs, self.where)
        if board is not self.board:
            where = targets.places(board, plan.places, say=self.say)
            boots = replace(boots, guard=env_switch("BRINGUP_HOST_GUARD"), jobs=1, places=where)
        self.maybe(
            _Step(
                self.number("boot-timing"),
                "boot-timing",
                f"boot-timing ({root} root)",
                f"boot-timing {board.name}: {plan.runs} runs per kernel, {path}, {root} root",
                lambda: boot_fresh(board, self.logs, self.cache, plan.runs, path, root, self.say),
                lambda: self.boot(board, boots),
            )
        )
        for prof in self.profiles:
            # on the instruction clock one boot is a measurement (docs/clock.md); the host clock takes its rounds
            n = 1 if clock_of(board).deterministic else prof.spec.study_runs or 1
            self.maybe(
                _Step(
                    self.number("boot-timing"),
                    prof.name,
                    f"boot-timing, profile {prof.name}",
                    f"boot-timing {board.name}, profile {prof.name}: {n} runs per kernel",
                    partial(boot_fresh, board, self.logs, self.cache, n, path, root, self.say, profile=prof.name),
                    partial(self.boot, board, replace(boots, runs=n, profile=prof)),
                )
            )

    def boot(self, board: Board, boots: Boots) -> None:
        """One boot-timing step, failing with the record of the failed runs named."""
        summary = boot_on_ramdisk(board, self.logs, self.cache, boots, self.say)
        failed = sum(k.failed for k in summary.kernels.values())
        if not failed:
            return
        prof = boots.profile
        name = records.boot_timing_name(boots.root, failed=True, profile=prof.name if prof else "timing")
        written = paths.rel(Path(self.logs) / board.name / name)
        if prof is None:
            raise BootFailed(f"{failed} boot run(s) failed; see {written}")
        raise BootFailed(f"{failed} boot run(s) of profile {prof.name} failed; see {written}")

    def footprint(self) -> _Step:
        board, plan = self.board, self.plan
        return _Step(
            self.number("footprint-report"),
            "footprint-report",
            "footprint-report",
            f"footprint-report {board.name}: lmbench {plan.lmbench}",
            lambda: footprint_fresh(board, self.logs, plan.lmbench, plan.lmbench_runs),
            lambda: footprint.footprint(
                board,
                self.logs,
                self.cache,
                mode=plan.lmbench,
                lmbench_source=plan.lmbench_source,
                lmbench_runs=plan.lmbench_runs,
                say=self.say,
                guard=plan.guard,
                places=plan.places,
                jobs=plan.boot_jobs,
            ),
            set="footprint",
        )

    def workloads(self) -> _Step:
        board, plan = self.board, self.plan
        names = plan.workloads or None
        return _Step(
            self.number("workloads"),
            "workloads",
            "workloads",
            f"workloads {board.name}: {plan.workload_runs} rounds, {plan.workload_mode}",
            lambda: workloads_fresh(board, self.logs, names, plan.workload_mode, plan.workload_runs),
            lambda: appworkloads.workloads(
                board,
                self.logs,
                self.cache,
                names=names,
                mode=plan.workload_mode,
                runs=plan.workload_runs,
                guard=plan.guard,
                say=self.say,
                jobs=plan.boot_jobs,
            ),
            set="workloads",
        )
