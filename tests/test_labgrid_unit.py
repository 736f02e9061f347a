"""labgrid places without a lab: reading `labgrid-client show`, the [labgrid]
table of a board file, the shipped example board, and the target's answers
to the errors labgrid-client prints (the real lab runs in
tests/integration/test_labgrid.py)."""

import os
import stat
from pathlib import Path

import pytest

from bringup import targets
from bringup.errors import BringupError
from bringup.model.base import DataError
from bringup.model.board import load_board
from bringup.model.bootpath import check_boot_path, measure_path
from bringup.parse import labgrid as lgparse
from bringup.targets.labgrid import LabgridSpec, LabgridTarget
from conftest import run_cli

# `labgrid-client -p lab-arm-1 show` of labgrid 26.0.1, acquired (copied from a terminal)
SHOW = """Place 'lab-arm-1':
  matches:
    lab-exp/board1/*
  acquired: vm/root
  acquired resources:
    lab-exp/board1/NetworkPowerPort/NetworkPowerPort
    lab-exp/board1/NetworkSerialPort/NetworkSerialPort
  created: 2026-11-23 18:06:08.572021
  changed: 2026-11-23 18:06:10.798392
Acquired resource 'NetworkPowerPort' (lab-exp/board1/NetworkPowerPort/NetworkPowerPort):
  {'acquired': 'lab-arm-1',
   'avail': True,
   'cls': 'NetworkPowerPort',
   'params': {'extra': {'proxy': 'localhost', 'proxy_required': False},
              'host': 'http://127.0.0.1:45002/power/{index}/{value}',
              'index': 0,
              'model': 'simplerest'}}
Acquired resource 'NetworkSerialPort' (lab-exp/board1/NetworkSerialPort/NetworkSerialPort):
  {'acquired': 'lab-arm-1',
   'avail': True,
   'cls': 'NetworkSerialPort',
   'params': {'extra': {'proxy': 'localhost', 'proxy_required': False},
              'host': '127.0.0.1',
              'port': 45001,
              'protocol': 'raw'}}
"""


def test_show_output_is_read_into_place_and_resources():
    p = lgparse.place_show(SHOW)
    assert p.name == "lab-arm-1" and p.acquired == "vm/root"
    assert p.matches == ["lab-exp/board1/*"]
    assert [r.cls for r in p.resources] == ["NetworkPowerPort", "NetworkSerialPort"]
    serial = p.of_class("NetworkSerialPort")[0]
    assert serial.params == {"host": "127.0.0.1", "port": 45001, "protocol": "raw"}
    assert serial.exporter == "lab-exp" and serial.acquired == "lab-arm-1" and serial.avail


def test_a_free_place_lists_matching_resources():
    text = SHOW.replace("  acquired: vm/root", "  acquired: None").replace("Acquired resource", "Matching resource")
    p = lgparse.place_show(text)
    assert p.acquired is None and len(p.resources) == 2


def test_output_that_is_not_a_place_is_refused():
    with pytest.raises(ValueError, match="Place"):
        lgparse.place_show("usage: labgrid-client ...")
    broken = SHOW.replace("'avail': True,", "'avail': True,,")
    with pytest.raises(ValueError, match="unreadable"):
        lgparse.place_show(broken)


def test_client_errors_are_taken_from_its_output():
    out = (
        "ERROR root: coordinator is unavailable: failed to connect\n"
        "Server error: Error: Could not connect to coordinator\n"
    )
    assert lgparse.client_error(out) == "Could not connect to coordinator"
    assert lgparse.client_error("labgrid-client: Error: place pattern x matches nothing\n") == (
        "place pattern x matches nothing"
    )


def test_example_board_loads_and_is_a_labgrid_board():
    b = load_board("labgrid-example")
    assert isinstance(b.target, LabgridSpec)
    assert b.target.place and b.boot == "u-boot"
    assert measure_path(b) == "u-boot"  # footprint boots the kernel we built, through U-Boot
    with pytest.raises(DataError, match="boot path 'direct' needs a target that loads the kernel itself"):
        check_boot_path(b, "direct")


