"""A board on the bench as a kind of target (model/targetkind.py): the board file's
[serial] table (SerialSpec), and the board as a Target: its console on a pyserial URL
(/dev/ttyUSB0, socket:// from ser2net, rfc2217://), power from the board
file's commands or the operator, boot files in the host's TFTP directory.

The console of such a board exists whether the board is on or not, so the
session opens it before power_on(): the bootloader banner and the autoboot
prompt come within milliseconds of power-on and would be lost otherwise.
t0 is the moment the power command returns (or the operator's Enter).
"""

from __future__ import annotations

import re
import select
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, field_validator

from bringup.boot.target import BootSpec, Staging, Target
from bringup.errors import BootFailed, BringupError
from bringup.model.base import DataError
from bringup.model.board import Board
from bringup.model.specs import PowerSpec
from bringup.model.targetkind import TargetSpec, register
from bringup.targets import bench
from bringup.util import paths


class SerialTarget(bench.BenchBoard):
    """A real board: console on a pyserial URL, power from board commands or the operator."""

    def __init__(self, board: Board, operator_timeout: float = 120.0, say=print, off_settle: float = 1.0):
        spec = SerialSpec.of(board)
        self.board = board
        self.console_url = spec.port
        self.baud = spec.baud
        self.t0: float | None = None
        self.power = board.power or PowerSpec()
        self.operator_timeout = operator_timeout
        self.off_settle = off_settle
        self.say = say

    # -- where things are ---------------------------------------------------
    def staging(self, kernel_id: str) -> Staging:
        if self.board.tftp is None:
            raise BringupError(
                f"board {self.board.name}: booting a real board through U-Boot needs a [tftp] "
                f"table (the host's TFTP directory)"
            )
        # the bench's TFTP server serves it
        return bench.tftp_staging(self.board.tftp.dir, bench.prefix(self.board, kernel_id))

    # -- power ----------------------------------------------------------------
    def _run(self, which: str) -> bool:
        argv: list[str] = {"on": self.power.on, "off": self.power.off, "reset": self.power.reset}[which]
        if not argv:
            return False
        p = subprocess.run(argv, capture_output=True, text=True)
        if p.returncode != 0:
            raise BringupError(
                f"board {self.board.name}: power.{which} command {shlex.join(argv)} failed "
                f"(exit {p.returncode}): {(p.stderr or p.stdout).strip()[:200]}"
            )
        return True

    def prepare(self, boot: BootSpec) -> None:
        """Switch the board off (when it can be), so that the boot starts from power-on."""
        self.t0 = None
        if self._run("off"):
            time.sleep(self.off_settle)

    def power_on(self) -> None:
        if self._run("on") or self._run("reset"):
            self.t0 = time.monotonic()
            return
        # nobody to switch it on but the operator; t0 is when they confirm
        self.say(f"Power on board {self.board.name} now, then press Enter ({self.operator_timeout:.0f}s)...")
        r, _, _ = select.select([sys.stdin], [], [], self.operator_timeout) if sys.stdin.isatty() else ([], [], [])
        if not r:
            raise BootFailed(
                f"board {self.board.name}: nobody powered the board on "
                f"(no power.on command in the board file and no operator)"
            )
        sys.stdin.readline()
        self.t0 = time.monotonic()

    def power_off(self) -> None:
        try:
            self._run("off")
        except BringupError as e:
            self.say(f"warning: {e}")

    def alive(self) -> str | None:
        return None  # a closed console says when the line is gone

    def describe(self) -> dict[str, Any]:
        return {"t0": "power-on", "console": self.console_url, "qemu_argv": None}

    def __enter__(self) -> SerialTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.power_off()


@register
class SerialSpec(TargetSpec):
    # [serial]: a board on the bench, its console on a pyserial URL.

    table = "serial"
    table_doc = "the console of a real board"
    rank = 20

    port: Annotated[
        str,
        Field(
            pattern=r"^(/dev/\S+|(socket|rfc2217)://\S+:\d+)$",
            max_length=4096,
            description="/dev/ttyUSB0, socket://host:port or rfc2217://host:port",
        ),
    ]
    baud: Annotated[int, Field(ge=50, le=4_000_000, description="for local serial devices")] = 115200

    @field_validator("port")
    @classmethod
    def _host_and_port(cls, v: str) -> str:
        if v.startswith("/dev/"):
            if ".." in v.split("/"):
                raise ValueError("a device path with '..' leaves /dev/")
            return v
        host, _, port = v.partition("://")[2].rpartition(":")
        if not (
            re.fullmatch(
                r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*",
                host,
            )
            or re.fullmatch(r"\[[0-9A-Fa-f:.]+\]", host)
        ):
            raise ValueError(f"host {host!r}: not a host name or address (socket://host:port)")
        if not (len(port) <= 5 and 1 <= int(port) <= 65535):
            raise ValueError(f"port {port}: a TCP port is 1 to 65535")
        return v

    def check_boot_path(self, board: Board, path: str) -> None:
        if path == "u-boot" and board.tftp is not None:
            tftp = paths.expand_user(board.tftp.dir, "tftp.dir")
            if not tftp.is_dir():  # the images would go where the TFTP server does not serve them
                raise DataError(
                    f"{paths.rel(board.file)}: field 'tftp.dir': {board.tftp.dir!r}: no such directory "
                    "(the TFTP server's root, e.g. /srv/tftp of tftpd-hpa)"
                )

    def target(self, board: Board, run_dir: Path, *, say: Any, disk: Path | None) -> SerialTarget:
        return SerialTarget(board, say=say)


def _implements_target(t: SerialTarget) -> Target:  # mypy checks that SerialTarget is a Target
    return t
