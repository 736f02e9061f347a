"""make all's "up to date" decisions, from records built with the record models:
never by building anything (the ramdisk is judged by its records and the key of
its inputs)."""

import re

import pytest

import recordfactory as rf
from bringup import records, study
from bringup.builder import rootfs
from bringup.model.board import load_board
from bringup.model.clocks import clock_of, with_clock
from bringup.records.base import ClockInfo


@pytest.fixture
def board():
    """qemu-arm on the host clock: the records of these tests are host-clock records
    (the shipped board measures on the instruction clock: see the clock tests below)."""
    return with_clock(load_board("qemu-arm"), "host")


@pytest.fixture(autouse=True)
def no_ramdisk_builds(monkeypatch):
    def refuse(*a, **kw):
        raise AssertionError("a freshness check must not build the ramdisk")

    monkeypatch.setattr(rootfs, "build", refuse)
    monkeypatch.setattr(rootfs, "busybox_for", refuse)


def write_builds(logs, board, key="k1"):
    for k in board.kernels:
        records.write(logs / board.name / k.id / "build.json", rf.build(k.id, key=rf.key(f"{key}-{k.id}")))


def timing(board, inputs_key, ok=5, path="u-boot", key="k1"):
    kernels = {
        k.id: dict(rf.kernel_timing({}, [f"r{i}" for i in range(ok)]), build_key=rf.key(f"{key}-{k.id}"))
        for k in board.kernels
    }
    return rf.boot_timing(path=path, kernels=kernels, rootfs=rf.rootfs_ref("initramfs", inputs_key))


def test_boot_step_is_redone_when_the_records_do_not_fit(tmp_path, board):
    now = rootfs.inputs_key(board)
    write_builds(tmp_path, board)
    assert study.boot_fresh(board, tmp_path, tmp_path, 5, "u-boot") == "no boot-timing.json"
    assert study.boot_fresh(board, tmp_path, tmp_path, 5, "u-boot", root="nfs") == "no boot-timing-nfs.json"
    f = tmp_path / "qemu-arm" / "boot-timing.json"
    records.write(f, timing(board, now, path="direct"))
    assert study.boot_fresh(board, tmp_path, tmp_path, 5, "u-boot") == "made with boot path direct, not u-boot"
    records.write(f, timing(board, now))
    assert study.boot_fresh(board, tmp_path, tmp_path, 5, "u-boot") is None
    assert study.boot_fresh(board, tmp_path, tmp_path, 7, "u-boot") == "5.10: 5 good runs, 7 wanted"
    records.write(f, timing(board, rf.key("another overlay")))
    assert study.boot_fresh(board, tmp_path, tmp_path, 5, "u-boot") == "the ramdisk's inputs changed since"
    records.write(f, timing(board, now))
    write_builds(tmp_path, board, key="k2")
    assert study.boot_fresh(board, tmp_path, tmp_path, 5, "u-boot") == "5.10 was rebuilt since"


def test_a_bad_record_is_redone_and_says_why(tmp_path, board):
    write_builds(tmp_path, board)
    f = tmp_path / "qemu-arm" / "boot-timing.json"
    f.write_text('{"schema": "bringup.boot-timing/3", "board": ')
    why = study.boot_fresh(board, tmp_path, tmp_path, 5, "u-boot")
    assert why.startswith(f"a record does not read: {f}: not valid JSON")


def test_ramdisk_of_a_v1_summary_is_judged_by_the_rootfs_record(tmp_path, board):
    """/1 summaries have no inputs key: the ramdisk's own record says whether it is the same."""
    write_builds(tmp_path, board)
    records.write(tmp_path / "qemu-arm" / "boot-timing.json", timing(board, None))
    assert study.boot_fresh(board, tmp_path, tmp_path, 5, "u-boot") == "no record of the ramdisk initramfs.cpio.gz"
    rootfs_record = rf.rootfs_ref("initramfs")
    rec = records.Rootfs(
        board="qemu-arm",
        name="initramfs",
        file=rootfs_record["file"],
        bytes=1000,
        sha256=rootfs_record["sha256"],
        archive_sha256=None,
        inputs_key=rootfs.inputs_key(board),
        userspace_arch="armhf",
        libc="glibc",
        busybox={"source": "debian bookworm busybox-static:armhf", "version": "1:1.35.0-4+b3"},
        ext2=None,
        files=["bin/busybox"],
        extra={},
    )
    records.write(tmp_path / "qemu-arm" / "rootfs" / "initramfs.json", rec)
    assert study.boot_fresh(board, tmp_path, tmp_path, 5, "u-boot") is None
    records.write(tmp_path / "qemu-arm" / "rootfs" / "initramfs.json", rec.model_copy(update={"sha256": rf.key("x")}))
    assert study.boot_fresh(board, tmp_path, tmp_path, 5, "u-boot") == "the ramdisk changed since"


