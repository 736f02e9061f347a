"""What a board outside QEMU (a serial bench board, a labgrid place) boots over: the
network U-Boot configures from the board's [tftp] table, the NFS server's address as
the board sees it, and where in a TFTP directory a kernel's boot files go.  One
helper that targets/serial.py and targets/labgrid.py compose: BenchBoard gives their
network() and nfs_address(), prefix() and tftp_staging() their staging (QEMU's
network is its own, user-mode)."""

from __future__ import annotations

from pathlib import Path

from bringup.boot.target import Network, Staging
from bringup.errors import BringupError
from bringup.model.board import Board


def prefix(board: Board, kernel_id: str, place: str | None = None) -> str:
    """A kernel's boot files' directory, relative to the TFTP root; place: a labgrid place
    that shares the TFTP directory with others gets a directory of its own."""
    return f"bringup/{board.name}/{f'{place}/' if place else ''}{kernel_id}/"


def tftp_staging(tftp_dir: str | Path, rel: str) -> Staging:
    """Boot files in tftp_dir (a TFTP server's root on this host) under rel (prefix())."""
    return Staging(Path(tftp_dir) / rel, rel)


def network(board: Board) -> Network:
    """U-Boot's network from the board's [tftp] table: the server, DHCP or a fixed address."""
    t = board.tftp
    if t is None:
        return Network(serverip=None)
    return Network(serverip=t.serverip or None, dhcp=t.dhcp, ipaddr=t.ipaddr or None)


def nfs_address(board: Board) -> str:
    """The NFS server's address as the board sees it: [nfs] address, else the TFTP server's."""
    address = board.nfs.address or (board.tftp.serverip if board.tftp else "")
    if not address:
        raise BringupError(
            f"{board.file.name}: field 'nfs.address': not set, and no tftp.serverip to use "
            f"instead (the NFS server's address as the board sees it)"
        )
    return address


class BenchBoard:
    """The Target protocol's network() and nfs_address() for a board outside QEMU, from
    its board file: what SerialTarget and LabgridTarget share (their `board`); their
    staging() puts the boot files under prefix() (tftp_staging)."""

    board: Board

    def network(self) -> Network:
        return network(self.board)

    def nfs_address(self) -> str:
        return nfs_address(self.board)
