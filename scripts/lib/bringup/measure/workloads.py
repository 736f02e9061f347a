"""Application workloads in a ramdisk, in rounds of boots like lmbench (docs/workloads.md).

The workloads of configs/workloads/ name Debian packages; those packages and
their library closure (apt, through the private configuration lmbench uses) go
into a ramdisk of their own, logs/<board>/rootfs/workloads.cpio.gz, with the
input files generated on the host (measure/workloadinputs.py).  Its own ramdisk,
not the footprint one: the footprint's free-memory numbers would move with every
package added.

Each round boots every kernel once (order of boot/rounds.py) and runs every
selected workload once in that boot; the unit of replication is the boot, as for
lmbench.  A step that fails, times out or prints no number for a metric leaves
that value "not measured" with the reason; a workload with no value at all is not
measured.  Result: logs/<board>/<kernel>/workloads.json (bringup.workloads).
"""

from __future__ import annotations

import contextlib
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pexpect

from bringup import records, stats, targets
from bringup.boot import rounds
from bringup.boot.target import Place
from bringup.builder import diskimage, rootfs
from bringup.errors import BootFailed, BringupError
from bringup.measure.footprint import MeasuringStep
from bringup.measure.footprintrecords import KernelRounds, MeasuredBoot, build_records, left_out
from bringup.measure.guestfiles import deb_entries
from bringup.measure.workloadinputs import generate
from bringup.model import workload as wm
from bringup.model.board import Board
from bringup.model.clocks import clock_of
from bringup.model.workload import DISK_MOUNT, INPUTS_DIR, Mode, WorkloadSpec, load_all
from bringup.parse import workload as wp
from bringup.util import clock, cpio, environment, lock, paths, space
from bringup.util.aptprivate import PrivateApt

# busybox applets the workload steps may use besides those of the base ramdisk
APPLETS = ["timeout", "nproc", "md5sum", "sha256sum", "gzip", "gunzip"]


def payload(
    board: Board, specs: dict[str, WorkloadSpec], mode: Mode, cache: Path, say=print
) -> tuple[list[cpio.Entry], dict[str, str], dict[str, str]]:
    """The ramdisk's workload files: cpio entries, the version of every package
    (closure included), and the workloads that cannot run (name -> reason: a
    package Debian does not have for this architecture)."""
    arch = board.arch.debian_arch
    apt = PrivateApt(cache / "apt", rootfs.USERSPACE_SUITE, architectures=tuple(dict.fromkeys(("amd64", arch))))
    missing: dict[str, str] = {}
    wanted: list[tuple[list[str], list[str]]] = []  # each workload's packages, and what it leaves out
    with contextlib.suppress(BringupError):  # one apt-cache call for all; a failure is said per package below
        apt.candidates([f"{p}:{arch}" for spec in specs.values() for p in spec.packages])
    for name, spec in specs.items():
        for p in spec.packages:
            try:
                v = apt.candidate(f"{p}:{arch}")
            except BringupError as e:
                v, why = None, str(e)
            else:
                why = f"Debian {rootfs.USERSPACE_SUITE} has no package {p!r} for {arch}"
            if v is None:
                missing[name] = why
                say(f"  workload {name}: {why}: not measured")
                break
        else:
            wanted.append(([f"{p}:{arch}" for p in spec.packages], list(spec.without)))
    entries: list[cpio.Entry] = [cpio.directory("usr/share"), cpio.directory(INPUTS_DIR)]
    versions: dict[str, str] = {}
    if wanted:
        closure = _closure(apt, arch, wanted)
        say(f"  workload packages for {arch}: {len(closure)} with their libraries")
        debs = apt.download_many(closure)
        for p in closure:
            deb = debs[p]
            versions[p.split(":")[0]] = deb.name.split("_")[1].replace("%3a", ":")
            entries += deb_entries(deb)
    for a in APPLETS:
        entries.append(cpio.symlink(f"usr/bin/{a}", "/bin/busybox"))
    for name, spec in specs.items():
        if name in missing or not spec.input:
            continue
        entries.append(cpio.directory(f"{INPUTS_DIR}/{name}"))
        for inp in spec.input:
            entries.append(cpio.file(f"{INPUTS_DIR}/{name}/{inp.name}", generate(inp, mode)))
    return entries, versions, missing


