"""Which boot paths and roots a board can take: refused in one line, before any
work, when the board cannot (a real board has no `direct` path; U-Boot needs its
table and its TFTP directory or -bios binary; an external NFS server its export
directory), and the path a measurement boot takes."""

from __future__ import annotations

from bringup.model.base import DataError
from bringup.model.board import Board
from bringup.util import paths


def check_boot_path(board: Board, path: str) -> None:
    """Refuse, in one line, a boot path the board cannot take.  'direct' means the
    target loads the kernel itself (QEMU's -kernel); a real board would boot whatever
    its flash holds while the records name the kernel we built.  What the board's kind
    of target needs besides (a TFTP directory, a -bios file) its table says."""
    if path == "direct" and not board.target.loads_kernel_itself:
        raise DataError(
            f"board {board.name}: boot path 'direct' needs a target that loads the kernel itself ([qemu]); "
            f"a real board would boot whatever is in its flash: boot it through U-Boot (--path u-boot)"
        )
    if path == "u-boot" and board.uboot is None:
        raise DataError(f"board {board.name}: no [uboot] table, so it cannot boot through U-Boot")
    board.target.check_boot_path(board, path)


def check_root(board: Board, root: str) -> None:
    """Refuse, in one line and before any work, an NFS root the board's [nfs] cannot serve:
    an external server's export directory that is not there (found at the first boot before)."""
    if root == "nfs" and board.nfs.server == "external":
        base = paths.expand_user(board.nfs.export_dir, "nfs.export_dir")
        if not base.is_dir():
            raise DataError(
                f"{paths.rel(board.file)}: field 'nfs.export_dir': {board.nfs.export_dir!r}: no such directory "
                "(the directory your NFS server exports)"
            )


def measure_path(board: Board) -> str:
    """The boot path of a measurement boot (footprint, lmbench): QEMU loads the kernel
    itself; a real board loads the kernel we built through U-Boot (refused without [uboot])."""
    path = "direct" if board.target.loads_kernel_itself else "u-boot"
    check_boot_path(board, path)
    return path
