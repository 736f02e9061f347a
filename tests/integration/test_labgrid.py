"""Integration: a board in a labgrid lab.  A real labgrid-coordinator and
labgrid-exporter run on 127.0.0.1 (lab.py); the exporter publishes a QEMU
board's serial line (NetworkSerialPort, raw TCP), its power switch
(NetworkPowerPort 'simplerest', an HTTP shim that starts and stops QEMU) and
its TFTP directory (TFTPProvider).  bringup acquires the place, boots the
kernel it built through real U-Boot and TFTP, and releases the place."""

import getpass
import json
import shutil
import subprocess
import sys
import time
from datetime import datetime

import pytest

from .conftest import ARM_KERNELS, bringup
from .lab import LGBIN, Lab

pytestmark = pytest.mark.integration

KERNEL = "6.12"


@pytest.fixture
def lab(tmp_path):
    if not (LGBIN / "labgrid-client").exists():
        pytest.fail("no .venv-labgrid: run `make deps` (it installs labgrid for these tests)")
    lab = Lab(tmp_path / "lab")
    yield lab
    lab.close()


def board_file(tmp_path, name, place, coordinator, acquire_timeout=60, watch_interval=5, kernels=(KERNEL,)):
    f = tmp_path / f"{name}.toml"
    sources = {"5.10": ("linux-source-5.10", "bullseye"), "6.12": ("linux-source-6.12", "bookworm-backports")}
    kernel_tables = "".join(
        f"""[[kernels]]
id = "{k}"
source = {{ debian = "{sources[k][0]}", suite = "{sources[k][1]}" }}
defconfig = "tinyconfig"
fragments = ["fragments/bringup-base.config", "fragments/arm-virt.config"]
"""
        for k in kernels
    )
    f.write_text(f"""
name = "{name}"
description = "QEMU + U-Boot on a labgrid place"
arch = "arm"
memory_mb = 512
console = "ttyAMA0,115200"
earlycon = "pl011,0x9000000"
boot = "u-boot"
[image]
target = "zImage"
uimage = true
load_address = "0x42000000"
[labgrid]
place = "{place}"
coordinator = "{coordinator}"
acquire_timeout = {acquire_timeout}
watch_interval = {watch_interval}
[tftp]
serverip = "10.0.2.2"
[uboot]
binary = "(in the board's flash)"
kernel_addr = "0x42000000"
initrd_addr = "0x44000000"
{kernel_tables}""")
    return f


def with_builds(arm_built, name, kernels=(KERNEL,)):
    """The board's kernels are qemu-arm's: reuse their build records and images."""
    logs = arm_built["logs"]
    if (logs / name).exists():
        shutil.rmtree(logs / name)
    for k in kernels:
        shutil.copytree(
            logs / "qemu-arm" / k,
            logs / name / k,
            ignore=shutil.ignore_patterns("boot", "footprint-runs"),
        )
    return logs / name


