"""QEMU as a kind of target (model/targetkind.py): the board file's [qemu] table
(QemuSpec), and QEMU as a Target: the emulated board, its serial port on a loopback TCP
socket, its user networking's TFTP server and host address.

QEMU is spawned in prepare() with `server=on,wait=on`: it listens on the
socket and holds the guest until the console connects, so nothing printed is
lost and power_on() has nothing left to do.  t0 is the spawn.

The console's port is a free one at the time it is chosen (util/net.free_port);
another process, or another QEMU of the same study (local parallel workers, the
round engine's `jobs`), may take it before QEMU binds it.  prepare() therefore waits
until QEMU says it listens, and when QEMU says the port is in use, spawns it again
on another port (PORT_TRIES in all).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import IO, Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from bringup.boot.target import BootSpec, Network, Staging, Target
from bringup.errors import BootFailed, BringupError
from bringup.model.base import DataError, located
from bringup.model.board import Board, BoardFile
from bringup.model.clocks import HOST, Clock, ClockKind, clock_of
from bringup.model.targetkind import TargetSpec, register
from bringup.model.values import Argv
from bringup.util import paths
from bringup.util.net import free_port
from bringup.util.procutil import die_with_parent

# the host as QEMU's user networking (slirp) shows it to the guest: its DHCP
# server hands out 10.0.2.15, the gateway, TFTP and the host's ports are 10.0.2.2
USER_NET_HOST = "10.0.2.2"

PORT_TRIES = 5  # spawns of QEMU while the console's port turns out to be taken
LISTENING = "QEMU waiting for connection on:"  # QEMU's line once its server socket listens (wait=on)
IN_USE = "Address already in use"
LISTEN_WAIT = 10.0  # seconds to wait for either; a QEMU that says neither is left to the console


def qemu_argv(
    board: Board,
    port: int,
    mode: str,
    files: dict,
    cmdline: str,
    tftp_dir: Path | None = None,
    disk: Path | None = None,
    seed: int = 1,
) -> list[str]:
    """QEMU's argument list for a board.  mode: 'direct' or 'u-boot'.  disk: a raw
    image attached with the board's qemu.disk_device (the disk workloads' ext4 image)."""
    q = QemuSpec.of(board)
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
    if disk is not None:
        if not q.disk_device:
            raise BringupError(f"board {board.name}: no qemu.disk_device, so QEMU cannot attach a disk")
        # the host's page cache stands behind the image (cache=writeback, QEMU's default)
        image = str(disk).replace(",", ",,")  # QEMU's option syntax: a comma in a value is doubled
        argv += [
            "-drive",
            f"file={image},format=raw,if=none,id=disk0,cache=writeback",
            "-device",
            f"{q.disk_device},drive=disk0",
        ]
    if mode == "u-boot":
        if board.uboot is None:
            raise BringupError(f"board {board.name}: no [uboot] table, so it cannot boot through U-Boot")
        argv += ["-bios", board.uboot.binary]
    else:
        argv += ["-kernel", str(files["kernel"])]
        if files.get("initrd"):
            argv += ["-initrd", str(files["initrd"])]
        if files.get("dtb"):
            argv += ["-dtb", str(files["dtb"])]
        argv += ["-append", cmdline]
    # the clock (model/clocks.py): -icount, a virtual RTC from a fixed date, a fixed seed
    return argv + clock_of(board).qemu_args(seed) + list(q.args)


class QemuTarget:
    """One QEMU run of a board; its files (qemu.stderr, tftp/) go to run_dir."""

    def __init__(self, board: Board, run_dir: Path, disk: Path | None = None):
        QemuSpec.of(board)  # a QEMU board
        self.board = board
        self.run_dir = Path(run_dir)
        self.disk = disk
        self.console_url = ""
        self.baud = 115200
        self.t0: float | None = None
        self.argv: list[str] = []
        self.proc: subprocess.Popen | None = None
        self.stderr_path = self.run_dir / "qemu.stderr"
        self._stderr: IO[bytes] | None = None

    # -- where things are ---------------------------------------------------
    def staging(self, kernel_id: str) -> Staging:
        # QEMU's built-in TFTP server serves this directory (-netdev user,tftp=)
        return Staging(self.run_dir / "tftp")

    def network(self) -> Network:
        return Network(serverip=USER_NET_HOST, dhcp=True)

    def nfs_address(self) -> str:
        # the NFS server listens on the host (nfs.bind, loopback by default); the guest reaches the host here
        return self.board.nfs.address or USER_NET_HOST

    # -- power ----------------------------------------------------------------
    def prepare(self, boot: BootSpec) -> None:
        files = {"kernel": boot.kernel, "initrd": boot.initrd, "dtb": boot.dtb}
        tftp = self.staging("").dir if boot.path == "u-boot" else None
        self.run_dir.mkdir(parents=True, exist_ok=True)
        for _ in range(PORT_TRIES):
            port = free_port()
            self.argv = qemu_argv(self.board, port, boot.path, files, boot.cmdline, tftp, self.disk, boot.seed)
            self.console_url = f"socket://127.0.0.1:{port}"
            self._spawn()
            if not self._port_taken():
                break
            self.power_off()  # the port was taken before QEMU bound it: another port
        # QEMU holds the guest until the console connects (server=on,wait=on); the
        # console retries until QEMU listens.  No probe connection here: QEMU would take
        # it for the client and start the guest with nobody listening.
        if self.proc is not None and self.proc.poll() is not None:
            raise BootFailed(f"QEMU exited at start (code {self.proc.returncode}): {self.stderr_tail()}")

    def _port_taken(self) -> bool:
        """Wait until QEMU listens (its LISTENING line) or exits; True when it exited because
        the console's port was in use.  Polled every millisecond: the guest waits meanwhile."""
        deadline = time.monotonic() + LISTEN_WAIT
        while time.monotonic() < deadline:
            try:
                text = self.stderr_path.read_text(errors="replace")
            except OSError:
                text = ""
            if LISTENING in text:
                return False
            if self.proc is not None and self.proc.poll() is not None:
                return IN_USE in self.stderr_path.read_text(errors="replace")
            time.sleep(0.001)
        return False

    def _spawn(self) -> None:
        """Start QEMU with self.argv, its output to qemu.stderr; t0 is now."""
        self._stderr = open(self.stderr_path, "wb")  # noqa: SIM115 (closed in power_off)
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
            ) from None

    def power_on(self) -> None:
        """Nothing to do: the guest runs as soon as the console is connected."""

    def power_off(self) -> None:
        if self.proc and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=3)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        # the boot's copies for QEMU's TFTP server (about 2.8 MB) are of no use once it ended
        shutil.rmtree(self.staging("").dir, ignore_errors=True)

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
            text = self.stderr_path.read_text(errors="replace")
            # QEMU's start-up notice (LISTENING) is no cause of its end
            lines = [x for x in text.splitlines() if x.strip() and LISTENING not in x]
            return lines[-1].strip() if lines else ""
        except OSError:
            return ""

    def describe(self) -> dict[str, Any]:
        return {"t0": "QEMU spawn", "console": self.console_url, "qemu_argv": self.argv or None}

    def __enter__(self) -> QemuTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.power_off()