def test_footprint_step(tmp_path, board):
    now = rootfs.inputs_key(board)
    write_builds(tmp_path, board)
    assert study.footprint_fresh(board, tmp_path, "quick") == "no footprint records for 5.10"
    for k in board.kernels:
        d = tmp_path / "qemu-arm" / k.id
        footprint_record = rf.footprint(k.id, build_key=rf.key(f"k1-{k.id}"), rootfs=rf.rootfs_ref("footprint", now))
        records.write(d / "footprint.json", footprint_record)
        records.write(d / "lmbench.json", rf.lmbench(k.id, runs=5))
    assert study.footprint_fresh(board, tmp_path, "quick", 5) is None
    assert study.footprint_fresh(board, tmp_path, "quick", 6) == "5.10: 5 lmbench run(s), 6 wanted"
    assert study.footprint_fresh(board, tmp_path, "full", 5) == "5.10: lmbench quick, full wanted"
    d = tmp_path / "qemu-arm" / "5.10"
    footprint_record = records.read(d / "footprint.json", records.Footprint)
    records.write(
        d / "footprint.json",
        footprint_record.model_copy(update={"rootfs": records.RootfsRef(**rf.rootfs_ref("footprint", rf.key("old")))}),
    )
    assert study.footprint_fresh(board, tmp_path, "quick", 5) == "5.10: the ramdisk's inputs changed since"
    write_builds(tmp_path, board, key="k2")
    assert study.footprint_fresh(board, tmp_path, "quick", 5) == "5.10 was rebuilt since"


def test_lmbench_not_measured_for_want_of_binaries_is_stale_once_its_source_is_there(tmp_path, board, monkeypatch):
    now = rootfs.inputs_key(board)
    write_builds(tmp_path, board)
    for k in board.kernels:
        d = tmp_path / "qemu-arm" / k.id
        records.write(
            d / "footprint.json",
            rf.footprint(k.id, build_key=rf.key(f"k1-{k.id}"), rootfs=rf.rootfs_ref("footprint", now)),
        )
        reason = "lmbench: Debian has no lmbench binaries for powerpc"
        records.write(d / "lmbench.json", rf.not_measured(k.id, reason, source={"lmbench": None, "libraries": None}))
    monkeypatch.setenv("BRINGUP_DL_DIR", str(tmp_path / "none"))
    monkeypatch.setenv("BRINGUP_CACHE", str(tmp_path / "cache"))
    assert study.footprint_fresh(board, tmp_path, "quick") is None  # nothing bringup could do
    dl = tmp_path / "dl"
    dl.mkdir()
    tgz = dl / "lmbench-3.0-a9.tar.gz"
    tgz.write_bytes(b"not lmbench")
    monkeypatch.setenv("BRINGUP_DL_DIR", str(dl))
    assert study.footprint_fresh(board, tmp_path, "quick") is None  # a file of that name, but not that source
    monkeypatch.setattr(study.lmbench_build, "default_spec", lambda src, cache, say: {"tarball": str(tgz)})
    assert study.footprint_fresh(board, tmp_path, "quick") == (
        "5.10: lmbench not measured, and bringup can now build it (configs/lmbench.toml [source] found)"
    )


def test_inputs_key_follows_the_overlay(tmp_path, board):
    overlay = tmp_path / "overlay"
    (overlay / "etc").mkdir(parents=True)
    (overlay / "etc" / "issue").write_text("bringup\n")
    a = rootfs.inputs_key(board, overlay)
    assert rootfs.inputs_key(board, overlay) == a
    (overlay / "etc" / "issue").write_text("changed\n")
    assert rootfs.inputs_key(board, overlay) != a


