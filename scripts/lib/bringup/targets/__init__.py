"""Targets: the boards the boot engine boots, each implementing the Target
protocol of bringup.boot.target.  Each kind of target is one module here that
declares its board-file table (a model/targetkind.py TargetSpec), makes its
Target and registers itself; importing this package imports them all, so a new
kind is a new module and nothing else:

  qemu.py     QemuSpec [qemu], QemuTarget: QEMU
  serial.py   SerialSpec [serial], SerialTarget: a board on the bench ([power], [tftp] beside)
  labgrid.py  LabgridSpec [labgrid], LabgridTarget, LabPlace: a labgrid place (console, power, TFTP from the lab)
  bench.py    what a board outside QEMU boots over: network, NFS address, TFTP staging

for_board(), places() and disk_image_attachment() ask the board's target table
(board.target); nothing outside the kinds' modules looks at which kind a board is.
"""

from __future__ import annotations

import contextlib
import importlib
import pkgutil
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bringup.boot.target import Place, Target, TargetFactory
from bringup.errors import BringupError
from bringup.model.board import Board

__all__ = [
    "BoardPlace",
    "Place",
    "Target",
    "disk_image_attachment",
    "for_board",
    "parse_places",
    "places",
]


def for_board(board: Board, run_dir: Path, *, say=print, disk: Path | None = None) -> Target:
    """A fresh target for one boot of `board`; its files go to run_dir.  disk: an
    image QEMU attaches (a real board's disk is its own partition)."""
    return board.target.target(board, run_dir, say=say, disk=disk)


def disk_image_attachment(board: Board) -> str | None:
    """How the board's target attaches the disk image bringup makes fresh for each boot
    of the disk workloads (QEMU's device), or None: a real board's disk is its own partition."""
    return board.target.disk_attachment()


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
    own = board.target.held_places(board, names or [], say)
    if own is not None:
        return own
    if names:
        raise BringupError(
            f"--places {','.join(names)}: board {board.name} is not a labgrid board "
            f"(no [labgrid] table in {board.file.name})"
        )
    return [BoardPlace(board, say)]


# every kind of target is a module of this package that registers itself (model/targetkind.py)
for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
