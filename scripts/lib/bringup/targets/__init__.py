"""Targets: the boards the boot engine boots, each implementing the Target
protocol of bringup.boot.target.

  qemu.QemuTarget      QEMU (a board file with a [qemu] table)
  serial.SerialTarget  a board on the bench: [serial], [power], [tftp]
  labgrid.LabgridTarget  a labgrid place: [labgrid] (console, power, TFTP from the lab)

for_board() is the one place that looks at which kind a board is.
"""

from __future__ import annotations

from pathlib import Path

from bringup.boot.target import Target
from bringup.model.board import Board
from bringup.targets.labgrid import LabgridTarget
from bringup.targets.qemu import QemuTarget
from bringup.targets.serial import SerialTarget

__all__ = ["LabgridTarget", "QemuTarget", "SerialTarget", "Target", "for_board"]


def for_board(board: Board, run_dir: Path, *, say=print, disk: Path | None = None) -> Target:
    """A fresh target for one boot of `board`; its files go to run_dir.  disk: an
    image QEMU attaches (a real board's disk is its own partition)."""
    if board.qemu is not None:
        return QemuTarget(board, run_dir, disk=disk)
    if board.labgrid is not None:
        return LabgridTarget(board, say=say)
    return SerialTarget(board, say=say)
