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