def write_board(tmp_path: Path, extra: str, name="lab") -> Path:
    f = tmp_path / f"{name}.toml"
    f.write_text(f"""
name = "{name}"
arch = "arm"
boot = "u-boot"
[image]
target = "zImage"
uimage = true
[uboot]
binary = "-"
kernel_addr = "0x42000000"
initrd_addr = "0x44000000"
{extra}
[[kernels]]
id = "k"
source = {{ debian = "linux-source-6.12", suite = "bookworm-backports" }}
defconfig = "tinyconfig"
""")
    return f


@pytest.mark.parametrize(
    "extra, message",
    [
        ('[labgrid]\nplace = "a b"', "labgrid.place"),
        ('[labgrid]\nplace = "p"\ncoordinator = "http://x"', "labgrid.coordinator"),
        ('[labgrid]\nplace = "p"\n[serial]\nport = "/dev/ttyUSB0"', "drop [qemu] and [serial]"),
        ('[serial]\nport = "/dev/ttyUSB0"\n[tftp]\nserverip = "10.0.0.1"', "tftp.dir"),
    ],
)
def test_bad_labgrid_tables_are_one_line_naming_the_field(tmp_path, extra, message):
    with pytest.raises(DataError, match="lab.toml") as e:
        load_board(str(write_board(tmp_path, extra)))
    assert message in str(e.value) and "\n" not in str(e.value)


def fake_client(tmp_path: Path, script: str) -> str:
    """A stand-in labgrid-client that prints what labgrid's prints."""
    f = tmp_path / "labgrid-client"
    f.write_text("#!/bin/sh\n" + script)
    f.chmod(f.stat().st_mode | stat.S_IEXEC)
    return str(f)


def lab_board(tmp_path, script, extra=""):
    client = fake_client(tmp_path, script)
    return load_board(
        str(
            write_board(
                tmp_path,
                f'[labgrid]\nplace = "p1"\ncoordinator = "127.0.0.1:1"\nclient = "{client}"\n'
                f"acquire_timeout = 1.5\n{extra}",
            )
        )
    )


def test_for_board_gives_a_labgrid_target(tmp_path):
    b = lab_board(tmp_path, "exit 0")
    assert isinstance(targets.for_board(b, tmp_path), LabgridTarget)


def test_no_coordinator_anywhere_is_one_line(tmp_path, monkeypatch):
    monkeypatch.delenv("LG_COORDINATOR", raising=False)
    b = load_board(str(write_board(tmp_path, '[labgrid]\nplace = "p1"')))
    with pytest.raises(BringupError, match="no labgrid coordinator: set labgrid.coordinator in lab.toml"):
        LabgridTarget(b)
    monkeypatch.setenv("LG_COORDINATOR", "10.1.2.3:20408")
    assert LabgridTarget(b).coordinator == "10.1.2.3:20408"


def test_busy_place_is_waited_for_then_given_up(tmp_path):
    said = []
    b = lab_board(
        tmp_path,
        'echo "labgrid-client: Error: Place p1 is already acquired by lab/alice. To work simultaneously, ..."\n'
        "exit 1\n",
    )
    t = LabgridTarget(b, say=said.append, poll=0.2)
    with pytest.raises(BringupError) as e:
        t.__enter__()
    assert str(e.value).startswith("labgrid place p1: acquired by lab/alice; gave up after ")
    assert "(labgrid.acquire_timeout = 1.5)" in str(e.value)
    assert said and "waiting" in said[0]
    assert not t.acquired


def test_release_happens_on_the_way_out_also_after_an_error(tmp_path):
    log = tmp_path / "calls"
    b = lab_board(tmp_path, f'echo "$@" >> {log}\necho "acquired place p1"\nexit 0\n')
    t = LabgridTarget(b)
    with pytest.raises(RuntimeError), t:
        raise RuntimeError("the boot failed")
    calls = log.read_text().splitlines()
    assert calls[0].endswith("-p p1 acquire")
    assert calls[-1].endswith("-p p1 release")
    assert any(c.endswith("power off") for c in calls)


