"""An NFS server for one boot: NFS-Ganesha (userspace; the host kernel needs no
nfsd) serving one directory over NFSv4 on one address, started before the
board powers on and stopped with the run.

Everything it writes (config, pid file, log, v4 recovery directory) stays in
the run's own directory.  NFSv4 needs no rpcbind; the export allows
unprivileged source ports because QEMU's user networking connects from high
ports (with PrivilegedPort = true the guest's mount fails with a misleading
"No such file or directory").  The process gets SIGKILL if bringup dies, so a
killed run leaves no server behind.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import shutil
import socket
import subprocess
import time
from pathlib import Path

from bringup.errors import BringupError
from bringup.util.net import free_port
from bringup.util.procutil import die_with_parent

PSEUDO = "/bringup"

CONF = """# written by bringup for one run; see docs/real-board.md
NFS_CORE_PARAM {{
    Bind_addr = {bind};
    NFS_Port = {port};
    MNT_Port = {mnt_port};
    Enable_NLM = false;
    Enable_RQUOTA = false;
    Protocols = 4;
}}
NFSV4 {{
    Graceless = true;
    RecoveryBackend = fs;
    RecoveryRoot = "{recovery}";
}}
EXPORT {{
    Export_Id = 1;
    Path = "{path}";
    Pseudo = "{pseudo}";
    Access_Type = RW;
    Squash = no_root_squash;
    SecType = sys;
    Protocols = 4;
    Transports = TCP;
    PrivilegedPort = false;
    FSAL {{ Name = VFS; }}
}}
"""


def bind_address(bind: str) -> str:
    """The board file's nfs.bind: an IPv4 address, or an interface name (eth1)
    whose first IPv4 address is used."""
    try:
        ipaddress.ip_address(bind)
        return bind
    except ValueError:
        pass
    ip = shutil.which("ip")
    p = (
        subprocess.run([ip or "ip", "-j", "-4", "addr", "show", "dev", bind], capture_output=True, text=True)
        if ip
        else None
    )
    if p is None or p.returncode != 0:
        raise BringupError(
            f"NFS server: nfs.bind {bind!r} is neither an IP address nor a network interface of this host"
        )
    addrs = [
        a["local"] for i in json.loads(p.stdout or "[]") for a in i.get("addr_info", []) if a.get("family") == "inet"
    ]
    if not addrs:
        raise BringupError(f"NFS server: interface {bind} has no IPv4 address (nfs.bind)")
    return addrs[0]


class GaneshaServer:
    """`with GaneshaServer(export, workdir) as nfs:` serves `export` at
    nfs.bind:nfs.port, path nfs.pseudo, for the length of the block."""

    def __init__(
        self,
        export: Path,
        workdir: Path,
        bind: str = "127.0.0.1",
        port: int = 0,
        binary: str = "ganesha.nfsd",
        start_timeout: float = 20.0,
    ):
        self.export = Path(export).resolve()
        self.workdir = Path(workdir).resolve()
        self.bind = bind_address(bind)
        try:
            self.port = port or free_port(self.bind)
            self.mnt_port = free_port(self.bind)
        except OSError as e:
            raise BringupError(
                f"NFS server: cannot listen on {self.bind}: {e.strerror} "
                f"(board file nfs.bind: use an address of this host)"
            ) from e
        self.binary = binary
        self.start_timeout = start_timeout
        self.pseudo = PSEUDO
        self.proc: subprocess.Popen | None = None
        self.log = self.workdir / "ganesha.log"
        self.started_in: float | None = None

    def config(self) -> str:
        return CONF.format(
            bind=self.bind,
            port=self.port,
            mnt_port=self.mnt_port,
            recovery=self.workdir / "v4recov",
            path=self.export,
            pseudo=self.pseudo,
        )

    def start(self) -> None:
        exe = self._check()
        self.workdir.mkdir(parents=True, exist_ok=True)
        (self.workdir / "v4recov").mkdir(exist_ok=True)
        conf = self.workdir / "ganesha.conf"
        conf.write_text(self.config())
        argv = [
            exe,
            "-F",
            "-f",
            str(conf),
            "-L",
            str(self.log),
            "-p",
            str(self.workdir / "ganesha.pid"),
            "-N",
            "NIV_EVENT",
        ]
        t = time.monotonic()
        with open(self.workdir / "ganesha.stdout", "wb") as out:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, preexec_fn=die_with_parent
            )
        self._wait(t)

    def _check(self) -> str:
        """The server's executable, once its export directory and ports are known to be usable."""
        exe = shutil.which(self.binary)
        if exe is None:
            raise BringupError(
                f"NFS server: {self.binary} not found: install Debian packages nfs-ganesha "
                f"and nfs-ganesha-vfs (make deps does)"
            )
        if not self.export.is_dir():
            raise BringupError(f"NFS server: export directory {self.export} does not exist")
        for port in (self.port, self.mnt_port):
            with socket.socket() as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    s.bind((self.bind, port))
                except OSError as e:
                    raise BringupError(
                        f"NFS server: cannot listen on {self.bind}:{port}: {e.strerror} "
                        f"(board file nfs.bind / nfs.port)"
                    ) from e
        return exe

    def _wait(self, t: float) -> None:
        """Until the server, started at t, says it is initialized and takes a connection;
        it exiting or the start timeout fails, in one line."""
        assert self.proc is not None
        deadline = t + self.start_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BringupError(
                    f"NFS server (ganesha) exited at start with code {self.proc.returncode}: "
                    f"{self.why()} (log: {self.log})"
                )
            if self._initialized():
                try:
                    with socket.create_connection((self.bind, self.port), timeout=0.2):
                        self.started_in = time.monotonic() - t
                        return
                except OSError:
                    pass
            time.sleep(0.02)
        why = self.why()
        self.stop()
        raise BringupError(
            f"NFS server (ganesha) did not listen on {self.bind}:{self.port} within "
            f"{self.start_timeout:.0f}s{': ' + why if why else ''} (log: {self.log})"
        )

    def _initialized(self) -> bool:
        try:
            return "NFS SERVER INITIALIZED" in self.log.read_text(errors="replace")
        except OSError:
            return False

    def why(self) -> str:
        """The most telling line of the server's log: its last fatal/critical/major one."""
        lines: list[str] = []
        for f in (self.log, self.workdir / "ganesha.stdout"):
            with contextlib.suppress(OSError):
                lines += f.read_text(errors="replace").splitlines()
        bad = [
            x
            for x in lines
            if any(w in x for w in (" FATAL ", " CRIT ", " MAJ ", "Error", "error")) and "dbus" not in x.lower()
        ]
        line = (bad or [x for x in lines if x.strip()] or [""])[-1]
        return line.split(" :", 1)[-1].strip()[:300] if line else ""

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
