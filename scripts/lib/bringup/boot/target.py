"""What the boot engine needs of the thing it boots: the Target protocol.

The engine (boot/session.py) talks to a Target and never asks what kind it is.
Targets live in bringup.targets: QEMU (targets/qemu.py), a board on the bench
with a serial console and power commands (targets/serial.py), and a labgrid
place (targets/labgrid.py).  The split follows labgrid's: the board file's tables are the
resources (serial port, power commands, TFTP directory), a Target is the
drivers behind one protocol (power, console, where boot files go), and the
BootSession is the strategy that takes the board from off to a shell.

The order a session drives a target in:

    with target:                    # lifecycle: __exit__ powers off and cleans up
        target.staging(kernel_id)   # where the bootloader's files go (copied before prepare)
        target.prepare(boot)        # get ready: QEMU spawns (held until the console
                                    # connects; t0), a bench board is switched off
        Console(target.console_url, target.baud)   # listen before anything is printed
        target.power_on()           # a bench board powers on (t0); QEMU: nothing to do
        target.alive()              # polled while the boot runs

so a console that exists independently of power (a USB adapter, ser2net)
is open before the board prints its bootloader banner, and QEMU, whose serial
socket only exists once it runs, is spawned first.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class BootSpec:
    """What one boot boots.

    path     'direct': the target loads the kernel itself (QEMU's -kernel; a bench
             board boots whatever it boots on its own); 'u-boot': the bootloader
             fetches the files the session staged (see Target.staging)
    cmdline  the kernel command line
    kernel, initrd, dtb  the files, for a direct boot (initrd None for an NFS root)
    seed     the guest's random numbers on the instruction clock (QEMU's -seed): the
             round's number, so every kernel of a round starts from the same state and
             the rounds differ (docs/clock.md); other targets ignore it
    """

    path: str
    cmdline: str
    kernel: Path
    initrd: Path | None = None
    dtb: Path | None = None
    seed: int = 1


@dataclass(frozen=True)
class Staging:
    """Where the bootloader's files go on the host, and the prefix of the names
    the bootloader fetches them by (TFTP paths relative to the server's root)."""

    dir: Path
    prefix: str = ""

    def name(self, file: str) -> str:
        return self.prefix + file


@dataclass(frozen=True)
class Network:
    """The bootloader's network settings: the TFTP server's address as the board
    sees it (None: the one DHCP gives), DHCP or a fixed address."""

    serverip: str | None
    dhcp: bool = True
    ipaddr: str | None = None


@runtime_checkable
class Target(Protocol):
    """A board the engine can power, listen to and boot.  A context manager:
    leaving it powers the board off and releases what the target holds."""

    console_url: str
    """pyserial URL of the console (valid after prepare())."""
    baud: int
    t0: float | None
    """time.monotonic() of the boot's time zero (QEMU spawn, power-on); None until known."""

    def __enter__(self) -> Target: ...

    def __exit__(self, *exc: object) -> bool | None: ...

    def staging(self, kernel_id: str) -> Staging:
        """Where the boot files of a bootloader boot go, and their names for the bootloader."""
        ...

    def network(self) -> Network:
        """The bootloader's network settings."""
        ...

    def nfs_address(self) -> str:
        """The NFS server's (this host's) address as the board sees it."""
        ...

    def prepare(self, boot: BootSpec) -> None:
        """Get ready to boot `boot`, before the console is opened."""
        ...

    def power_on(self) -> None:
        """Start the boot, once the console listens; sets t0 if prepare() did not."""
        ...

    def power_off(self) -> None:
        """Stop the board (idempotent)."""
        ...

    def alive(self) -> str | None:
        """None while the target runs, else why it does not (e.g. QEMU's exit status)."""
        ...

    def describe(self) -> dict[str, Any]:
        """The boot record's fields about the target: t0 (what time zero is), console, qemu_argv."""
        ...


TargetFactory = Callable[[Path], Target]
"""A fresh target for one boot, its files in the given run directory."""


class Place(Protocol):
    """Where the boots of one step (a boot-timing run, a footprint run) go, held for the
    whole step: a labgrid place is acquired once and released at the end (also on
    errors and Ctrl-C); a board that is not a place holds nothing.  Several places of
    one study run their rounds in parallel (boot/timing.py), one worker each.

        with place.hold(cancel) as target_for:   # acquire (waiting while it is busy)
            target_for(run_dir)                   # a target for one boot on this place
    """

    name: str | None
    """The labgrid place's name; None for a board that is not a place."""

    def hold(self, cancel: threading.Event | None = None) -> AbstractContextManager[TargetFactory]:
        """Hold the place; cancel, once set, stops a wait for a busy place (KeyboardInterrupt)."""
        ...
