"""Fault injection on small real runs (qemu-arm, real QEMU on the instruction clock, one
round, no lmbench, the kernels from the build cache): each fault class is injected at a
moment chosen by an event (a line in the run's console.log, the board's lock taken, a
process's state), never by a sleep.  Every case asserts that every earlier good file is
byte-identical, that no process is left, that the message is one line naming what failed,
and that a rerun completes.

The full disk is RLIMIT_FSIZE (`ulimit -f`) with SIGXFSZ ignored: a write beyond the
limit fails with EFBIG, as a write to a full disk fails with ENOSPC, through the same
code, and it needs no root, no loop device and no tmpfs mount.  The permission error
runs bringup as nobody (setpriv) when the tests run as root, whom permissions do not
stop.  The network gone is a network namespace without interfaces (unshare -n).  A hung
QEMU (stopped, nobody pressing Ctrl-C) waits out a step's timeout, made seconds with
--timeout-factor.

The fault classes and their cases: SIGINT and SIGSTOP of QEMU with Ctrl-C, and two runs
at once (test_two_runs_at_once_then_qemu_stopped_and_ctrl_c); SIGKILL of QEMU (footprint:
test_qemu_killed_during_a_kernel_...); SIGSTOP of QEMU alone (workloads:
test_a_hung_qemu_in_the_workloads_...); SIGKILL of bringup; ENOSPC (test_a_full_disk_...);
EACCES (test_an_unreadable_kernel_directory_...); a corrupt record; the network gone.
"""

import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from .conftest import bringup

pytestmark = pytest.mark.integration