def _closure(apt: PrivateApt, arch: str, wanted: list[tuple[list[str], list[str]]]) -> list[str]:
    """The packages of the ramdisk: one closure of every workload's packages, and one
    of each workload's whose file leaves some out (`without`)."""
    plain = sorted({p for pkgs, without in wanted if not without for p in pkgs})
    found = set(apt.depends_closure(plain)) if plain else set()
    for pkgs, without in wanted:
        if without:
            found |= set(apt.depends_closure(pkgs, without=without))
    return sorted(p for p in found if p.endswith(f":{arch}") or ":" not in p)


def run_in_boot(sh, specs: dict[str, WorkloadSpec], mode: Mode, skip: dict[str, str], say=print) -> dict[str, dict]:
    """Every workload's steps in one booted ramdisk: per workload, per step its
    output, elapsed seconds and exit status; or why the workload did not run.  A step
    that times out leaves its workload not measured and the others go on; a console
    that went away (QEMU died) or no longer answers (a hung target) fails the boot
    (BootFailed naming the step and the cause)."""
    out: dict[str, dict] = {}
    for name, spec in specs.items():
        if name in skip:
            out[name] = {"error": skip[name], "steps": {}}
            continue
        steps: dict[str, dict] = {}
        error = None
        for step, cmd in spec.commands(mode, name):
            t = spec.step_timeout(step, mode)
            try:
                text, _ = sh.run(wp.wrap(cmd), timeout=t, name=f"workload {name}, step {step.name}")
            except BootFailed as e:
                error = str(e)
                _recover(sh, e)  # the shell answers again, or the boot failed (raised)
                break
            body, elapsed, rc = wp.split(text)
            steps[step.name] = {"text": body, "elapsed": elapsed, "rc": rc}
            if rc != 0:
                error = f"step {step.name} exited {rc}: {wp.last_line(body)}"
                break
        out[name] = {"error": error, "steps": steps}
        say(f"    {name}: {'done' if error is None else 'not measured: ' + error}")
    return out


NO_DISK = "no disk on this board"


def disk_plan(board: Board, specs: dict[str, WorkloadSpec]) -> tuple[dict | None, dict[str, str]]:
    """The disk the selected disk workloads (needs_disk) use on this board, as the
    record gives it (None when no workload needs one or the board has none), and the
    workloads that cannot run for want of a disk (name -> reason)."""
    users = [n for n, spec in specs.items() if spec.needs_disk]
    if not users:
        return None, {}
    settings = board.workloads
    if not settings.disk:
        why = f"{NO_DISK} ({paths.rel(board.file)} names no [workloads] disk)"
        return None, dict.fromkeys(users, why)
    attached = targets.disk_image_attachment(board)
    if attached is not None:
        size = settings.disk_mb or diskimage.DEFAULT_MB
    else:
        attached, size = "the board's own partition", None
    return {"device": settings.disk, "fs": settings.disk_fs, "image_mb": size, "attached": attached}, {}


def mount_disk(sh, disk: dict) -> tuple[str, str | None]:
    """Mount the board's disk at DISK_MOUNT in the guest: (what the guest printed,
    why it failed or None).  Device and filesystem are checked by the board model."""
    dev, fs = disk["device"], disk["fs"]
    cmd = f"mkdir -p {DISK_MOUNT} && mount -t {fs} {dev} {DISK_MOUNT} && grep ' {DISK_MOUNT} ' /proc/mounts"
    cmd += f" && df -k {DISK_MOUNT}"
    try:
        text, _ = sh.run(wp.wrap(cmd), timeout=120, name=f"mount {dev}")
    except BootFailed as e:
        return "", f"the disk {dev} did not mount: {e}"
    body, _, rc = wp.split(text)
    if rc != 0:
        return body, f"the disk {dev} did not mount: {wp.last_line(body)}"
    return body, None


def unmount_disk(sh) -> str:
    """Write back and unmount the disk after the workloads (a real board's partition
    stays clean); what the guest printed."""
    try:
        text, _ = sh.run(wp.wrap(f"sync; umount {DISK_MOUNT}"), timeout=300, name="unmount the disk")
    except BootFailed as e:
        return f"(no answer: {e})"
    body, _, rc = wp.split(text)
    return body + ("" if rc == 0 else f"(umount exited {rc})\n")


