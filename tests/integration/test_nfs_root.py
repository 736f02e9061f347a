"""Integration: qemu-arm through real U-Boot + TFTP, root over NFS served by
real NFS-Ganesha with the kernel's own nfsroot, to the login prompt.  The
guest really runs from NFS (a file its init writes shows up in the run's
export on the host), and no server is left behind, after a good run and after
a run killed halfway."""

import json
import signal
import subprocess
import sys
import time

import pytest

from .conftest import ARM_KERNELS as KERNELS
from .conftest import bringup

pytestmark = pytest.mark.integration


def left_behind(logs):
    out = []
    for pat in (f"ganesha.nfsd.*{logs}", f"qemu-system-arm.*{logs}"):
        p = subprocess.run(["pgrep", "-af", pat], capture_output=True, text=True)
        out += [line for line in p.stdout.splitlines() if "pgrep" not in line]
    return out


def test_boot_over_uboot_tftp_and_nfs_root(arm_built):
    logs = arm_built["logs"]
    p = bringup(
        arm_built, "boot-timing", "--board", "qemu-arm", "--runs", "1", "--path", "u-boot", "--root", "nfs", timeout=600
    )
    assert p.returncode == 0, p.stderr[-3000:]
    assert "root on NFS mounted" in p.stdout
    summary = json.loads((logs / "qemu-arm" / "boot-timing-nfs.json").read_text())
    assert summary["root"] == "nfs" and summary["path"] == "u-boot"
    # qemu-arm's instruction clock cannot time an NFS root (the server's answers are host time)
    assert summary["clock"]["kind"] == "host" and "measured on the host clock" in p.stderr
    for kernel_id in KERNELS:
        m = summary["kernels"][kernel_id]["milestones"]
        assert (
            m["starting_kernel"]["host"]["median"]
            < m["nfs_root"]["host"]["median"]
            < m["freeing_init"]["host"]["median"]
            < m["login"]["host"]["median"]
        )
        run = sorted((logs / "qemu-arm" / kernel_id / "boot").glob("*-u-boot-nfs-r01"))[-1]
        rec = json.loads((run / "boot.json").read_text())
        assert "root=/dev/nfs" in rec["cmdline"] and "vers=4" in rec["cmdline"]
        assert "nfs4 filesystem" in rec["milestones"]["nfs_root"]["text"]
        assert "initrd" not in (run / "console.log").read_text().split("Starting kernel")[0].split("tftpboot")[-1]
        # written by the guest's init over NFS: the kernel release it runs
        release = json.loads((logs / "qemu-arm" / kernel_id / "build.json").read_text())["kernelrelease"]
        assert (run / "nfsroot" / "bringup-booted").read_text().strip() == release
        assert rec["nfs"]["bind"] == "127.0.0.1"
    assert left_behind(logs) == []


def test_no_server_left_after_a_run_killed_halfway(arm_built):
    logs = arm_built["logs"]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bringup",
            "boot-timing",
            "--board",
            "qemu-arm",
            "--kernel",
            "6.12",
            "--runs",
            "1",
            "--path",
            "u-boot",
            "--root",
            "nfs",
        ],
        env=arm_built["env"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    seen = False
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        procs = left_behind(logs)
        if any("ganesha" in x for x in procs) and any("qemu" in x for x in procs):
            seen = True
            time.sleep(0.5)  # halfway: the server is up and the board is booting
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    assert seen, "never saw the NFS server and QEMU running"
    deadline = time.monotonic() + 5
    while left_behind(logs) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert left_behind(logs) == []