BOARD = "qemu-arm"
SMALL = ["--lmbench", "none", "--clock", "instructions", "--lmbench-runs", "1"]


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    """A logs directory of its own with qemu-arm's kernels (copied from the build cache),
    a good footprint of both kernels and a good report: the earlier good files."""
    logs = tmp_path_factory.mktemp("faults-logs")
    env = dict(os.environ, BRINGUP_LOGS=str(logs), BRINGUP_HOST_GUARD="0")
    env.pop("BRINGUP_NO_WAIT", None)
    sh = {"logs": logs, "env": env}
    p = bringup(sh, "build-all", "--board", BOARD, timeout=3600)
    assert p.returncode == 0, p.stderr[-3000:]
    p = bringup(sh, "footprint-report", "--board", BOARD, *SMALL, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    p = bringup(sh, "report", "--board", BOARD, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return sh


# --- helpers -------------------------------------------------------------------------


def snapshot(bdir: Path) -> dict[str, bytes]:
    """Every file of the board's results but the run directories (a run adds new ones) and the lock."""
    out = {}
    for p in bdir.rglob("*"):
        rel = p.relative_to(bdir)
        if p.is_file() and not {"footprint-runs", "boot", "workload-runs"} & set(rel.parts) and rel.name != ".lock":
            out[str(rel)] = p.read_bytes()
    return out


def assert_unchanged(before: dict[str, bytes], bdir: Path, but: tuple[str, ...] = ()) -> None:
    now = snapshot(bdir)
    changed = [f for f, data in before.items() if f not in but and now.get(f) != data]
    assert changed == [], f"earlier good files changed: {changed}"
    staged = [f for f in now if ".set-" in f]
    assert staged == [], f"staged files left behind: {staged}"


def start(sh, *args, limit_bytes: int | None = None, stderr=subprocess.PIPE) -> subprocess.Popen:
    def pre():
        # Ctrl-C as at a terminal, even where this test runs with SIGINT ignored (a background job)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if limit_bytes is not None:  # a "disk" that takes limit_bytes per file: EFBIG, like ENOSPC
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return subprocess.Popen(
        [sys.executable, "-m", "bringup", *args],
        env=sh["env"],
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        preexec_fn=pre,
    )


def wait_for(what: str, pred, timeout: float = 300.0):
    """Poll pred every 20 ms until it gives something true; that value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = pred()
        if got:
            return got
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def run_dirs(bdir: Path, kernel_id: str, runs: str = "footprint-runs") -> set[Path]:
    return set((bdir / kernel_id / runs).glob("*"))


def console_has(bdir: Path, kernel_id: str, old: set[Path], text: str, runs: str = "footprint-runs"):
    def check():
        for d in run_dirs(bdir, kernel_id, runs) - old:
            log = d / "console.log"
            with contextlib.suppress(OSError):
                if text in log.read_text(errors="replace"):
                    return d
        return None

    return check


def children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rpartition(")")[2].split()
            if int(fields[1]) == pid:
                out.append(int(stat.parent.name))
    return out


def qemu_of(pid: int, kernel: str | None = None):
    """pid's QEMU child; with kernel, the one booting that kernel (on the instruction clock
    a board boots two kernels at once: JOBS)."""

    def check():
        for c in children(pid):
            with contextlib.suppress(OSError):
                if "qemu-system" not in Path(f"/proc/{c}/comm").read_text():
                    continue
                if kernel is None or f"/{BOARD}/{kernel}/" in Path(f"/proc/{c}/cmdline").read_text():
                    return c
        return None

    return check


def left_over(logs: Path) -> list[str]:
    """Processes whose command line names this logs directory (bringup, QEMU with its images)."""
    out = []
    for cmd in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            text = cmd.read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if str(logs) in text:
                out.append(f"{cmd.parent.name}: {text[:200]}")
    return out


def no_process_left(logs: Path, *pids: int) -> None:
    def gone():
        alive = [p for p in pids if Path(f"/proc/{p}").exists() and "Z" not in _state(p)]
        return not alive and not left_over(logs)

    wait_for(f"no process left ({left_over(logs)})", gone, timeout=30)


def _state(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    return ""


def one_line(stderr: str, prefix: str = "bringup: error: ") -> str:
    """The last line of stderr: the error, which must be a single line and no exception repr."""
    assert "Traceback" not in stderr, stderr[-3000:]
    last = stderr.rstrip("\n").splitlines()[-1]
    assert last.startswith(prefix), stderr[-3000:]
    assert "internal error" not in stderr and " object at 0x" not in stderr, stderr[-3000:]
    return last


def sets(bdir: Path) -> dict:
    return json.loads((bdir / ".sets" / "footprint.json").read_text())


# --- the cases -------------------------------------------------------------------------


def test_qemu_killed_during_a_kernel_leaves_it_out_and_the_step_goes_on(good):
    """SIGKILL of QEMU while mem_eat runs on 5.10: that kernel is left out (its earlier
    records byte-identical, a failure record beside them), the next kernel is measured
    and lands as a set, the line names the step, the kernel and QEMU's death."""
    logs, bdir = good["logs"], good["logs"] / BOARD
    before = snapshot(bdir)
    old = run_dirs(bdir, "5.10")
    p = start(good, "footprint-report", "--board", BOARD, *SMALL)
    wait_for("5.10's mem_eat", console_has(bdir, "5.10", old, "@@@ STEP BEGIN mem_eat"))
    os.kill(wait_for("5.10's QEMU", qemu_of(p.pid, "5.10")), signal.SIGKILL)
    out, err = p.communicate(timeout=600)
    assert p.returncode == 4, err[-3000:]
    last = one_line(err)
    assert "footprint: left out 5.10" in last and "qemu-arm/5.10: footprint run failed" in last
    assert "QEMU exited (killed by signal 9)" in last and "waiting for connection" not in last
    new = ("6.12/footprint.json", "6.12/lmbench.json", ".sets/footprint.json", "5.10/footprint-failed.json")
    assert_unchanged(before, bdir, but=new)
    failure = json.loads((bdir / "5.10" / "footprint-failed.json").read_text())
    assert failure["schema"] == "bringup.failure/1" and failure["kept"] == "footprint.json"
    assert "QEMU exited (killed by signal 9)" in failure["error"] and "<" not in failure["error"]
    man = sets(bdir)
    assert man["members"]["6.12/footprint.json"]["set"] == man["set"] != man["members"]["5.10/footprint.json"]["set"]
    assert "6.12: code+data" in err
    no_process_left(logs, p.pid)


def test_two_runs_at_once_then_qemu_stopped_and_ctrl_c(good, tmp_path):
    """A footprint holds the board: a second run with --no-wait refuses naming the holder,
    a third waits saying whom for.  QEMU stopped (SIGSTOP), then Ctrl-C: the first ends
    interrupted with nothing replaced and no process left; the waiting run then
    completes (the rerun)."""
    logs, bdir = good["logs"], good["logs"] / BOARD
    before = snapshot(bdir)
    old = run_dirs(bdir, "6.12")
    a = start(good, "footprint-report", "--board", BOARD, "--kernel", "6.12", *SMALL)
    wait_for(
        "the board's lock", lambda: "footprint" in _read(bdir / ".lock") and f"pid {a.pid}," in _read(bdir / ".lock")
    )
    b = start(good, "--no-wait", "footprint-report", "--board", BOARD, "--kernel", "5.10", *SMALL)
    _, err_b = b.communicate(timeout=120)
    assert b.returncode == 75, err_b[-3000:]
    last = one_line(err_b)
    assert f"board {BOARD} is being measured by pid {a.pid}, footprint, since " in last and "--no-wait" in last
    c_err = tmp_path / "c.stderr"
    with open(c_err, "w") as f:
        c = start(good, "footprint-report", "--board", BOARD, "--kernel", "6.12", *SMALL, stderr=f)
    wait_for("the third run waiting", lambda: f"waiting for pid {a.pid}, footprint, since " in _read(c_err))
    wait_for("6.12 booting", console_has(bdir, "6.12", old, "Linux version"))
    q = wait_for("6.12's QEMU", qemu_of(a.pid, "6.12"))
    os.kill(q, signal.SIGSTOP)
    wait_for("QEMU stopped", lambda: _state(q) == "T", timeout=10)
    a.send_signal(signal.SIGINT)
    _, err_a = a.communicate(timeout=120)
    assert a.returncode == 130, err_a[-3000:]
    assert err_a.rstrip("\n").splitlines()[-1] == "bringup: interrupted" and "Traceback" not in err_a
    wait_for("QEMU gone", lambda: not Path(f"/proc/{q}").exists() or _state(q) == "Z", timeout=30)
    assert_unchanged(before, bdir)  # the interrupted run replaced nothing
    c.communicate(timeout=600)
    assert c.returncode == 0, _read(c_err)[-3000:]
    assert_unchanged(before, bdir, but=("6.12/footprint.json", "6.12/lmbench.json", ".sets/footprint.json"))
    no_process_left(logs, a.pid, b.pid, c.pid)


def test_a_hung_qemu_in_the_workloads_leaves_its_kernel_out_and_the_next_is_measured(good):
    """QEMU stopped (SIGSTOP) while 5.10 runs its first workload step, nobody pressing
    Ctrl-C: after the step's timeout (made short with --timeout-factor) and the shell's
    check, 5.10 is left out with workloads-failed.json, its QEMU is gone, 6.12 is booted
    and lands as a set, and the line names the step, the kernel, the cause and the log;
    the rerun of 5.10 completes and removes the failure record.  The line names the hung QEMU by its pid."""
    logs, bdir = good["logs"], good["logs"] / BOARD
    before = snapshot(bdir)
    fast = ["--workloads", "compress", "--runs", "1", "--clock", "instructions", "--jobs", "1"]
    p = start(good, "workloads", "--board", BOARD, *fast, "--timeout-factor", "0.2")
    old: set[Path] = set()
    typed = wait_for("5.10's first workload step", console_has(bdir, "5.10", old, "/usr/bin/xz", "workload-runs"))
    q = wait_for("5.10's QEMU", qemu_of(p.pid, "5.10"))
    os.kill(q, signal.SIGSTOP)
    out, err = p.communicate(timeout=600)
    assert p.returncode == 4, err[-3000:]
    last = one_line(err)
    assert last.startswith("bringup: error: workloads: left out 5.10 (earlier records kept, failure records beside")
    assert (
        "qemu-arm/5.10: workload run failed: step 'workload compress, step xz_compress' did not finish within 24s"
        in last
    )
    assert "and the console did not answer after it" in last and f"{typed.name}/console.log, QEMU pid {q})" in last, (
        last
    )
    assert "6.12" not in last.partition("): ")[0]  # only 5.10 was left out
    failure = json.loads((bdir / "5.10" / "workloads-failed.json").read_text())
    assert failure["schema"] == "bringup.failure/1" and failure["step"] == "workloads"
    assert failure["error"] in last and failure["run"] == f"workload-runs/{typed.name}"
    man = json.loads((bdir / ".sets" / "workloads.json").read_text())
    assert man["members"]["6.12/workloads.json"]["set"] == man["set"] and "5.10/workloads.json" not in man["members"]
    assert_unchanged(before, bdir)  # the footprint's and the report's files
    no_process_left(logs, p.pid, q)
    r = bringup(good, "--no-wait", "workloads", "--board", BOARD, "--kernel", "5.10", *fast, "--timeout-factor", "0.2")
    assert r.returncode == 0, r.stderr[-3000:]
    assert not (bdir / "5.10" / "workloads-failed.json").exists(), "the next good run removes the failure record"
    man = json.loads((bdir / ".sets" / "workloads.json").read_text())
    assert man["members"]["5.10/workloads.json"]["set"] == man["set"] and "5.10/workloads-failed.json" in man["removed"]
    assert_unchanged(before, bdir)


def _read(p: Path) -> str:
    with contextlib.suppress(OSError):
        return p.read_text()
    return ""


def test_bringup_killed_leaves_its_set_unswitched_and_a_rerun_completes(good):
    """SIGKILL of bringup while its QEMU runs: QEMU dies with it, nothing is replaced, the
    lock goes with the process; the rerun (refusing to wait: the lock must be free) lands
    and removes 5.10's stale failure record."""
    logs, bdir = good["logs"], good["logs"] / BOARD
    before = snapshot(bdir)
    old = run_dirs(bdir, "5.10")
    p = start(good, "footprint-report", "--board", BOARD, "--kernel", "5.10", *SMALL)
    wait_for("5.10's mem_eat", console_has(bdir, "5.10", old, "@@@ STEP BEGIN mem_eat"))
    q = wait_for("QEMU", qemu_of(p.pid))
    p.kill()
    p.communicate(timeout=60)
    no_process_left(logs, p.pid, q)
    assert_unchanged(before, bdir)
    r = bringup(good, "--no-wait", "footprint-report", "--board", BOARD, "--kernel", "5.10", *SMALL, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert not (bdir / "5.10" / "footprint-failed.json").exists(), "a stale failure record is removed"
    man = sets(bdir)
    assert man["members"]["5.10/footprint.json"]["set"] == man["set"]
    assert_unchanged(
        before,
        bdir,
        but=("5.10/footprint.json", "5.10/lmbench.json", ".sets/footprint.json", "5.10/footprint-failed.json"),
    )


def test_a_full_disk_names_the_file_and_replaces_nothing(good):
    """A file system that takes no more (RLIMIT_FSIZE): the report's set is not switched in
    (its files byte-identical), the footprint's boot fails on its console log, each in one
    line naming the file; the reruns complete."""
    logs, bdir = good["logs"], good["logs"] / BOARD
    before = snapshot(bdir)
    p = start(good, "report", "--board", BOARD, limit_bytes=16 * 1024)
    _, err = p.communicate(timeout=300)
    assert p.returncode != 0
    last = one_line(err)
    assert f"{bdir}/report/" in last and "File too large" in last
    assert_unchanged(before, bdir)
    # the footprint: wherever the first write beyond the limit lands (the ramdisk's userspace in the
    # cache, a console log, a record), one line names that file and nothing is replaced
    p = start(good, "footprint-report", "--board", BOARD, "--kernel", "6.12", *SMALL, limit_bytes=4 * 1024)
    _, err = p.communicate(timeout=300)
    assert p.returncode not in (0, 70), err[-3000:]
    last = one_line(err)
    assert "File too large" in last and ": /" in last, last  # the file, by its path
    assert_unchanged(before, bdir, but=("6.12/footprint-failed.json", ".sets/footprint.json"))
    no_process_left(logs, p.pid)
    r = bringup(good, "report", "--board", BOARD, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "report: read footprint set " in r.stderr


@pytest.fixture
def copy_of_logs(good):
    """The results copied where every user can read them (pytest's tmp_path is 0700 under root)."""
    d = Path(tempfile.mkdtemp(prefix="bringup-faults-"))
    d.chmod(0o755)
    shutil.copytree(good["logs"] / BOARD, d / BOARD, symlinks=True)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_an_unreadable_kernel_directory_is_named_not_dropped(good, copy_of_logs):
    """EACCES: a kernel directory the user cannot read refuses the report in one line naming
    it and the cause (exit non-zero), not taken as a kernel that was never measured; the
    last report stays byte for byte."""
    d = copy_of_logs
    as_nobody = os.geteuid() == 0
    if as_nobody:
        subprocess.run(["chown", "-R", "65534:65534", str(d)], check=True)
    pre = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if as_nobody else []

    def report():
        return subprocess.run(
            [*pre, sys.executable, "-m", "bringup", "report", "--board", BOARD],
            env=dict(good["env"], BRINGUP_LOGS=str(d), HOME=str(d)),
            capture_output=True,
            text=True,
            timeout=300,
        )

    first = report()
    assert first.returncode == 0, first.stderr[-3000:]
    out = d / BOARD / "report"
    before = {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    (d / BOARD / "5.10").chmod(0)
    p = report()
    assert p.returncode == 2, p.stderr[-3000:]
    line = one_line(p.stderr)
    assert f"{d / BOARD / '5.10'}: cannot be read: Permission denied" in line, line
    assert "Traceback" not in p.stderr and "left out" not in p.stderr
    assert {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()} == before


def test_a_corrupt_record_is_left_out_in_one_line_and_the_set_check_names_it(good, copy_of_logs):
    d = copy_of_logs
    f = d / BOARD / "6.12" / "lmbench.json"
    f.write_bytes(f.read_bytes()[:100])  # truncated
    p = subprocess.run(
        [sys.executable, "-m", "bringup", "report", "--board", BOARD],
        env=dict(good["env"], BRINGUP_LOGS=str(d)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    lines = p.stderr.splitlines()
    assert any(x.startswith("report: left out ") and "6.12/lmbench.json: not valid JSON" in x for x in lines)
    assert any(
        x.startswith("report: read footprint set ") and "6.12/lmbench.json: not the file footprint set" in x
        for x in lines
    ), p.stderr[-3000:]


def test_the_network_gone_is_one_line_and_the_mirror_is_asked_once(tmp_path):
    """No network (a namespace without interfaces) and nothing cached: the source fetch
    fails in one line naming the mirror and the suite, trying apt-get update once."""
    # apt-get through a wrapper that counts its updates (first in PATH)
    wrap = tmp_path / "bin"
    wrap.mkdir()
    calls = tmp_path / "apt-get.calls"
    real = shutil.which("apt-get")
    (wrap / "apt-get").write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexec {real} "$@"\n')
    (wrap / "apt-get").chmod(0o755)
    env = dict(os.environ, BRINGUP_LOGS=str(tmp_path / "logs"), BRINGUP_CACHE=str(tmp_path / "cache"))
    env["PATH"] = f"{wrap}:{env['PATH']}"
    env.pop("BRINGUP_DL_DIR", None)
    p = subprocess.run(
        ["unshare", "-n", sys.executable, "-m", "bringup", "build-all", "--board", BOARD, "--kernel", "5.10"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if "unshare failed" in p.stderr:
        pytest.skip("no network namespaces here")
    assert p.returncode == 2, p.stderr[-3000:]
    last = one_line(p.stderr)
    assert "apt-get update (bullseye): the Debian mirror could not be reached" in last
    updates = [x for x in calls.read_text().splitlines() if x.endswith(" update")]
    assert len(updates) == 1, f"the mirror was asked {len(updates)} times: {updates}"
    assert last.startswith(f"bringup: error: {BOARD}/5.10: sources: ")
    assert not (tmp_path / "logs" / BOARD / "5.10" / "build.json").exists()
    failure = json.loads((tmp_path / "logs" / BOARD / "5.10" / "sources-failed.json").read_text())
    assert failure["schema"] == "bringup.failure/1" and failure["step"] == "sources"
    assert failure["error"] == last.removeprefix("bringup: error: ")
