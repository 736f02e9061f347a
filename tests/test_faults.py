"""Faults in the middle of writing results: a full disk never replaces a good
record with a worse one, and bringup says so in one line."""

import json
import os
import subprocess
import sys

from conftest import run_cli

WRITE_UNDER_LIMIT = r"""
import json, resource, signal, sys
from bringup import records
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)          # EFBIG instead of a signal, like ENOSPC
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))  # a "disk" that takes 4 KiB per file
records.write_json(sys.argv[1], {"schema": "bringup.build/1", "blob": "x" * 100000})
"""


def test_a_record_write_on_a_full_disk_keeps_the_old_record(tmp_path):
    rec = tmp_path / "build.json"
    rec.write_text(json.dumps({"schema": "bringup.build/1", "good": True}) + "\n")
    before = rec.read_bytes()
    p = subprocess.run([sys.executable, "-c", WRITE_UNDER_LIMIT, str(rec)], capture_output=True, text=True)
    assert p.returncode != 0 and "File too large" in p.stderr
    assert rec.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["build.json"], "no temporary file may be left"


def test_an_unexpected_os_error_is_one_line(tmp_path):
    """A file bringup cannot write (here: a board listing into a read-only place is
    simulated by a logs directory that is a file) ends in one line naming it."""
    logs = tmp_path / "logs"
    logs.write_text("not a directory")
    p = run_cli("report", "--board", "qemu-arm", env_extra={"BRINGUP_LOGS": str(logs)})
    assert p.returncode in (1, 2), p.stderr
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr and p.stderr.startswith("bringup: error: ")


def test_a_killed_qemu_is_not_blamed_on_its_start_up_notice(tmp_path):
    """QEMU's last stderr line is often its start-up notice (it listens for the console):
    the cause of its end is the signal, said without that line."""
    from types import SimpleNamespace

    from bringup.model.board import load_board
    from bringup.targets.qemu import LISTENING, QemuTarget

    t = QemuTarget(load_board("qemu-arm"), tmp_path)
    t.stderr_path.write_text(
        f"qemu-system-arm: -chardev socket,id=c0,host=127.0.0.1,port=5555,server=on: info: {LISTENING} "
        "disconnected:tcp:127.0.0.1:5555,server=on\n"
    )
    t.proc = SimpleNamespace(poll=lambda: -9)
    assert t.alive() == "QEMU exited (killed by signal 9)"
    with open(t.stderr_path, "a") as f:
        f.write("qemu-system-arm: terminating on signal 15 from pid 42\n")
    t.proc = SimpleNamespace(poll=lambda: 0)
    assert t.alive() == "QEMU exited (exit code 0): qemu-system-arm: terminating on signal 15 from pid 42"


def test_the_tftp_copies_go_when_qemu_is_powered_off(tmp_path):
    from bringup.model.board import load_board
    from bringup.targets.qemu import QemuTarget

    t = QemuTarget(load_board("qemu-arm"), tmp_path)
    st = t.staging("5.10").dir
    st.mkdir()
    (st / "uImage").write_bytes(b"x" * 1000)
    t.power_off()
    assert not st.exists() and tmp_path.exists()


def test_a_full_disk_without_a_file_name_in_the_error_still_names_the_file(tmp_path):
    """Path.write_text() and f.write() raise ENOSPC/EFBIG without a file name: the line
    names the file from where the write was."""
    code = r"""
import resource, signal, sys
from pathlib import Path
import dataclasses
from bringup import cli
from bringup.cli import commands
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
def boom(a):
    Path(sys.argv[1]).write_text("x" * 100000)
    return 0
commands.COMMANDS["boards"] = dataclasses.replace(commands.COMMANDS["boards"], run=boom)
sys.exit(cli.main(["boards"]))
"""
    target = tmp_path / "big.txt"
    p = subprocess.run([sys.executable, "-c", code, str(target)], capture_output=True, text=True)
    assert p.returncode == 1
    assert p.stderr == f"bringup: error: {target}: File too large\n"