def _recover(sh, e: BootFailed) -> None:
    """After a step failed on the console: interrupt it (Ctrl-C) and check that the shell
    answers again.  When the console went away (QEMU died) or stays silent (a stopped
    QEMU, a hung kernel), the boot failed: BootFailed with the step's cause."""
    if not sh.exp.isalive():  # the console closed: nothing to interrupt
        raise e
    try:
        sh.exp.send("\x03")
        sh.run("true", timeout=30, name="shell after an interrupted step")
    except BootFailed as again:
        raise BootFailed(f"{e}, and the console did not answer after it ({again})") from None


def values_of(spec: WorkloadSpec, ran: dict, mode: Mode = "quick") -> tuple[dict[str, float], list[str]]:
    """One boot's metric values of a workload, and why the others have none."""
    vals: dict[str, float] = {}
    why: list[str] = []
    if ran["error"] and not ran["steps"]:
        return vals, [ran["error"]]
    for m in spec.metric:
        st = ran["steps"].get(m.step)
        if st is None or st["rc"] != 0:
            why.append(f"{m.name}: {ran['error'] or f'step {m.step} did not run'}")
            continue
        v = st["elapsed"] if m.elapsed else wp.metric(st["text"], m.regex or "", m.scale)
        count = spec.count_of(m, mode)
        if v is None:
            what = "no elapsed time" if m.elapsed else f"no match for its regex in step {m.step}'s output"
            why.append(f"{m.name}: {what} ({wp.last_line(st['text'])})")
        elif count is not None:
            r = wp.rate(count, v)
            if r is None:
                why.append(f"{m.name}: {count:g} divided by a time of {v:g} s")
            else:
                vals[m.name] = r
        else:
            vals[m.name] = v * m.scale if m.elapsed else v
    return vals, why


def round_values(
    specs: dict[str, WorkloadSpec], ran: dict, mode: Mode
) -> dict[str, tuple[dict[str, float], list[str]]]:
    """One boot's values of every workload (values_of), read once as the boot ends."""
    return {name: values_of(spec, ran[name], mode) for name, spec in specs.items() if name in ran}


def workloads(
    board: Board,
    logs: Path,
    cache: Path,
    only: list[str] | None = None,
    names: list[str] | None = None,
    mode: Mode = "quick",
    runs: int = 3,
    timeout_factor: float = 1.0,
    guard: bool = True,
    say=print,
    directory: Path | None = None,
    until_ci: float | None = None,
    max_rounds: int = stats.UNTIL_CI_MAX_ROUNDS,
    places: list[str] | None = None,
    jobs: int = 1,
) -> dict[str, records.Workloads]:
    """`runs` rounds of boots; workloads.json per kernel with every round's values.
    The rounds run on the round engine (boot/rounds.py), as the footprint's: until_ci
    (a width in %) adds rounds until the 95 % interval of every workload metric's
    difference is that narrow, at most max_rounds (said on the terminal: the record has
    no `stopped` field yet); a labgrid board's places (places, or the board file's) run
    whole rounds in parallel, each held for the whole step; a board that is not a
    labgrid board runs up to `jobs` boots at once (without the guard: rounds.check()).
    A kernel whose boot failed (QEMU died or hung, the console went away) is left out:
    its earlier record stays, `<kernel>/workloads-failed.json` goes beside it, the other
    kernels are measured, and the step ends with BootFailed naming what was left out."""
    if runs < 1:
        raise BringupError(f"workload runs {runs}: give 1 or more")
    for kernel_id in only or []:
        board.kernel(kernel_id)  # an unknown --kernel is refused here, before the ramdisk is built
    if mode not in ("quick", "full"):
        raise BringupError(f"workload mode {mode!r}: use quick or full")
    rule = rounds.rule(runs, until_ci, max_rounds)  # refused here, before any work
    specs = load_all(names, directory)
    disk, no_disk = _disk_checked(board, specs, say)
    where = targets.places(board, places, say=say)  # PLACES on a board not in a lab: refused here
    rounds.check(where, jobs, guard)  # --jobs that cannot work: refused here
    kernels = [k.id for k in board.kernels if not only or k.id in only]
    builds = build_records(board, kernels, logs)
    with lock.board(Path(logs) / board.name, "workloads", say=say):  # one at a time; taken before apt's ~30 s
        measured = {n: w for n, w in specs.items() if n not in no_disk}
        entries, versions, missing = payload(board, measured, mode, cache, say)
        plan = WorkloadPlan(
            board, Path(logs), cache, kernels, builds, specs, mode, rule, disk, {**no_disk, **missing}, versions
        )
        return _measure(plan, entries, RoundSettings(where, jobs, guard, timeout_factor), say)


