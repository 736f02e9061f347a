"""The root filesystem over NFS for one boot, the seed's way: the kernel's own
nfsroot (root=/dev/nfs), the rootfs a per-run copy of the board's ramdisk.

  ganesha   (default) the copy goes to <run>/nfsroot, served by NFS-Ganesha
            for this run only, on the board file's nfs.bind address (loopback
            for QEMU, whose guest reaches the host through its user network).
  external  your own NFS server exports nfs.export_dir; the copy goes under
            it, to bringup/<board>/<kernel>/<run>/.

The kernel gets `root=/dev/nfs rw nfsroot=<address>:<path>,vers=<v>,<options>,
port=<port> ip=<ip>`, where address is the server as the board sees it (the
target says: Target.nfs_address()).  Giving the port means no portmapper
lookup, so NFSv4 needs no rpcbind at all.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from bringup.boot.nfsserver import GaneshaServer
from bringup.errors import BringupError
from bringup.model.board import Board
from bringup.util import cpio, paths


class NfsRoot:
    def __init__(self, board: Board, kernel_id: str, initrd: Path, run_dir: Path, address: str):
        self.board = board
        self.cfg = board.nfs
        self.address = address
        self.run_dir = Path(run_dir)
        self.initrd = Path(initrd)
        self.server: GaneshaServer | None = None
        self.remote_path: str | None  # the export's path as the server gives it
        if self.cfg.server == "external":
            base = paths.expand_user(self.cfg.export_dir, "nfs.export_dir")
            if not base.is_dir():
                raise BringupError(f"{board.file.name}: nfs.export_dir {base}: no such directory")
            rel = f"bringup/{board.name}/{kernel_id}/{self.run_dir.name}"
            self.export = base / rel
            self.remote_path = f"{self.cfg.export_path.rstrip('/')}/{rel}"
        else:
            self.export = self.run_dir / "nfsroot"
            self.remote_path = None
        self.port = self.cfg.port
        if self.cfg.server == "ganesha":
            self.server = GaneshaServer(
                self.export, self.run_dir / "nfs-server", bind=self.cfg.bind, port=self.cfg.port
            )
            self.port = self.server.port
            self.remote_path = self.server.pseudo

    def __enter__(self):
        if self.export.exists():
            shutil.rmtree(self.export)
        try:
            n = cpio.unpack(cpio.read(self.initrd.read_bytes()), self.export)
        except (ValueError, OSError) as e:
            raise BringupError(f"NFS root: cannot unpack {self.initrd} into {self.export}: {e}") from e
        self.files = n
        if self.server is not None:
            self.server.start()
        return self

    def __exit__(self, *exc):
        if self.server is not None:
            self.server.stop()

    @property
    def cmdline(self) -> str:
        opts = [f"vers={self.cfg.version}"]
        if self.cfg.options:
            opts.append(self.cfg.options)
        if self.port:
            opts.append(f"port={self.port}")
        return f"root=/dev/nfs rw nfsroot={self.address}:{self.remote_path},{','.join(opts)} ip={self.cfg.ip}"

    def info(self) -> dict:
        d = {
            "server": self.cfg.server,
            "export": str(self.export),
            "path": self.remote_path,
            "address": self.address,
            "port": self.port,
            "version": self.cfg.version,
            "files": getattr(self, "files", None),
        }
        if self.server is not None:
            d.update(
                bind=self.server.bind,
                server_log=str(self.server.log),
                server_start_s=round(self.server.started_in or 0, 3),
            )
        return d
