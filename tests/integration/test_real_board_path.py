"""Integration: the real-board path without hardware.  Real QEMU and real
U-Boot play a board on the bench: the console is a socket:// URL, the board
file's power commands start and stop QEMU, and the kernel and ramdisk go
through a host TFTP directory, as with tftpd-hpa.  bringup's serial-board
target runs unchanged."""

import json
import shutil
import subprocess
import time

import pytest

from bringup.targets import free_port

from .conftest import ROOT, bringup

pytestmark = pytest.mark.integration


def test_qemu_as_a_real_board_through_uboot(arm_built, tmp_path):
    logs = arm_built["logs"]
    # the board's kernels are qemu-arm's: reuse its build records and images
    shutil.copytree(logs / "qemu-arm" / "6.12", logs / "bench-arm" / "6.12",
                    ignore=shutil.ignore_patterns("boot", "footprint-runs"))
    port = free_port()
    state, tftp = tmp_path / "state", tmp_path / "tftproot"
    state.mkdir()
    tftp.mkdir()
    power = str(ROOT / "tests" / "integration" / "qemu-power")
    qemu = ["qemu-system-arm", "-M", "virt", "-cpu", "cortex-a15", "-m", "512", "-display", "none",
            "-monitor", "none", "-nodefaults", "-serial", f"tcp:127.0.0.1:{port},server=on,wait=on,nodelay=on",
            "-netdev", f"user,id=n0,ipv6=off,tftp={tftp}", "-device", "virtio-net-device,netdev=n0",
            "-bios", "/usr/lib/u-boot/qemu_arm/u-boot.bin"]
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
port = "socket://127.0.0.1:{port}"
[power]
on = {json.dumps([power, "on", str(state), *qemu])}
off = {json.dumps([power, "off", str(state)])}
[tftp]
dir = "{tftp}"
serverip = "10.0.2.2"
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
    p = bringup(arm_built, "boot-timing", "--board", str(board), "--runs", "1", timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    run = sorted((logs / "bench-arm" / "6.12" / "boot").glob("*-u-boot-r01"))[-1]
    rec = json.loads((run / "boot.json").read_text())
    assert rec["status"] == "ok" and rec["t0"] == "power-on"
    assert rec["console"] == f"socket://127.0.0.1:{port}"
    assert rec["milestones"]["kernel_load"]["text"].endswith("tftpboot 0x42000000 bringup/bench-arm/6.12/uImage")
    assert "login" in rec["milestones"]
    assert (tftp / "bringup" / "bench-arm" / "6.12" / "uInitrd").exists()
    # power off ran: no QEMU is left playing the board
    time.sleep(0.5)
    left = subprocess.run(["pgrep", "-f", f"tcp:127.0.0.1:{port},"], capture_output=True, text=True)
    assert left.stdout.strip() == "", "QEMU still running after power off"
