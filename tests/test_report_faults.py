"""Issue 30 in the report's readers: a kernel directory or record that cannot be read
refuses the report in one line before it writes anything (the last report stays byte
for byte); a kernel never measured is left out as before.  compare, compare --boot
and build-report check the records they read against their sets (records/sets.py):
a member altered after its set was written refuses in one line naming the command,
the set and the file; they say which sets they read."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import recordfactory as rf
import test_bootcompare
from bringup import records
from bringup.records.sets import ResultSet
from conftest import run_cli
from test_report import logs  # noqa: F401  (5.10 and 6.12 of qemu-arm: builds, boots, footprint, lmbench)

AS_ROOT = os.geteuid() == 0  # root reads a chmod 000 directory: then the report runs as nobody
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
needs_a_user = pytest.mark.skipif(AS_ROOT and not shutil.which("setpriv"), reason="root, and no setpriv")


def report(logs, as_user=False):  # noqa: F811
    if not as_user:
        return run_cli("report", "--board", "qemu-arm", env_extra={"BRINGUP_LOGS": str(logs)})
    env = dict(os.environ, BRINGUP_LOGS=str(logs), HOME=str(logs))
    cmd = [*(NOBODY if AS_ROOT else []), sys.executable, "-m", "bringup", "report", "--board", "qemu-arm"]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)


def snapshot(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.fixture
def reported(logs):  # noqa: F811
    """logs with a good report written, and that report's files; as root, a copy of them owned
    by nobody in a directory nobody can reach (the report then runs as nobody)."""
    if AS_ROOT:
        top = Path(tempfile.mkdtemp(prefix="bringup-faults-"))
        top.chmod(0o755)
        shutil.copytree(logs, top / "logs")
        logs = top / "logs"
    p = report(logs)
    assert p.returncode == 0, p.stderr
    if AS_ROOT:
        subprocess.run(["chown", "-R", "65534:65534", str(logs)], check=True)
    out = logs / "qemu-arm" / "report"
    before = snapshot(out)
    assert {"index.html", "report.md", "model.json"} <= set(before)
    yield logs, out, before
    if AS_ROOT:
        shutil.rmtree(logs.parent, ignore_errors=True)


@needs_a_user
@pytest.mark.parametrize("what", ["5.10", "6.12/lmbench.json", ".sets"])
def test_an_unreadable_kernel_directory_or_record_refuses_and_keeps_the_last_report(reported, what):
    top, out, before = reported
    bad = top / "qemu-arm" / what
    bad.chmod(0)
    try:
        p = report(top, as_user=True)
    finally:
        bad.chmod(0o755 if bad.is_dir() else 0o644)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2, p.stderr
    assert len(lines) == 1 and lines[0].startswith("bringup: error: report: "), p.stderr
    assert f"{bad}: cannot be read: Permission denied" in lines[0]
    assert "left out" not in p.stderr and p.stdout == ""
    assert snapshot(out) == before  # nothing written: the last report stays byte for byte


def test_a_kernel_never_measured_is_left_out_not_a_fault(reported):
    top, out, _ = reported
    shutil.rmtree(top / "qemu-arm" / "6.12")
    p = report(top)
    assert p.returncode == 0, p.stderr
    assert "cannot be read" not in p.stderr
    model = json.loads((out / "model.json").read_text())
    assert model["missing"]["build"] == ["6.12"] and model["missing"]["footprint"] == ["6.12"]


# --- compare, compare --boot, build-report: the sets they read --------------------------------


def boot_in_a_set(tmp_path) -> tuple[Path, str]:
    """boot-timing.json written as boot timing writes it: the one member of its set."""
    made = test_bootcompare.record(tmp_path, name="made.json")
    bdir = made.parent
    with ResultSet(bdir, "boot-timing") as rset:
        rset.write(bdir / "boot-timing.json", records.read(made, records.BootTiming))
    made.unlink()
    man, problems = records.sets.check(bdir, "boot-timing")
    assert man is not None and problems == []
    return bdir / "boot-timing.json", man.set


def test_compare_boot_says_the_set_it_read_and_refuses_an_altered_member(tmp_path):
    f, set_id = boot_in_a_set(tmp_path)
    env = {"BRINGUP_LOGS": str(tmp_path / "logs")}
    p = run_cli("compare", "--boot", "qemu-arm/5.10", "qemu-arm/6.12", env_extra=env)
    assert p.returncode == 0, p.stderr
    assert f"compare --boot: read boot-timing set {set_id} (" in p.stderr and "boot-timing.json" in p.stderr
    assert '"login:" prompt' in p.stdout

    f.write_bytes(f.read_bytes().replace(b'"runs_requested": 5', b'"runs_requested": 6'))  # still a good record
    assert records.read(f, records.BootTiming).runs_requested == 6
    p = run_cli("compare", "--boot", f"{f}:5.10", "qemu-arm/6.12", env_extra=env)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and p.stdout == "", p.stderr
    assert lines[0].startswith(f"bringup: error: compare --boot: boot-timing set {set_id}: ")
    assert "boot-timing.json: not the file boot-timing set" in lines[0] and "sha256 differs" in lines[0]


def builds(top: Path, in_set: bool) -> Path:
    bdir = top / "qemu-arm"
    if not in_set:
        for k in ("5.10", "6.12"):
            records.write(bdir / k / "build.json", rf.build(k))
        return bdir
    with ResultSet(bdir, "builds") as rset:
        for k in ("5.10", "6.12"):
            rset.write(bdir / k / "build.json", rf.build(k))
    return bdir


def test_build_records_in_no_set_are_read_as_before(tmp_path):
    builds(tmp_path / "logs", in_set=False)
    env = {"BRINGUP_LOGS": str(tmp_path / "logs")}
    p = run_cli("compare", "qemu-arm/5.10", "qemu-arm/6.12", env_extra=env)
    assert (p.returncode, p.stderr) == (0, ""), p.stderr
    p = run_cli("build-report", "--board", "qemu-arm", "--format", "csv", env_extra=env)
    assert (p.returncode, p.stderr) == (0, ""), p.stderr


def test_compare_and_build_report_refuse_a_build_record_not_as_its_set_wrote_it(tmp_path):
    bdir = builds(tmp_path / "logs", in_set=True)
    env = {"BRINGUP_LOGS": str(tmp_path / "logs")}
    p = run_cli("build-report", "--board", "qemu-arm", env_extra=env)
    assert p.returncode == 0 and "build-report: read builds set " in p.stderr, p.stderr
    records.write(bdir / "6.12" / "build.json", rf.build("6.12", kernelrelease="6.12.99"))  # rewritten outside
    for args in (("compare", "qemu-arm/5.10", "qemu-arm/6.12"), ("build-report", "--board", "qemu-arm")):
        p = run_cli(*args, env_extra=env)
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2 and len(lines) == 1 and p.stdout == "", p.stderr
        assert lines[0].startswith(f"bringup: error: {args[0]}: builds set "), lines
        assert "6.12/build.json: not the file builds set" in lines[0] and "sha256 differs" in lines[0]
    (bdir / "5.10" / "build.json").unlink()  # a member missing
    p = run_cli("compare", "qemu-arm/6.12", str(bdir / "6.12" / "build.json"), env_extra=env)
    assert p.returncode == 2 and "6.12/build.json: not the file builds set" in p.stderr