@dataclass(frozen=True)
class RoundSettings:
    """How the boots of a workloads step run: the places, boots at once, the host-load guard,
    the timeouts' factor."""

    places: Sequence[Place]
    jobs: int
    guard: bool
    timeout_factor: float


def _measure(plan: WorkloadPlan, entries: list[cpio.Entry], how: RoundSettings, say) -> dict[str, records.Workloads]:
    """Under the board's lock: the ramdisk, the rounds of boots, the records."""
    records.sets.tidy(plan.bdir, say)
    space.check(plan.bdir, WORKLOAD_BYTES * len(plan.kernels) * plan.rule.limit, "workloads")
    ramdisk = _ramdisk(plan, entries, say)
    initrd = plan.bdir / "rootfs" / ramdisk.file
    step = MeasuringStep(plan.board, plan.logs, plan.builds, initrd, how.timeout_factor, "workload-runs")
    kernels = plan.kernels
    done = step.rounds(
        kernels,
        plan.rule,
        _booter(plan, step),
        how.places,
        how.jobs,
        how.guard,
        lambda kept: headline(kept, kernels),
        "workload",
        say,
    )
    return _land(plan, done, ramdisk, say)


WORKLOAD_BYTES = 4 * 1024 * 1024  # what one boot's run directory holds, about (console log, outputs)
FAILED = records.failed_name("workloads")


@dataclass(frozen=True)
class WorkloadBoot(MeasuredBoot):
    """A workloads boot: what each workload ran (run_in_boot; None: the boot failed) and its
    values, read as the boot ended (round_values)."""

    ran: dict[str, dict] | None = None
    values: dict[str, tuple[dict[str, float], list[str]]] = field(default_factory=dict)


@dataclass
class WorkloadPlan:
    """What a workloads step settled before its boots: the kernels, the workloads and
    the ones that cannot run (missing: name -> reason), the disk, the packages."""

    board: Board
    logs: Path
    cache: Path
    kernels: list[str]
    builds: dict[str, records.Build]
    specs: dict[str, WorkloadSpec]
    mode: Mode
    rule: stats.UntilCI
    disk: dict | None
    missing: dict[str, str]
    versions: dict[str, str]

    @property
    def bdir(self) -> Path:
        return self.logs / self.board.name


def _disk_checked(board: Board, specs: dict[str, WorkloadSpec], say) -> tuple[dict | None, dict[str, str]]:
    """disk_plan(), the workloads without a disk said, and mke2fs checked when QEMU
    attaches an image (missing e2fsprogs fails here, before anything is built or booted)."""
    disk, no_disk = disk_plan(board, specs)
    for n, why in no_disk.items():
        say(f"  workload {n}: {why}: not measured")
    if disk is not None and targets.disk_image_attachment(board) is not None:
        diskimage.mke2fs()
    return disk, no_disk


def _ramdisk(plan: WorkloadPlan, entries: list[cpio.Entry], say) -> records.Rootfs:
    """logs/<board>/rootfs/workloads.cpio.gz with the workloads' files (rootfs.build)."""
    key = {"libraries": [f"{p}={v}" for p, v in sorted(plan.versions.items())], "mode": plan.mode}
    return rootfs.build(plan.board, plan.logs, plan.cache, extra=entries, name="workloads", extra_key=key, say=say)


