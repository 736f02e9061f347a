"""NFS root pieces without a guest: the cpio reader and unpacker, the nfsroot
command line, board-file checks, and the real NFS-Ganesha started and stopped."""

import os
import socket
import subprocess

import pytest

from bringup.boot.nfsroot import NfsRoot
from bringup.boot.nfsserver import GaneshaServer
from bringup.errors import BringupError
from bringup.model.board import load_board
from bringup.model.specs import NfsSpec
from bringup.targets.qemu import QemuTarget
from bringup.util import cpio


def entries():
    return [
        cpio.directory("bin"),
        cpio.file("bin/busybox", b"\x7fELF...", 0o755),
        cpio.symlink("bin/sh", "busybox"),
        cpio.directory("dev"),
        cpio.chardev("dev/console", 5, 1),
        cpio.file("etc/passwd", b"root::0:0:root:/root:/bin/sh\n"),
    ]


def test_cpio_round_trip_and_unpack(tmp_path):
    data = cpio.gzipped(cpio.archive(entries()))
    back = {e.path: e for e in cpio.read(data)}
    assert back["bin/busybox"].data == b"\x7fELF..." and back["dev/console"].rdev == (5, 1)
    n = cpio.unpack(list(back.values()), tmp_path / "root", devices=False)
    assert n == 5  # the device node is left to devtmpfs
    assert os.readlink(tmp_path / "root" / "bin" / "sh") == "busybox"
    assert (tmp_path / "root" / "bin" / "busybox").stat().st_mode & 0o777 == 0o755
    assert not (tmp_path / "root" / "dev" / "console").exists()


@pytest.mark.parametrize(
    "bad",
    [
        [cpio.file("../escape", b"x")],
        [cpio.symlink("lib", "/"), cpio.file("lib/escape", b"x")],  # through an absolute symlink
        [cpio.symlink("up", ".."), cpio.file("up/escape", b"x")],
    ],
)
def test_unpack_refuses_paths_outside_the_target(tmp_path, bad):
    with pytest.raises(ValueError, match="escapes the target directory"):
        cpio.unpack(bad, tmp_path / "root")
    assert not (tmp_path / "escape").exists()


def test_nfsroot_command_line(tmp_path):
    board = load_board("qemu-arm")
    # the server as the board sees it is the target's to say: QEMU's user network shows the host as 10.0.2.2
    address = QemuTarget(board, tmp_path / "run1").nfs_address()
    nr = NfsRoot(board, "6.12", tmp_path / "x.cpio.gz", tmp_path / "run1", address)
    assert nr.cmdline == (f"root=/dev/nfs rw nfsroot=10.0.2.2:/bringup,vers=4,tcp,port={nr.port} ip=dhcp")
    assert nr.port > 1024 and nr.export == tmp_path / "run1" / "nfsroot"
    board.nfs = NfsSpec(
        server="external",
        export_dir=str(tmp_path),
        export_path="/srv/nfs",
        port=2049,
        version="3",
        options="tcp,mountport=20048",
    )
    nr = NfsRoot(board, "6.12", tmp_path / "x.cpio.gz", tmp_path / "run1", QemuTarget(board, tmp_path).nfs_address())
    assert nr.cmdline == (
        "root=/dev/nfs rw nfsroot=10.0.2.2:/srv/nfs/bringup/qemu-arm/6.12/run1,vers=3,"
        "tcp,mountport=20048,port=2049 ip=dhcp"
    )
    assert nr.export == tmp_path / "bringup" / "qemu-arm" / "6.12" / "run1"
    board.nfs = board.nfs.model_copy(update={"address": "10.0.2.4"})  # the board file says otherwise
    assert QemuTarget(board, tmp_path).nfs_address() == "10.0.2.4"
    nr = NfsRoot(board, "6.12", tmp_path / "x.cpio.gz", tmp_path / "run1", QemuTarget(board, tmp_path).nfs_address())
    assert nr.cmdline.startswith("root=/dev/nfs rw nfsroot=10.0.2.4:/srv/nfs/") and nr.info()["address"] == "10.0.2.4"


def test_board_file_nfs_checks(tmp_path):
    text = load_board("qemu-arm").file.read_text() + '\n[nfs]\nserver = "external"\nexport_dir = "/srv"\n'
    f = tmp_path / "qemu-arm.toml"
    f.write_text(text)
    with pytest.raises(
        BringupError,
        match=r"qemu-arm.toml: field 'nfs.export_path': required when "
        r"nfs.server = 'external'",
    ):
        load_board(str(f))
    f.write_text(text.replace('server = "external"', 'server = "knfsd"'))
    with pytest.raises(BringupError, match=r"field 'nfs.server'"):
        load_board(str(f))


def test_bind_takes_an_address_or_an_interface():
    from bringup.boot.nfsserver import bind_address

    assert bind_address("192.168.10.1") == "192.168.10.1"
    assert bind_address("lo") == "127.0.0.1"
    with pytest.raises(BringupError, match=r"nfs.bind 'no-such-if0' is neither an IP address nor a network interface"):
        bind_address("no-such-if0")


def ganesha_pids(workdir):
    p = subprocess.run(["pgrep", "-f", f"ganesha.nfsd.*{workdir}"], capture_output=True, text=True)
    return p.stdout.split()


def test_ganesha_serves_on_loopback_and_stops(tmp_path):
    (tmp_path / "export").mkdir()
    with GaneshaServer(tmp_path / "export", tmp_path / "srv") as s:
        assert ganesha_pids(tmp_path / "srv")
        with socket.create_connection(("127.0.0.1", s.port), timeout=2):
            pass
        conf = (tmp_path / "srv" / "ganesha.conf").read_text()
        assert "Bind_addr = 127.0.0.1;" in conf and "PrivilegedPort = false;" in conf
        assert "Protocols = 4;" in conf and str(tmp_path / "srv" / "v4recov") in conf
    assert ganesha_pids(tmp_path / "srv") == []
    assert sorted(p.name for p in (tmp_path / "srv").iterdir()) == [
        "ganesha.conf",
        "ganesha.log",
        "ganesha.stdout",
        "v4recov",
    ]


def test_ganesha_that_cannot_start_fails_at_once_in_one_line(tmp_path):
    (tmp_path / "export").mkdir()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(
            BringupError,
            match=rf"^NFS server: cannot listen on 127.0.0.1:{port}: "
            r"Address already in use \(board file nfs.bind / nfs.port\)$",
        ):
            GaneshaServer(tmp_path / "export", tmp_path / "srv", port=port).start()
    with pytest.raises(BringupError, match=r"cannot listen on 192.0.2.1: .*use an address of this host"):
        GaneshaServer(tmp_path / "export", tmp_path / "srv", bind="192.0.2.1")
    with pytest.raises(BringupError, match=r"export directory .*/nope does not exist"):
        GaneshaServer(tmp_path / "nope", tmp_path / "srv").start()
    with pytest.raises(BringupError, match=r"not-a-ganesha not found: install Debian packages nfs-ganesha"):
        GaneshaServer(tmp_path / "export", tmp_path / "srv", binary="not-a-ganesha").start()
    assert ganesha_pids(tmp_path / "srv") == []