def test_console_and_power_come_from_the_places_resources(tmp_path):
    show = tmp_path / "show.txt"
    show.write_text(SHOW.replace("'protocol': 'raw'", "'protocol': 'rfc2217'"))
    b = lab_board(tmp_path, f'case "$5" in show) cat {show};; esac\nexit 0\n', "watch_interval = 0\n")
    t = LabgridTarget(b)
    with t:
        from bringup.boot.target import BootSpec

        t.prepare(BootSpec(path="u-boot", cmdline="", kernel=tmp_path / "k"))
        assert t.console_url == "rfc2217://127.0.0.1:45001"
        d = t.describe()["labgrid"]
        assert d["exporter"] == "lab-exp" and d["acquired_by"] == "vm/root"
        assert d["power"].startswith("labgrid-client power (NetworkPowerPort")
    # no TFTP provider on the place and no [tftp] dir: nowhere to put files
    with pytest.raises(BringupError, match="no TFTP provider on the place and no \\[tftp\\] dir"):
        t.staging("k")


def test_a_place_without_a_serial_port_is_refused(tmp_path):
    show = tmp_path / "show.txt"
    only_power = SHOW.split("Acquired resource 'NetworkSerialPort'")[0]
    show.write_text(only_power)
    b = lab_board(tmp_path, f'case "$5" in show) cat {show};; esac\nexit 0\n')
    t = LabgridTarget(b)
    with pytest.raises(BringupError, match="no NetworkSerialPort among its resources \\(NetworkPowerPort\\)"), t:
        from bringup.boot.target import BootSpec

        t.prepare(BootSpec(path="u-boot", cmdline="", kernel=tmp_path / "k"))
    assert os.path.exists(show)


@pytest.mark.parametrize("board", ["labgrid-example", "bench"])
@pytest.mark.parametrize("command", [["boot-timing", "--path", "direct"], ["footprint-report"]])
def test_direct_is_refused_for_boards_that_cannot_load_a_kernel(tmp_path, board, command):
    """boot-timing --path direct, and footprint (which boots direct where it can), on a
    real board: one line, before any work (no build record is even looked for)."""
    if board == "bench":  # a bench board without [uboot]: it cannot boot the kernel we built at all
        f = tmp_path / "bench.toml"
        f.write_text(
            'name = "bench"\narch = "arm"\n[image]\ntarget = "zImage"\n[serial]\nport = "/dev/ttyUSB9"\n'
            '[[kernels]]\nid = "k"\nsource = { debian = "linux-source-6.12", suite = "bookworm-backports" }\n'
            'defconfig = "tinyconfig"\n'
        )
        board = str(f)
    p = run_cli(*command, "--board", board, env_extra={"BRINGUP_LOGS": str(tmp_path / "logs")})
    assert p.returncode == 2
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in p.stderr
    if command[0] == "boot-timing":
        assert "boot path 'direct' needs a target that loads the kernel itself ([qemu])" in err[0]
    elif "labgrid" in board:  # footprint takes U-Boot there: past the path check, to the next one
        assert "labgrid-example/5.10: no build record" in err[0]
    else:
        assert err[0].endswith("no [uboot] table, so it cannot boot through U-Boot")
    assert not (tmp_path / "logs").exists() or not any((tmp_path / "logs").rglob("*.json"))


def test_ctrl_c_during_a_boot_still_releases_the_place(tmp_path):
    log = tmp_path / "calls"
    b = lab_board(tmp_path, f'echo "$@" >> {log}\nexit 0\n')
    with pytest.raises(KeyboardInterrupt), LabgridTarget(b):
        raise KeyboardInterrupt
    calls = log.read_text().splitlines()
    assert calls[0].endswith("acquire") and calls[-1].endswith("-p p1 release")