def test_a_profile_with_study_runs_is_judged_on_its_own_record(tmp_path, board):
    """make all runs the initcalls profile (study_runs) besides timing: its record is its own file."""
    from bringup.model.profiles import study_profiles

    (prof,) = study_profiles()
    now = rootfs.inputs_key(board)
    write_builds(tmp_path, board)
    records.write(tmp_path / "qemu-arm" / "boot-timing.json", timing(board, now))
    n = prof.spec.study_runs
    why = study.boot_fresh(board, tmp_path, tmp_path, n, "u-boot", profile=prof.name)
    assert why == "no boot-timing-initcalls.json"
    records.write(tmp_path / "qemu-arm" / "boot-timing-initcalls.json", timing(board, now, ok=n - 1))
    assert (
        study.boot_fresh(board, tmp_path, tmp_path, n, "u-boot", profile=prof.name)
        == f"5.10: {n - 1} good runs, {n} wanted"
    )
    records.write(tmp_path / "qemu-arm" / "boot-timing-initcalls.json", timing(board, now, ok=n))
    assert study.boot_fresh(board, tmp_path, tmp_path, n, "u-boot", profile=prof.name) is None


def test_workloads_step(tmp_path, board):
    now = rootfs.inputs_key(board)
    write_builds(tmp_path, board)
    names = ["openssl"]
    assert study.workloads_fresh(board, tmp_path, names, "quick", 3) == "no workloads record for 5.10"
    for k in board.kernels:
        rec = rf.workloads(k.id, build_key=rf.key(f"k1-{k.id}"), rootfs=rf.rootfs_ref("workloads", now))
        records.write(tmp_path / "qemu-arm" / k.id / "workloads.json", rec)
    assert study.workloads_fresh(board, tmp_path, names, "quick", 3) is None
    assert study.workloads_fresh(board, tmp_path, names, "quick", 4) == "5.10: 3 workload round(s), 4 wanted"
    assert study.workloads_fresh(board, tmp_path, names, "full", 3) == "5.10: workloads quick, full wanted"
    assert (
        study.workloads_fresh(board, tmp_path, ["sysbench"], "quick", 3) == "5.10: workload sysbench not in its record"
    )
    assert study.workloads_fresh(board, tmp_path, None, "quick", 3).startswith("5.10: workload ")  # all of them
    write_builds(tmp_path, board, key="k2")
    assert study.workloads_fresh(board, tmp_path, names, "quick", 3) == "5.10 was rebuilt since"


def test_the_workloads_step_is_fresh_without_the_workloads_outside_the_default_set(tmp_path, board):
    """make all (no WORKLOADS=) wants the default set: a record holding it is up to date
    although 7zip_bench (default_set = false) is not in it; WORKLOADS=all wants it."""
    from bringup.model import workload as wm

    now = rootfs.inputs_key(board)
    write_builds(tmp_path, board)
    default = wm.load_all()
    everything = wm.load_all(["all"])
    assert set(everything) - set(default) == {"7zip_bench"}
    for k in board.kernels:
        base = rf.workloads(k.id).workloads["openssl"].model_dump()
        wls = {n: {**base, "packages": wl.packages} for n, wl in default.items()}
        rec = rf.workloads(k.id, build_key=rf.key(f"k1-{k.id}"), rootfs=rf.rootfs_ref("workloads", now), workloads=wls)
        records.write(tmp_path / "qemu-arm" / k.id / "workloads.json", rec)
    assert study.workloads_fresh(board, tmp_path, None, "quick", 3) is None
    assert study.workloads_fresh(board, tmp_path, ["all"], "quick", 3) == "5.10: workload 7zip_bench not in its record"
    assert (
        study.workloads_fresh(board, tmp_path, ["7zip_bench"], "quick", 3)
        == "5.10: workload 7zip_bench not in its record"
    )


def test_the_study_runs_the_workloads_step_unless_told_none(tmp_path, board, monkeypatch):
    """make all: build, boot timing, footprint, workloads, report; WORKLOADS=none leaves the step out;
    an unknown workload is refused before anything is built."""
    from bringup.model.base import DataError

    calls: list = []
    monkeypatch.setattr(study.build, "build_all", lambda *a, **kw: calls.append("build"))
    monkeypatch.setattr(study, "boot_fresh", lambda *a, **kw: None)
    monkeypatch.setattr(study, "footprint_fresh", lambda *a, **kw: None)
    monkeypatch.setattr(study, "workloads_fresh", lambda *a, **kw: "no workloads record for 5.10")
    monkeypatch.setattr(study.appworkloads, "workloads", lambda *a, **kw: calls.append(("workloads", kw["names"])))
    monkeypatch.setattr(study.report, "write", lambda *a, **kw: calls.append("report"))
    said: list[str] = []
    study.run(board, tmp_path, tmp_path, study.StudyPlan(workloads=["openssl"]), say=said.append)
    assert calls == ["build", ("workloads", ["openssl"]), "report"]
    assert "== [4/5] workloads qemu-arm: 3 rounds, quick (no workloads record for 5.10)" in said
    calls.clear()
    study.run(board, tmp_path, tmp_path, study.StudyPlan(workloads=[]), say=said.append)
    assert calls == ["build", "report"]
    calls.clear()
    with pytest.raises(DataError, match="workload 'nope': no file"):
        study.run(board, tmp_path, tmp_path, study.StudyPlan(workloads=["nope"]), say=said.append)
    assert calls == []