@pytest.mark.parametrize("console", ["raw", "rfc2217"])
def test_boot_timing_on_a_labgrid_place_through_uboot(arm_built, lab, tmp_path, console):
    """console: the place's NetworkSerialPort as raw TCP (ser2net's raw mode), or
    RFC 2217 (ser2net's telnet mode; the quick footprint runs on the raw one only)."""
    b = lab.add_board("board1", rfc2217=console == "rfc2217")
    lab.export()
    lab.add_place("lab-arm-1", "board1")
    board = board_file(tmp_path, "lab-arm", "lab-arm-1", lab.address)
    logs = with_builds(arm_built, "lab-arm")
    p = bringup(arm_built, "boot-timing", "--board", str(board), "--runs", "1", timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    run = sorted((logs / KERNEL / "boot").glob("*-r01"))[-1]
    rec = json.loads((run / "boot.json").read_text())
    assert rec["status"] == "ok" and rec["t0"] == "power-on"
    assert rec["console"] == b["url"]  # the place's NetworkSerialPort
    assert rec["console"].startswith("rfc2217://" if console == "rfc2217" else "socket://")
    lg = rec["labgrid"]
    assert lg["place"] == "lab-arm-1" and lg["exporter"] == "lab-exp" and lg["coordinator"] == lab.address
    assert lg["acquired_by"].endswith("/" + getpass.getuser())
    assert sorted(r["cls"] for r in lg["resources"]) == ["NetworkPowerPort", "NetworkSerialPort", "RemoteTFTPProvider"]
    assert lg["tftp"].startswith("RemoteTFTPProvider lab-exp/board1/RemoteTFTPProvider/")
    # the console listened before the place's power came on: the U-Boot banner was heard
    assert rec["milestones"]["bootloader"]["text"].startswith("U-Boot 20")
    # the kernel came from the place's TFTP provider ...
    assert rec["milestones"]["kernel_load"]["text"].endswith(f"tftpboot 0x42000000 bringup/lab-arm/{KERNEL}/uImage")
    assert (b["tftp"] / "bringup" / "lab-arm" / KERNEL / "uImage").exists()
    # ... and it is the kernel built: its banner is the build's
    assert rec["booted_kernel"].startswith(rec["kernelrelease"] + " (bringup@bringup) (")
    assert "login" in rec["milestones"]
    # power went on then off through labgrid's power driver; the place is free again
    assert lab.shim.log == [(0, 0), (0, 1), (0, 0)]  # off before the boot, on, off after it
    assert lab.acquired_by("lab-arm-1") is None
    time.sleep(0.3)
    assert not lab.shim.is_on(0), "QEMU still running after power off"

    if console == "rfc2217":
        assert (115200, 8, "N", 1) in lab.bridges[0].negotiated  # it spoke RFC 2217 to the server
        return
    # a quick footprint on the same place: a real board's measurement boots the
    # kernel we built through U-Boot too (never 'direct', which would boot the flash)
    p = bringup(
        arm_built, "footprint-report", "--board", str(board), "--lmbench", "none", "--lmbench-runs", "1", timeout=900
    )
    assert p.returncode == 0, p.stderr[-3000:]
    footprint_record = json.loads((logs / KERNEL / "footprint.json").read_text())
    assert footprint_record["malloc_kb"] > 0 and footprint_record["kernelrelease"] == rec["kernelrelease"]
    frec = json.loads((logs / KERNEL / footprint_record["run"] / "boot.json").read_text())
    assert frec["status"] == "ok" and frec["path"] == "u-boot" and frec["labgrid"]["place"] == "lab-arm-1"
    assert frec["booted_kernel"] == rec["booted_kernel"]
    assert lab.acquired_by("lab-arm-1") is None


def test_a_place_held_by_someone_else_is_waited_for_then_given_up(arm_built, lab, tmp_path):
    lab.add_board("board1")
    lab.export()
    lab.add_place("lab-arm-1", "board1")
    lab.client("-p", "lab-arm-1", "acquire", user="colleague")
    board = board_file(tmp_path, "lab-arm", "lab-arm-1", lab.address, acquire_timeout=4)
    with_builds(arm_built, "lab-arm")
    t = time.monotonic()
    p = bringup(arm_built, "boot-timing", "--board", str(board), "--runs", "1", timeout=300)
    waited = time.monotonic() - t
    assert p.returncode != 0
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("bringup: error: labgrid place lab-arm-1: acquired by ")
    assert "/colleague; gave up after " in last and "(labgrid.acquire_timeout = 4)" in last
    assert "is acquired by" in p.stderr and "waiting" in p.stderr  # it said it waits
    assert waited >= 4
    assert "Traceback" not in p.stderr
    assert lab.acquired_by("lab-arm-1").endswith("/colleague")  # not taken from them
    assert lab.shim.log == []  # nobody switched the colleague's board


def test_lab_errors_are_one_line_before_any_boot(arm_built, lab, tmp_path):
    lab.add_board("board1")
    lab.export()
    with_builds(arm_built, "lab-arm")
    # a place the coordinator does not know
    p = bringup(arm_built, "boot-timing", "--board", str(board_file(tmp_path, "lab-arm", "nope", lab.address)))
    assert p.returncode != 0
    assert p.stderr.strip().splitlines()[-1] == (
        f"bringup: error: labgrid place 'nope' unknown to labgrid coordinator {lab.address} (labgrid-client places)"
    )
    # a coordinator nobody runs
    dead = "127.0.0.1:9"
    p = bringup(arm_built, "boot-timing", "--board", str(board_file(tmp_path, "lab-arm", "x", dead)))
    assert p.stderr.strip().splitlines()[-1] == (
        f"bringup: error: labgrid coordinator {dead} unreachable "
        "(labgrid.coordinator in lab-arm.toml, or LG_COORDINATOR)"
    )
    # a place whose match has no resource (an exporter that is not running)
    lab.client("-p", "ghost", "create")
    lab.client("-p", "ghost", "add-match", "gone-exp/board9/*")
    p = bringup(arm_built, "boot-timing", "--board", str(board_file(tmp_path, "lab-arm", "ghost", lab.address)))
    assert p.stderr.strip().splitlines()[-1] == (
        "bringup: error: labgrid place ghost: match gone-exp/board9/* has no matching remote resource "
        "(its exporter is not running, or does not export that resource)"
    )
    assert lab.shim.log == []


def test_exporter_gone_mid_run_fails_the_run_and_releases_the_place(arm_built, lab, tmp_path):
    lab.add_board("board1")
    lab.export()
    lab.add_place("lab-arm-1", "board1")
    board = board_file(tmp_path, "lab-arm", "lab-arm-1", lab.address, watch_interval=0.5)
    logs = with_builds(arm_built, "lab-arm")
    proc = subprocess.Popen(
        [sys.executable, "-m", "bringup", "boot-timing", "--board", str(board), "--runs", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=arm_built["env"],
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not lab.shim.is_on(0):
            time.sleep(0.1)
        assert lab.shim.is_on(0), "the board was never switched on"
        lab.kill_exporter()
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0
    run = sorted((logs / KERNEL / "boot").glob("*-r01"))[-1]
    rec = json.loads((run / "boot.json").read_text())
    assert rec["status"] == "fail"
    assert rec["error"].startswith("labgrid exporter lab-exp gone: place lab-arm-1 lost lab-exp/board1/"), rec["error"]
    assert lab.acquired_by("lab-arm-1") is None  # released all the same


def test_two_places_share_one_study_in_parallel(arm_built, lab, tmp_path):
    """PLACES=a,b (--places): two exported QEMU boards run the rounds of one boot-timing
    study at the same time, each place whole rounds (both kernels, interleaved), each
    place held for the whole run; the runs say their place, and the report tests place
    as a factor in its own "Places" rows."""
    boards = [lab.add_board("board1"), lab.add_board("board2")]
    lab.export()
    lab.add_place("lab-arm-1", "board1")
    lab.add_place("lab-arm-2", "board2")
    board = board_file(tmp_path, "lab-arms", "lab-arm-1", lab.address, kernels=ARM_KERNELS)
    logs = with_builds(arm_built, "lab-arms", ARM_KERNELS)
    t = time.monotonic()
    p = bringup(
        arm_built, "boot-timing", "--board", str(board), "--runs", "4", "--places", "lab-arm-1,lab-arm-2", timeout=1200
    )
    wall = time.monotonic() - t
    assert p.returncode == 0, p.stderr[-3000:]
    print(f"2 places, 4 rounds x 2 kernels: {wall:.1f} s")
    s = json.loads((logs / "boot-timing.json").read_text())
    assert s["schema"] == "bringup.boot-timing/8"
    assert s["places"] == ["lab-arm-1", "lab-arm-2"]
    assert len(s["order"]) == len(s["round_places"]) == 4
    assert set(s["round_places"]) == {"lab-arm-1", "lab-arm-2"}  # each place was used
    for kernels_of_round in s["order"]:  # every round boots both kernels: the comparison stays interleaved
        assert sorted(kernels_of_round) == ARM_KERNELS
    assert any(o[0] == ARM_KERNELS[0] for o in s["order"]) and any(o[0] == ARM_KERNELS[1] for o in s["order"])
    spans: dict[str, list] = {"lab-arm-1": [], "lab-arm-2": []}
    for k in ARM_KERNELS:
        kt = s["kernels"][k]
        assert kt["ok"] == 4 and kt["failed"] == 0
        login = kt["milestones"]["login"]
        assert login["rounds"] == [1, 2, 3, 4]
        assert login["places"] == s["round_places"]  # each value says where it ran
        for run_id in kt["run_ids"]:
            rec = json.loads((logs / k / "boot" / run_id / "boot.json").read_text())
            place = s["round_places"][rec["round"] - 1]
            assert rec["status"] == "ok" and rec["labgrid"]["place"] == place  # the run record agrees
            i = int(place[-1]) - 1
            assert rec["console"] == boards[i]["url"]  # and it used that place's console
            assert rec["milestones"]["kernel_load"]["text"].endswith(f"bringup/lab-arms/{place}/{k}/uImage")
            spans[place].append((datetime.fromisoformat(rec["started"]), datetime.fromisoformat(rec["finished"])))
    # the two places booted at the same time
    assert any(a0 < b1 and b0 < a1 for a0, a1 in spans["lab-arm-1"] for b0, b1 in spans["lab-arm-2"])
    # each place: off once when taken, then on/off per boot; both released
    for i, place in enumerate(["lab-arm-1", "lab-arm-2"]):
        mine = [v for o, v in lab.shim.log if o == i]
        boots = 2 * s["round_places"].count(place)
        assert mine == [0] + [1, 0] * boots
        assert lab.acquired_by(place) is None
    # the report: place as a factor, in its own rows
    p = bringup(arm_built, "report", "--board", str(board), timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    md = (logs / "report" / "report.md").read_text()
    assert "### Places" in md
    section = md.split("### Places", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| 5.10 |") or line.startswith("| 6.12 |")]
    # 2 kernels x 3 headline milestones (freeing init, the userspace marker, login), lab-arm-2 against lab-arm-1
    assert len(rows) == 6
    assert all("| lab-arm-2 |" in r and "| lab-arm-1 |" in r for r in rows)
    html = (logs / "report" / "index.html").read_text()
    assert 'id="places"' in html
