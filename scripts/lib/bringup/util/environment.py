"""The machine a measurement runs on, captured when it runs: the host (system,
release, architecture), its CPU model and count, the QEMU that boots the
kernels, Python, and bringup's own git commit.  The measurement steps store it
in their records (records.Environment, docs/records.md) so that the report says
where the numbers were measured, not where the report was rendered.

Captured once per process and QEMU binary: every record of one measurement
carries the same environment."""

from __future__ import annotations

import functools
import os
import platform
import shutil
import subprocess
from pathlib import Path
from typing import Any, Protocol

from bringup.util import paths

UNKNOWN = "unknown"


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The CPU's model name as /proc/cpuinfo says it; "unknown" where it does not."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return UNKNOWN
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "cpu model", "Processor") and value.strip():
            return value.strip()
    return UNKNOWN


def first_line(argv: list[str]) -> str:
    """The first line a program prints for argv (its --version); "not installed" or "unknown"."""
    if not shutil.which(argv[0]):
        return "not installed"
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return UNKNOWN
    return out.splitlines()[0].strip() if out.strip() else UNKNOWN


def bringup_commit(root: Path = paths.ROOT) -> str:
    """bringup's git commit (short), marked when the tree has uncommitted changes."""
    if not shutil.which("git"):
        return UNKNOWN
    p = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    if p.returncode != 0:
        return UNKNOWN
    dirty = subprocess.run(["git", "-C", str(root), "diff", "--quiet", "HEAD"], capture_output=True).returncode
    return p.stdout.strip() + (" (with uncommitted changes)" if dirty else "")


@functools.cache
def capture(qemu_binary: str | None) -> dict[str, Any]:
    """This machine now, as a record stores it (records.Environment's fields).
    qemu_binary: the board's QEMU, None for a board that is not booted in QEMU."""
    return {
        "host": f"{platform.system()} {platform.release()} {platform.machine()}",
        "cpu": cpu_model(),
        "cpus": os.cpu_count() or 1,
        "qemu": first_line([qemu_binary, "--version"]) if qemu_binary else None,
        "python": platform.python_version(),
        "bringup": bringup_commit(),
    }


class _Target(Protocol):
    def emulator(self) -> str | None: ...


class _Board(Protocol):
    @property
    def target(self) -> _Target: ...


def of_board(board: _Board) -> dict[str, Any]:
    """capture() for a board: the version of the program that emulates it (its target
    table's emulator(), QEMU's binary), None for hardware."""
    return capture(board.target.emulator())