def _booter(plan: WorkloadPlan, step: MeasuringStep):
    """The round engine's boot(run) of the workloads: one boot of a kernel with every
    workload in it.  A failed boot is a result (`failed`: the line), not an error: the
    step goes on with the next kernel."""
    of = f"{plan.rule.limit}" if plan.rule.pct is None else f"at most {plan.rule.limit}"

    def boot(run: rounds.Run) -> WorkloadBoot:
        run_dir = step.run_dir(run)
        run.say(f"  round {run.round}/{of} {run.kernel}: booting the workload ramdisk")
        try:
            ran = _one_boot(step, run, run_dir, plan.specs, plan.mode, plan.missing, plan.disk)
        except BootFailed as e:  # this kernel is left out; the step goes on with the next one
            run.say(f"  {e}")
            return WorkloadBoot(run_dir, failed=str(e))
        return WorkloadBoot(run_dir, ran=ran, values=round_values(plan.specs, ran, plan.mode))

    return boot


def _land(
    plan: WorkloadPlan, done: dict[str, KernelRounds[WorkloadBoot]], ramdisk: records.Rootfs, say
) -> dict[str, records.Workloads]:
    """Every measured kernel's workloads.json, and a left-out kernel's failure record beside
    its earlier one, as one set; then BootFailed naming the kernels left out, if any."""
    results: dict[str, records.Workloads] = {}
    failed: dict[str, str] = {}
    with records.ResultSet(plan.bdir, "workloads") as rset:  # every kernel's record lands at once, or none
        for kernel_id in plan.kernels:
            recdir = plan.bdir / kernel_id
            bad = next((r for r in done[kernel_id].rounds if r.failed is not None), None)
            if bad is not None:  # its earlier record stays; the failure record goes beside it
                failed[kernel_id] = bad.failed or ""
                rset.write(recdir / FAILED, _failure(plan, kernel_id, bad, recdir), records.Failure)
                continue
            rec = record(
                plan.board,
                kernel_id,
                plan.builds[kernel_id],
                recdir,
                done[kernel_id],
                ramdisk,
                plan.specs,
                plan.mode,
                plan.versions,
                plan.disk,
            )
            results[kernel_id] = rset.write(recdir / "workloads.json", rec, records.Workloads)
            rset.remove(recdir / FAILED)  # a stale failure record of an earlier run
    say(f"  workloads set {rset.id}: {', '.join(results) or 'no kernel'}")
    if failed:
        raise left_out("workloads", failed)
    return results


def _failure(plan: WorkloadPlan, kernel_id: str, bad: WorkloadBoot, recdir: Path) -> dict:
    """The failure record (bringup.failure) of a kernel the step left out."""
    return {
        "step": "workloads",
        "board": plan.board.name,
        "kernel": kernel_id,
        "created": clock.now(),
        "error": records.plain_text(bad.failed or "", 2000),
        "run": Path(bad.run_dir).relative_to(recdir).as_posix(),
        "kept": "workloads.json" if (recdir / "workloads.json").exists() else None,
    }


def headline(kept: list[rounds.Done[WorkloadBoot]], kernels: list[str]) -> dict[str, dict[str, dict[int, float]]]:
    """The headline values of the workloads for --until-ci, as "workload metric" ->
    kernel -> round -> value: every metric of every workload, as each boot read it."""
    out: dict[str, dict[str, dict[int, float]]] = {}
    for d in kept:
        for name, (vals, _) in d.result.values.items():
            for metric, v in vals.items():
                out.setdefault(f"{name} {metric}", {k: {} for k in kernels})[d.kernel][d.round] = v
    return out