def test_the_study_numbers_its_steps_in_the_order_they_run_with_the_build_cost_among_them(tmp_path, board, monkeypatch):
    """make all BUILD_COST=1: the build cost is a step of its own, numbered after build-all (it
    printed "[1/5]" like build-all, and the count left it out)."""
    monkeypatch.setattr(study.build, "build_all", lambda *a, **kw: None)
    monkeypatch.setattr(study.buildcost, "measure", lambda *a, **kw: (None, [], True))
    monkeypatch.setattr(study.costreport, "compare", lambda cost: [])
    monkeypatch.setattr(study, "boot_fresh", lambda *a, **kw: None)
    monkeypatch.setattr(study, "footprint_fresh", lambda *a, **kw: None)
    monkeypatch.setattr(study, "workloads_fresh", lambda *a, **kw: None)
    monkeypatch.setattr(study.report, "write", lambda *a, **kw: None)
    said: list[str] = []
    study.run(board, tmp_path, tmp_path, study.StudyPlan(workloads=["openssl"], build_cost=True), say=said.append)
    numbered = [line.split("]")[0] + "]" for line in said if line.startswith("== [")]
    assert numbered == ["== [1/6]", "== [2/6]", *["== [3/6]"] * (len(numbered) - 5), "== [4/6]", "== [5/6]", "== [6/6]"]
    assert any(line.startswith("== [2/6] build cost qemu-arm") for line in said)
    said.clear()
    study.run(board, tmp_path, tmp_path, study.StudyPlan(workloads=[]), say=said.append)
    assert [line for line in said if line.startswith("== [")][-1].startswith("== [4/4] report")


def test_a_bad_profile_lmbench_set_or_mode_is_refused_before_anything_is_built(tmp_path, board, monkeypatch):
    """make all reads every file and value its later steps need before the first build: a broken
    configs/profiles/<name>.toml or configs/lmbench.toml, or an unknown lmbench mode, is one line,
    and nothing has been built."""
    import shutil

    from bringup.errors import BringupError
    from bringup.model.base import DataError
    from bringup.util import paths

    calls: list = []
    monkeypatch.setattr(study.build, "build_all", lambda *a, **kw: calls.append("build"))
    with pytest.raises(BringupError, match="lmbench mode 'fast': use quick, full or none"):
        study.run(board, tmp_path, tmp_path, study.StudyPlan(workloads=[], lmbench="fast"), say=lambda s: None)
    configs = tmp_path / "configs"
    shutil.copytree(paths.CONFIGS, configs)
    monkeypatch.setattr(paths, "CONFIGS", configs)
    (configs / "lmbench.toml").write_text("[[bench]]\nname = 5\n")
    with pytest.raises(DataError, match=r"lmbench\.toml: field '"):
        study.run(board, tmp_path, tmp_path, study.StudyPlan(workloads=[]), say=lambda s: None)
    shutil.copy(paths.ROOT / "configs" / "lmbench.toml", configs / "lmbench.toml")
    (configs / "profiles" / "initcalls.toml").write_text('description = "x"\nstudy_runs = -1\n')
    with pytest.raises(DataError, match=r"initcalls\.toml: field 'study_runs'"):
        study.run(board, tmp_path, tmp_path, study.StudyPlan(workloads=[]), say=lambda s: None)
    assert calls == []


def test_the_study_says_where_the_time_went_step_by_step():
    """make all ends with one line: each step's wall time, 'up to date' for a skipped one, the total."""
    now = [100.0]
    clock = study.StepClock(clock=lambda: now[0])
    with clock.step("build-all"):
        now[0] += 314
    clock.skipped("boot-timing")
    with pytest.raises(RuntimeError), clock.step("footprint-report"):  # a failing step still counts its time
        now[0] += 162
        raise RuntimeError("boot failed")
    with clock.step("report"):
        now[0] += 4.6
    assert clock.line() == (
        "Time: build-all 5m14s, boot-timing up to date, footprint-report 2m42s, report 0m04s; total 8m00s"
    )


