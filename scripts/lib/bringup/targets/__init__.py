"""Targets: the boards the boot engine boots, each implementing the Target
protocol of bringup.boot.target.

  qemu.QemuTarget      QEMU (a board file with a [qemu] table)
  serial.SerialTarget  a board on the bench: [serial], [power], [tftp]
  labgrid.LabgridTarget  a labgrid place: [labgrid] (console, power, TFTP from the lab)
  bench                what a board outside QEMU boots over: network, NFS address, TFTP staging

for_board(), places() and disk_image_attachment() are the one place that looks at which kind a board is
(below targets/, model/ validates the tables and says which boot paths they allow).
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bringup.boot.target import Place, Target, TargetFactory
from bringup.errors import BringupError
from bringup.model.board import Board
from bringup.targets.labgrid import LabgridTarget
from bringup.targets.qemu import QemuTarget
from bringup.targets.serial import SerialTarget
from bringup.util import net

__all__ = [
    "BoardPlace",
    "LabPlace",
    "LabgridTarget",
    "Place",
    "QemuTarget",
    "SerialTarget",
    "Target",
    "disk_image_attachment",
    "for_board",
    "parse_places",
    "places",
]


def for_board(board: Board, run_dir: Path, *, say=print, disk: Path | None = None) -> Target:
    """A fresh target for one boot of `board`; its files go to run_dir.  disk: an
    image QEMU attaches (a real board's disk is its own partition)."""
    if board.qemu is not None:
        return QemuTarget(board, run_dir, disk=disk)
    if board.labgrid is not None:
        return LabgridTarget(board, say=say)
    return SerialTarget(board, say=say)


def disk_image_attachment(board: Board) -> str | None:
    """How the board's target attaches the disk image bringup makes fresh for each boot
    of the disk workloads (QEMU's device), or None: a real board's disk is its own partition."""
    if board.qemu is None:
        return None
    return f"QEMU {board.qemu.disk_device}: a fresh raw image per boot, the host's page cache behind it"


@dataclass
class BoardPlace:
    """A board that is not a labgrid place: nothing to hold; a fresh target per boot."""

    board: Board
    say: object = print
    name: str | None = None

    @contextlib.contextmanager
    def hold(self, cancel: threading.Event | None = None) -> Iterator[TargetFactory]:
        say = self.say
        yield lambda run_dir: for_board(self.board, run_dir, say=say)


@dataclass
class LabPlace:
    """A labgrid place held for a whole step: acquired once, released at the end (also
    on errors and Ctrl-C); each boot's target switches the power only."""

    board: Board
    name: str | None  # always a place's name (the Place protocol's type)
    shared: bool = False  # one of several places of the study
    say: object = print

    @contextlib.contextmanager
    def hold(self, cancel: threading.Event | None = None) -> Iterator[TargetFactory]:
        b, name, shared, say = self.board, self.name, self.shared, self.say
        with LabgridTarget(b, say=say, place=name, shared=shared, cancel=cancel) as held:
            yield lambda run_dir: LabgridTarget(b, say=say, place=name, held_by=held, shared=shared)


PLACE_RE = re.compile(r"^[A-Za-z0-9_.+][A-Za-z0-9_.+-]{0,199}$")  # no leading -: an option


def parse_places(text: str | None, option: str = "--places") -> list[str]:
    """A comma-separated list of place names (PLACES=a,b); [] for none.  A bad name or
    a place named twice is one line naming the option and the value."""
    names = [n.strip() for n in (text or "").split(",") if n.strip()]
    for n in names:
        if not PLACE_RE.match(n):
            raise BringupError(
                f"{option} {text}: {n!r} is not a labgrid place name (letters, digits, _ . + -; no leading -)"
            )
    dup = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if dup is not None:
        raise BringupError(f"{option} {text}: place {dup!r} is listed twice")
    return names


def places(board: Board, names: list[str] | None = None, *, say=print) -> list[Place]:
    """Where the boots of a step of `board` go: its labgrid places (names, e.g. from
    PLACES=, instead of the board file's place/places), or the board itself."""
    if board.labgrid is None:
        if names:
            raise BringupError(
                f"--places {','.join(names)}: board {board.name} is not a labgrid board "
                f"(no [labgrid] table in {board.file.name})"
            )
        return [BoardPlace(board, say)]
    if not board.labgrid.coordinator:
        net.coordinator_from_env()  # a bad LG_COORDINATOR: refused here, not at the first boot
    names = names or board.labgrid.names()
    return [LabPlace(board, n, shared=len(names) > 1, say=say) for n in names]
