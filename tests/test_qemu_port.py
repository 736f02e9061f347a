"""QEMU's console port taken before QEMU binds it (another process, or another QEMU of
the same study with local parallel workers): prepare() waits until QEMU says it
listens and, when QEMU says the port is in use, spawns it again on another port.
A fake qemu-system-arm (a shell script) plays QEMU's two answers."""

from __future__ import annotations

import re

import pytest

from bringup.boot.target import BootSpec
from bringup.errors import BootFailed
from bringup.model.board import load_board
from bringup.targets import qemu

SCRIPT = """#!/bin/sh
# the -serial argument names the port; the first `busy` spawns find it in use
port=$(echo "$*" | sed -n 's/.*tcp:127.0.0.1:\\([0-9]*\\),server.*/\\1/p')
echo "$port" >> {calls}
n=$(wc -l < {calls})
if [ "$n" -le {busy} ]; then
  echo "qemu-system-arm: -serial tcp:127.0.0.1:$port,server=on,wait=on: Failed to find an available port: \
Address already in use" >&2
  exit 1
fi
if [ -n "{other}" ]; then echo "qemu-system-arm: {other}" >&2; exit 1; fi
echo "qemu-system-arm: -serial tcp:127.0.0.1:$port,server=on,wait=on: info: QEMU waiting for connection on: \
disconnected:tcp:127.0.0.1:$port,server=on" >&2
exec sleep 30
"""


def fake_qemu(tmp_path, busy: int, other: str = ""):
    calls = tmp_path / "calls"
    script = tmp_path / "qemu-system-arm"
    script.write_text(SCRIPT.format(calls=calls, busy=busy, other=other))
    script.chmod(0o755)
    board = load_board("qemu-arm")
    board.target = qemu.QemuSpec.of(board).model_copy(update={"binary": str(script)})
    return board, calls


def spec(tmp_path):
    return BootSpec(path="direct", cmdline="console=ttyAMA0", kernel=tmp_path / "zImage")


def test_a_taken_port_makes_qemu_start_again_on_another(tmp_path):
    board, calls = fake_qemu(tmp_path, busy=2)
    t = qemu.QemuTarget(board, tmp_path / "run")
    try:
        t.prepare(spec(tmp_path))
        assert t.alive() is None  # the third spawn listens
        ports = calls.read_text().split()
        assert len(ports) == 3
        assert t.console_url == f"socket://127.0.0.1:{ports[-1]}"
        assert re.search(rf"tcp:127.0.0.1:{ports[-1]},", " ".join(t.argv))
        assert "QEMU waiting for connection" in t.stderr_path.read_text()  # the stderr of the spawn kept
    finally:
        t.power_off()
    assert t.alive() is not None


def test_a_port_taken_every_time_fails_the_boot_in_one_line(tmp_path):
    board, calls = fake_qemu(tmp_path, busy=99)
    t = qemu.QemuTarget(board, tmp_path / "run")
    with pytest.raises(BootFailed, match=r"^QEMU exited at start \(code 1\): .*Address already in use$"):
        t.prepare(spec(tmp_path))
    assert len(calls.read_text().split()) == qemu.PORT_TRIES


def test_qemu_failing_for_another_reason_is_not_started_again(tmp_path):
    board, calls = fake_qemu(tmp_path, busy=0, other="-M virt: unsupported machine type")
    t = qemu.QemuTarget(board, tmp_path / "run")
    with pytest.raises(BootFailed, match=r"^QEMU exited at start \(code 1\): qemu-system-arm: -M virt: unsupported"):
        t.prepare(spec(tmp_path))
    assert len(calls.read_text().split()) == 1