def test_the_study_ends_with_its_time_line(tmp_path, board, monkeypatch):
    monkeypatch.setattr(study.build, "build_all", lambda *a, **kw: None)
    monkeypatch.setattr(study, "boot_fresh", lambda *a, **kw: None)
    monkeypatch.setattr(study, "footprint_fresh", lambda *a, **kw: None)
    monkeypatch.setattr(study.report, "write", lambda *a, **kw: "the report")
    said: list[str] = []
    assert study.run(board, tmp_path, tmp_path, study.StudyPlan(workloads=[]), say=said.append) == "the report"
    assert re.fullmatch(
        r"Time: build-all 0m0\ds, boot-timing up to date, initcalls up to date, footprint-report up to date, "
        r"report 0m0\ds; total 0m0\ds",
        said[-1],
    ), said[-1]


# --- the clock a record was measured on ----------------------------------------


def test_a_record_measured_on_another_clock_is_out_of_date(tmp_path, board):
    """qemu-arm measures on the instruction clock: a study's host-clock records (or the
    other way round, CLOCK=host) are redone, each step saying why; the same records
    measured on the board's clock are up to date."""
    shipped = load_board("qemu-arm")
    assert clock_of(shipped).kind == "instructions"
    now = rootfs.inputs_key(board)
    write_builds(tmp_path, board)
    f = tmp_path / "qemu-arm" / "boot-timing.json"
    records.write(f, timing(board, now))  # the host clock: the model's default
    wanted = "measured on the host clock, the instructions clock wanted"
    assert study.boot_fresh(board, tmp_path, tmp_path, 5, "u-boot") is None
    assert study.boot_fresh(shipped, tmp_path, tmp_path, 5, "u-boot") == wanted
    records.write(f, timing(board, now).model_copy(update={"clock": ClockInfo(**rf.INSTRUCTIONS)}))
    assert study.boot_fresh(shipped, tmp_path, tmp_path, 5, "u-boot") is None
    assert (
        study.boot_fresh(board, tmp_path, tmp_path, 5, "u-boot")
        == "measured on the instructions clock, the host clock wanted"
    )
    # footprint and workloads: per kernel
    for k in board.kernels:
        d = tmp_path / "qemu-arm" / k.id
        footprint_record = rf.footprint(k.id, build_key=rf.key(f"k1-{k.id}"), rootfs=rf.rootfs_ref("footprint", now))
        records.write(d / "footprint.json", footprint_record)
        records.write(d / "lmbench.json", rf.lmbench(k.id, runs=5))
        wl = rf.workloads(k.id, build_key=rf.key(f"k1-{k.id}"), rootfs=rf.rootfs_ref("workloads", now))
        records.write(d / "workloads.json", wl)
    assert study.footprint_fresh(board, tmp_path, "quick", 5) is None
    assert study.footprint_fresh(shipped, tmp_path, "quick", 5) == f"5.10: {wanted}"
    assert study.workloads_fresh(board, tmp_path, ["openssl"], "quick", 3) is None
    assert study.workloads_fresh(shipped, tmp_path, ["openssl"], "quick", 3) == f"5.10: {wanted}"
    for k in board.kernels:
        d = tmp_path / "qemu-arm" / k.id
        footprint_record = rf.footprint(
            k.id, build_key=rf.key(f"k1-{k.id}"), rootfs=rf.rootfs_ref("footprint", now), clock=rf.INSTRUCTIONS
        )
        records.write(d / "footprint.json", footprint_record)
        wl = rf.workloads(
            k.id, build_key=rf.key(f"k1-{k.id}"), rootfs=rf.rootfs_ref("workloads", now), clock=rf.INSTRUCTIONS
        )
        records.write(d / "workloads.json", wl)
    assert study.footprint_fresh(shipped, tmp_path, "quick", 5) is None
    assert study.workloads_fresh(shipped, tmp_path, ["openssl"], "quick", 3) is None
    assert study.workloads_fresh(board, tmp_path, ["openssl"], "quick", 3) == (
        "5.10: measured on the instructions clock, the host clock wanted"
    )