# QEMU options bringup gives itself (targets/qemu.py): qemu.args repeating one would override what
# the board file and the records say (-m 4096 against memory_mb = 512), or the console bringup reads
QEMU_OWN_OPTIONS = (
    "M", "machine", "cpu", "m", "smp", "display", "monitor", "nodefaults", "serial",
    "kernel", "initrd", "dtb", "append", "bios", "icount", "rtc", "seed",
)  # fmt: skip


# QEMU options that stop or detach the guest bringup boots and reads
QEMU_STOPPING_OPTIONS = {
    "S": "wait, CPU stopped, for a monitor's 'cont'",
    "daemonize": "detach from bringup into the background",
    "incoming": "wait for a migration stream",
    "nographic": "take the console to its standard input and output",
}


@register
class QemuSpec(TargetSpec):
    # [qemu]: the board is emulated by QEMU, which loads the kernel itself (-kernel).

    table = "qemu"
    table_doc = "how QEMU emulates the board (a QEMU board)"
    rank = 10
    loads_kernel_itself = True
    console_rate_limited = False  # QEMU's serial line is not rate-limited

    binary: Annotated[str, Field(pattern=r"^[A-Za-z0-9_./+-]+$", max_length=4096)]
    machine: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.,=+-]+$", max_length=256)]
    cpu: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.,=+-]*$", max_length=256)] = ""
    smp: Annotated[int, Field(ge=1, le=64)] = 1
    args: Annotated[Argv, Field(description="extra QEMU arguments")] = []
    net_device: Annotated[
        str, Field(pattern=r"^[A-Za-z0-9_.,=-]*$", max_length=256, description="QEMU NIC model for user networking")
    ] = ""
    disk_device: Annotated[
        str,
        Field(
            pattern=r"^[A-Za-z0-9_.-]*$",
            max_length=64,
            description="QEMU device that attaches the disk workloads' ext4 image (virtio-blk-device on "
            "virtio-mmio, virtio-blk-pci on PCI); empty: the board has no disk",
        ),
    ] = ""
    clock: Annotated[
        Literal["host", "instructions"],
        Field(
            description="what measures time: 'instructions' (QEMU icount: guest time advances by executed "
            "instructions, 2^icount_shift ns each, and jumps over idle time; deterministic, docs/clock.md) or "
            "'host' (the guest runs as fast as the host lets it; noisy, measured in rounds)"
        ),
    ] = "host"
    icount_shift: Annotated[
        int,
        Field(
            ge=0,
            le=10,
            description="instruction clock: 2^icount_shift ns per instruction (3: 8 ns, 125 MIPS); "
            "choose it to approximate the real CPU's instruction rate",
        ),
    ] = 3

    @field_validator("binary")
    @classmethod
    def _command(cls, v: str) -> str:
        if v.startswith("-"):
            raise ValueError("starts with '-': not a command")
        if "/" in v and not v.startswith("/"):
            raise ValueError(
                "a relative path (it would depend on the directory bringup runs in): give a command on PATH "
                "(qemu-system-arm) or an absolute path"
            )
        if ".." in v.split("/"):
            raise ValueError("a path with '..': give the absolute path of the QEMU binary")
        return v

    @model_validator(mode="after")
    def _icount_without_kvm(self) -> QemuSpec:
        if self.clock == "instructions":
            for i, arg in enumerate(self.args):
                nxt = self.args[i + 1] if i + 1 < len(self.args) else ""
                if arg in ("-enable-kvm", "--enable-kvm") or (arg in ("-accel", "--accel") and nxt.startswith("kvm")):
                    raise located(
                        f"args[{i}]",
                        f'{arg!r}: QEMU\'s instruction counter (clock = "instructions") runs under TCG only; '
                        'drop KVM or set clock = "host"',
                    )
        return self

    @field_validator("args")
    @classmethod
    def _not_own_options(cls, v: list[str]) -> list[str]:
        for i, arg in enumerate(v):
            name = arg.lstrip("-").partition("=")[0]
            if arg.startswith("-") and name in QEMU_STOPPING_OPTIONS:
                raise ValueError(
                    f"@[{i}]@{arg!r}: QEMU would {QEMU_STOPPING_OPTIONS[name]}, and the boot bringup watches would "
                    "never come"
                )
            if arg.startswith("-") and name in QEMU_OWN_OPTIONS:
                raise ValueError(
                    f"@[{i}]@{arg!r}: an option bringup gives QEMU itself or keeps for the instruction clock (from "
                    "memory_mb, qemu.machine, qemu.cpu, qemu.smp, qemu.clock, the console and the boot files); "
                    "set those fields instead"
                )
        return v

    def check_disk(self, board: BoardFile) -> None:
        if self.disk_device and not board.workloads.disk:
            raise located("workloads.disk", "missing: qemu.disk_device attaches a disk; name it as the guest sees it")
        if board.workloads.disk and not self.disk_device:
            raise located("qemu.disk_device", "missing: QEMU attaches no disk for workloads.disk without it")

    def check_boot_path(self, board: Board, path: str) -> None:
        if path == "u-boot" and board.uboot is not None:
            bios = paths.expand_user(board.uboot.binary, "uboot.binary")
            if not bios.is_file():  # QEMU would stop at its start, after the ramdisk was built
                raise DataError(
                    f"{paths.rel(board.file)}: field 'uboot.binary': {board.uboot.binary!r}: no such file "
                    "(QEMU loads it as -bios; Debian's u-boot-qemu has the qemu boards' U-Boot)"
                )

    def measuring_clock(self) -> Clock:
        return Clock("instructions", self.icount_shift) if self.clock == "instructions" else HOST

    def with_clock(self, kind: ClockKind) -> QemuSpec:
        return self if self.clock == kind else self.model_copy(update={"clock": kind})

    def emulator(self) -> str:
        return self.binary

    def disk_attachment(self) -> str:
        return f"QEMU {self.disk_device}: a fresh raw image per boot, the host's page cache behind it"

    def target(self, board: Board, run_dir: Path, *, say: Any, disk: Path | None) -> QemuTarget:
        return QemuTarget(board, run_dir, disk=disk)


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


def _implements_target(t: QemuTarget) -> Target:  # mypy checks that QemuTarget is a Target
    return t
