"""Integration: the real-board path without hardware.  Real QEMU and real
U-Boot play a board on the bench: its serial port is wired to a serial line
(serial_line.py) whose console end is a socket:// URL that exists whether the
board is on or not, as ser2net's is; the board file's power commands start and
stop QEMU, which prints its U-Boot banner at once, heard only if the console
already listens; the kernel and ramdisk go through a host TFTP directory, as
with tftpd-hpa.  bringup's serial-board target runs unchanged."""

import json
import shutil
import subprocess
import time

import pytest

from bringup.boot.nfsserver import GaneshaServer

from .conftest import ROOT, bringup
from .rfc2217_bridge import Rfc2217Bridge
from .serial_line import SerialLine

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    "root, console", [("ramdisk", "socket"), ("ramdisk", "rfc2217"), ("nfs", "socket"), ("nfs-external", "socket")]
)
def test_qemu_as_a_real_board_through_uboot(arm_built, tmp_path, root, console):
    """root: the ramdisk; NFS from bringup's Ganesha bound to the bench address; or
    the user's own NFS server (here a Ganesha the test runs) given by path.
    console: QEMU's TCP serial directly (socket://, as ser2net's raw mode), or
    through an RFC 2217 server (rfc2217://, as ser2net's telnet(rfc2217) mode)."""
    logs = arm_built["logs"]
    if (logs / "bench-arm").exists():
        shutil.rmtree(logs / "bench-arm")
    # the board's kernels are qemu-arm's: reuse its build records and images
    shutil.copytree(
        logs / "qemu-arm" / "6.12", logs / "bench-arm" / "6.12", ignore=shutil.ignore_patterns("boot", "footprint-runs")
    )
    line = SerialLine()
    port = line.board_port
    state, tftp = tmp_path / "state", tmp_path / "tftproot"
    state.mkdir()
    tftp.mkdir()
    power = str(ROOT / "tests" / "integration" / "qemu-power")
    qemu = [
        "qemu-system-arm",
        "-M",
        "virt",
        "-cpu",
        "cortex-a15",
        "-m",
        "512",
        "-display",
        "none",
        "-monitor",
        "none",
        "-nodefaults",
        "-serial",
        f"tcp:127.0.0.1:{port},nodelay=on",  # QEMU connects to the line when powered on, and prints at once
        "-netdev",
        f"user,id=n0,ipv6=off,tftp={tftp}",
        "-device",
        "virtio-net-device,netdev=n0",
        "-bios",
        "/usr/lib/u-boot/qemu_arm/u-boot.bin",
    ]
    nfs = ""
    own_server = None
    if root == "nfs":
        nfs = '[nfs]\nbind = "127.0.0.1"\naddress = "10.0.2.2"\n'
    elif root == "nfs-external":
        (tmp_path / "srv").mkdir()
        own_server = GaneshaServer(tmp_path / "srv", tmp_path / "own-server")
        own_server.start()
        nfs = (
            f'[nfs]\nserver = "external"\naddress = "10.0.2.2"\nport = {own_server.port}\n'
            f'export_dir = "{tmp_path / "srv"}"\nexport_path = "{own_server.pseudo}"\n'
        )
    bridge = Rfc2217Bridge(line.url) if console == "rfc2217" else None
    console_url = bridge.url if bridge else line.url
    board = tmp_path / "bench-arm.toml"
    board.write_text(f"""
name = "bench-arm"
description = "QEMU playing a board on the bench"
arch = "arm"
memory_mb = 512
console = "ttyAMA0,115200"
earlycon = "pl011,0x9000000"
boot = "u-boot"
[image]
target = "zImage"
uimage = true
load_address = "0x42000000"
[serial]
port = "{console_url}"
baud = 115200
[power]
on = {json.dumps([power, "on", str(state), *qemu])}
off = {json.dumps([power, "off", str(state)])}
[tftp]
dir = "{tftp}"
serverip = "10.0.2.2"
{nfs}
[uboot]
binary = "(in the board's flash)"
kernel_addr = "0x42000000"
initrd_addr = "0x44000000"
[[kernels]]
id = "6.12"
source = {{ debian = "linux-source-6.12", suite = "bookworm-backports" }}
defconfig = "tinyconfig"
fragments = ["fragments/bringup-base.config", "fragments/arm-virt.config"]
""")
    try:
        p = bringup(
            arm_built,
            "boot-timing",
            "--board",
            str(board),
            "--runs",
            "1",
            "--root",
            "ramdisk" if root == "ramdisk" else "nfs",
            timeout=300,
        )
    finally:
        if own_server:
            own_server.stop()
        if bridge:
            bridge.close()
        line.close()
    assert p.returncode == 0, p.stderr[-3000:]
    run = sorted((logs / "bench-arm" / "6.12" / "boot").glob("*-r01"))[-1]
    rec = json.loads((run / "boot.json").read_text())
    assert rec["status"] == "ok" and rec["t0"] == "power-on"
    assert rec["console"] == console_url
    if bridge:
        # the client really spoke RFC 2217: it set the line parameters through the server
        assert (115200, 8, "N", 1) in bridge.negotiated
    # the console listened before the power came on: U-Boot's banner, printed at once, was heard
    assert rec["milestones"]["bootloader"]["text"].startswith("U-Boot 20")
    assert rec["milestones"]["kernel_load"]["text"].endswith("tftpboot 0x42000000 bringup/bench-arm/6.12/uImage")
    assert "login" in rec["milestones"]
    assert (tftp / "bringup" / "bench-arm" / "6.12" / "uInitrd").exists() == (root == "ramdisk")
    if root != "ramdisk":
        assert "nfs4 filesystem" in rec["milestones"]["nfs_root"]["text"]
        export = run / "nfsroot" if root == "nfs" else tmp_path / "srv" / "bringup" / "bench-arm" / "6.12" / run.name
        assert rec["nfs"]["export"] == str(export)
        assert (export / "bringup-booted").read_text().strip() == rec["kernelrelease"]
    if root == "nfs-external":
        assert f"nfsroot=10.0.2.2:/bringup/bringup/bench-arm/6.12/{run.name}," in rec["cmdline"]
    # power off ran: no QEMU is left playing the board
    time.sleep(0.5)
    left = subprocess.run(["pgrep", "-f", f"tcp:127.0.0.1:{port},"], capture_output=True, text=True)
    assert left.stdout.strip() == "", "QEMU still running after power off"