def test_the_study_says_which_clock_measures(tmp_path, board, monkeypatch):
    monkeypatch.setattr(study.build, "build_all", lambda *a, **kw: None)
    monkeypatch.setattr(study, "boot_fresh", lambda *a, **kw: None)
    monkeypatch.setattr(study, "footprint_fresh", lambda *a, **kw: None)
    monkeypatch.setattr(study.report, "write", lambda *a, **kw: None)
    for b, words in [
        (load_board("qemu-arm"), "instruction clock (8 ns per instruction, QEMU icount)"),
        (board, "host clock"),
    ]:
        said: list[str] = []
        study.run(b, tmp_path, tmp_path, study.StudyPlan(workloads=[]), say=said.append)
        assert said[0] == f"== qemu-arm: measured on the {words}"


# --- one measurement of a board at a time: the study holds the board for all its steps ---

# a study whose steps are stand-ins: the build says so, boot timing takes the board's lock again
# as the real step does (it must not wait for its own study), and before the footprint step the
# study stops until told to go on (a line on its standard input)
HOLDING_STUDY = """
import sys
from pathlib import Path
from types import SimpleNamespace
from bringup import study
from bringup.model.board import load_board
from bringup.model.clocks import with_clock
from bringup.util import lock

logs = Path(sys.argv[1])
def step(line):
    print(line, flush=True)
def boots(board, logs, cache, boots, say):
    with lock.board(Path(logs) / board.name, "boot-timing", wait=False):
        step("booted")
    return SimpleNamespace(kernels={})  # a summary with no kernel's runs: none failed
def between(*a, **kw):
    step("between boot-timing and footprint")
    sys.stdin.readline()
    return None
study.build.build_all = lambda *a, **kw: step("built")
study.boot_fresh = lambda *a, **kw: "asked"
study.boot_on_ramdisk = boots
study.footprint_fresh = between
study.report.write = lambda *a, **kw: step("report")
study.run(with_clock(load_board("qemu-arm"), "host"), logs, logs, study.StudyPlan(workloads=[]), say=lambda m: None)
"""

WAITER = """
import sys
from bringup.util import lock
with lock.board(sys.argv[1], "boot-timing", say=lambda m: print(m, flush=True)):
    print("measuring", flush=True)
"""


def test_a_study_holds_its_board_from_the_first_step_to_the_report(tmp_path, monkeypatch):
    """make all BOARD=x and a make boot-timing BOARD=x started while it runs: the second waits
    for the whole study (not only for the step under way), or refuses with --no-wait (exit 75)
    in one line naming the study's pid, that it is a study and the step it is in."""
    import subprocess
    import sys

    from conftest import run_cli

    logs = tmp_path / "logs"
    for k in ("5.10", "6.12"):  # boot-timing gets as far as the board's lock
        records.write(logs / "qemu-arm" / k / "build.json", rf.build(k))
    first = subprocess.Popen(
        [sys.executable, "-c", HOLDING_STUDY, str(logs)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    waiter = None
    try:
        lines = [first.stdout.readline().strip()]
        while lines[-1] not in ("between boot-timing and footprint", ""):
            lines.append(first.stdout.readline().strip())
        # each boot-timing step (timing, the initcalls profile) took the study's lock again without waiting
        assert lines == ["built", "booted", "booted", "between boot-timing and footprint"]
        p = run_cli(
            "--no-wait", "boot-timing", "-b", "qemu-arm", "--clock", "host", env_extra={"BRINGUP_LOGS": str(logs)}
        )
        assert p.returncode == 75, p.stderr
        assert p.stderr.count("\n") == 1
        assert p.stderr.startswith(
            f"bringup: error: boot-timing: board qemu-arm is being measured by pid {first.pid}, "
            "study: footprint-report, since "
        )
        assert p.stderr.rstrip().endswith("not waiting (--no-wait)")
        waiter = subprocess.Popen(
            [sys.executable, "-c", WAITER, str(logs / "qemu-arm")], stdout=subprocess.PIPE, text=True
        )
        said = waiter.stdout.readline().strip()
        assert said.startswith(f"waiting for pid {first.pid}, study: footprint-report, since "), said
        assert waiter.poll() is None, "the second run waits while the study is between two steps"
        first.stdin.write("go on\n")
        first.stdin.flush()
        assert first.stdout.readline().strip() == "report"
        assert first.wait(30) == 0
        later = waiter.stdout.readline().strip()
        while later.startswith(f"still waiting for pid {first.pid}, study"):  # as the study goes on (its report)
            later = waiter.stdout.readline().strip()
        assert later == "measuring"  # only now: the study is over
        assert waiter.wait(30) == 0
    finally:
        for proc in (first, waiter):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