def _one_boot(step: MeasuringStep, run: rounds.Run, run_dir: Path, specs, mode, missing, disk=None) -> dict:
    board = step.board
    users = [n for n, spec in specs.items() if spec.needs_disk and n not in missing] if disk else []
    image = None
    if users and targets.disk_image_attachment(board) is not None:  # a fresh image per boot: rounds are independent
        image = Path(run_dir) / "disk.img"
        diskimage.make(image, disk["image_mb"], disk["fs"])
    # a real board boots the kernel we built through its bootloader, as for the footprint;
    # a disk image is QEMU's own: its target attaches it
    session = step.session(run, run_dir, disk=image)
    say = run.say
    raw = []
    skip = dict(missing)
    try:
        with session:
            sh = session.shell()
            mounted = False
            if users:
                text, why = mount_disk(sh, disk)
                raw.append(f"=== disk mount {disk['device']} at {DISK_MOUNT}: {why or 'mounted'}\n{text}")
                if why:
                    say(f"    {why}")
                    skip.update(dict.fromkeys(users, why))
                mounted = why is None
            try:
                ran = run_in_boot(sh, specs, mode, skip, say)
                unmounted = unmount_disk(sh) if mounted else None
            except pexpect.EOF:  # QEMU died, the console went away: a failed boot, not a bug
                raise BootFailed(session.gone()) from None
    except BootFailed as e:
        raise step.failed(run, "workload", e, session) from None
    finally:
        if image is not None:
            image.unlink(missing_ok=True)  # up to disk_mb of written blocks; the next boot makes its own
    for name, r in ran.items():
        for step, st in r["steps"].items():
            raw.append(f"=== {name} {step} rc={st['rc']} elapsed={st['elapsed']}\n{st['text']}")
        if r["error"]:
            raw.append(f"=== {name}: not measured: {r['error']}")
    if unmounted is not None:
        raw.append(f"=== disk unmount\n{unmounted}")
    (run_dir / "workloads.txt").write_text("\n".join(raw) + "\n")
    return ran


def available() -> dict[str, dict]:
    """Every workload file of configs/workloads/ as it is now: in the default set or not,
    or why it does not load (workloads.json's `available`: the report's "not in this study")."""
    out: dict[str, dict] = {}
    for name in wm.available():
        try:
            out[name] = {"default_set": wm.load(wm.workloads_dir() / f"{name}.toml").default_set}
        except BringupError as e:
            out[name] = {"default_set": None, "error": str(e)}
    return out


def record(
    board,
    kernel_id,
    build: records.Build,
    recdir,
    done: KernelRounds[WorkloadBoot],
    ramdisk,
    specs: dict[str, WorkloadSpec],
    mode,
    versions,
    disk=None,
) -> dict:
    """workloads.json of one kernel from its rounds."""
    rs = done.rounds
    rel = [r.run_dir.relative_to(recdir).as_posix() for r in rs]
    out = {name: _workload_part(name, spec, rs) for name, spec in specs.items()}
    return {
        "board": board.name,
        "kernel": kernel_id,
        "created": clock.now(),
        "build_key": build.key,
        "mode": mode,
        "runs": len(rs),
        "run_dirs": rel,
        "rootfs": ramdisk.ref().model_dump(),
        "packages": versions,
        "host": [r.host for r in rs if r.host],
        "disturbed": done.disturbed,
        "disk": disk,
        "workloads": out,
        "clock": clock_of(board).record(),
        "environment": environment.of_board(board),
        "available": available(),
    }


def _workload_part(name: str, spec: WorkloadSpec, rs: list[WorkloadBoot]) -> dict:
    """One workload's part of workloads.json from the kernel's rounds: every metric's values
    with their rounds and median, why a round has no value, each round's seconds."""
    per_metric: dict[str, dict] = {}
    failures = []
    seconds = []
    for r in rs:
        ran: dict[str, Any] = (r.ran or {})[name]
        vals, why = r.values[name]  # read as the boot ended (round_values)
        failures += [{"round": r.round, "reason": w} for w in why]
        if ran["steps"] and not ran["error"]:
            seconds.append(round(sum(s["elapsed"] or 0 for s in ran["steps"].values()), 3))
        for mname, v in vals.items():
            pm = per_metric.setdefault(mname, {"values": [], "rounds": []})
            pm["values"].append(v)
            pm["rounds"].append(r.round)
    metrics = [
        {
            "name": m.name,
            "unit": m.unit,
            "better": m.better,
            "value": statistics.median(per_metric[m.name]["values"]),
            **per_metric[m.name],
        }
        for m in spec.metric
        if m.name in per_metric
    ]
    return {
        "description": spec.description,
        "packages": spec.packages,
        "measured": bool(metrics),
        "reason": None if metrics else (failures[0]["reason"] if failures else "no round ran"),
        "metrics": metrics,
        "failures": failures,
        "seconds": seconds,
    }
