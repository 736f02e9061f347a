"""Targets: what the boot engine powers on and talks to.

Both kinds offer the same small interface (start -> console URL and t0,
alive, stop), so the boot engine does not know which one it drives.

  QemuTarget     spawns QEMU with its serial port on a loopback TCP socket that
                 waits for the client (no early output lost); t0 is the spawn.
  SerialTarget   a real board: power commands from the board file, or the
                 operator; the console is a pyserial URL; t0 is power-on.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from bringup.errors import BootFailed, BringupError
from bringup.model.board import Board, PowerSpec
from bringup.util.net import free_port
from bringup.util.procutil import die_with_parent


class Target:
    t0: float = 0.0
    console_url: str = ""
    baud: int = 115200

    def start(self) -> None: ...
    def alive(self) -> str | None:
        """None while running, else why it is not."""
        return None

    def stop(self) -> None: ...

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def kernel_cmdline(board: Board, kernel_cmdline: str = "", extra: str = "") -> str:
    parts = [f"console={board.console}"]
    if board.earlycon:
        parts.append(f"earlycon={board.earlycon}")
    for s in (board.cmdline, kernel_cmdline, extra):
        if s:
            parts.append(s)
    return " ".join(parts)


def qemu_argv(board: Board, port: int, mode: str, files: dict, cmdline: str, tftp_dir: Path | None = None) -> list[str]:
    """QEMU's argument list for a board.  mode: 'direct' or 'u-boot'."""
    q = board.qemu
    if q is None:
        raise BringupError(f"board {board.name}: no [qemu] table; it is not a QEMU board")
    argv = [q.binary, "-M", q.machine]
    if q.cpu:
        argv += ["-cpu", q.cpu]
    argv += [
        "-m",
        str(board.memory_mb),
        "-smp",
        str(q.smp),
        "-display",
        "none",
        "-monitor",
        "none",
        "-nodefaults",
        "-serial",
        f"tcp:127.0.0.1:{port},server=on,wait=on,nodelay=on",
    ]
    if q.net_device:
        net = "user,id=n0,ipv6=off"
        if tftp_dir is not None:
            net += f",tftp={tftp_dir}"
        argv += ["-netdev", net, "-device", f"{q.net_device},netdev=n0"]
    if mode == "u-boot":
        argv += ["-bios", board.uboot.binary]
    else:
        argv += ["-kernel", str(files["kernel"])]
        if files.get("initrd"):
            argv += ["-initrd", str(files["initrd"])]
        if files.get("dtb"):
            argv += ["-dtb", str(files["dtb"])]
        argv += ["-append", cmdline]
    return argv + list(q.args)


class QemuTarget(Target):
    def __init__(self, board: Board, argv_for_port, run_dir: Path):
        self.board = board
        self.argv_for_port = argv_for_port
        self.run_dir = run_dir
        self.proc: subprocess.Popen | None = None
        self.argv: list[str] = []
        self.stderr_path = run_dir / "qemu.stderr"

    def start(self) -> None:
        port = free_port()
        self.argv = self.argv_for_port(port)
        self.console_url = f"socket://127.0.0.1:{port}"
        self._stderr = open(self.stderr_path, "wb")
        self.t0 = time.monotonic()
        try:
            self.proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=self._stderr,
                stderr=self._stderr,
                start_new_session=True,
                preexec_fn=die_with_parent,
            )
        except FileNotFoundError:
            raise BringupError(
                f"{self.argv[0]} not found: install Debian package {_qemu_package(self.argv[0])} (make deps does)"
            )
        # QEMU holds the guest until the console connects (server=on,wait=on); the
        # console retries until QEMU listens.  No probe connection here: QEMU would take
        # it for the client and start the guest with nobody listening.
        if self.proc.poll() is not None:
            raise BootFailed(f"QEMU exited at start (code {self.proc.returncode}): {self.stderr_tail()}")

    def alive(self) -> str | None:
        if self.proc is None:
            return "QEMU not started"
        code = self.proc.poll()
        if code is None:
            return None
        how = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
        tail = self.stderr_tail()
        return f"QEMU exited ({how})" + (f": {tail}" if tail else "")

    def stderr_tail(self) -> str:
        try:
            lines = [x for x in self.stderr_path.read_text(errors="replace").splitlines() if x.strip()]
            return lines[-1].strip() if lines else ""
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=3)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait()
        if getattr(self, "_stderr", None):
            self._stderr.close()


class SerialTarget(Target):
    """A real board: console on a pyserial URL, power from board commands or the operator."""

    def __init__(self, board: Board, operator_timeout: float = 120.0, say=print):
        if not board.serial:
            raise BringupError(f"board {board.name}: no [serial] table")
        self.board = board
        self.console_url = board.serial.port
        self.baud = board.serial.baud
        self.power = board.power or PowerSpec()
        self.operator_timeout = operator_timeout
        self.say = say

    def _run(self, which: str) -> bool:
        argv: list[str] = getattr(self.power, which)
        if not argv:
            return False
        p = subprocess.run(argv, capture_output=True, text=True)
        if p.returncode != 0:
            raise BringupError(
                f"board {self.board.name}: power.{which} command {shlex.join(argv)} failed "
                f"(exit {p.returncode}): {(p.stderr or p.stdout).strip()[:200]}"
            )
        return True

    def start(self) -> None:
        if self.power.off:
            self._run("off")
            time.sleep(1.0)
        if self._run("on") or self._run("reset"):
            self.t0 = time.monotonic()
        else:
            # nobody to switch it on but the operator; t0 is when they confirm
            self.say(f"Power on board {self.board.name} now, then press Enter ({self.operator_timeout:.0f}s)...")
            import select

            r, _, _ = select.select([sys.stdin], [], [], self.operator_timeout) if sys.stdin.isatty() else ([], [], [])
            if not r:
                raise BootFailed(
                    f"board {self.board.name}: nobody powered the board on "
                    f"(no power.on command in the board file and no operator)"
                )
            sys.stdin.readline()
            self.t0 = time.monotonic()

    def stop(self) -> None:
        if self.power.off:
            try:
                self._run("off")
            except BringupError as e:
                self.say(f"warning: {e}")


def _qemu_package(binary: str) -> str:
    name = Path(binary).name
    return {
        "qemu-system-arm": "qemu-system-arm",
        "qemu-system-aarch64": "qemu-system-arm",
        "qemu-system-ppc": "qemu-system-ppc",
        "qemu-system-ppc64": "qemu-system-ppc",
        "qemu-system-i386": "qemu-system-x86",
        "qemu-system-x86_64": "qemu-system-x86",
    }.get(name, "qemu-system")
