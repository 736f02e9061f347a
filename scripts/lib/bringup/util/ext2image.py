"""An ext2 image of a ramdisk's entries: the initrd of kernels without initramfs (2.4).

Linux 2.4 has no initramfs: it loads the initrd into /dev/ram0 and mounts it as root
when the command line says root=/dev/ram0.  Its ext2 reads only 128-byte inodes
(revision 1 with `-I 128`), and it has no devtmpfs, so /dev/console and the other
nodes live in the image.  `mke2fs -d` copies a staging directory (no root needed),
and `debugfs -w` then makes the device nodes and gives every inode uid/gid 0 and the
entry's mode, so the image does not depend on who builds it or on the umask.  Times
are fixed (2000-01-01, the instruction clock's RTC base) so the same entries give
the same image.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

from bringup.errors import BringupError
from bringup.util import cpio

FIXED_TIME = 946684800  # 2000-01-01T00:00:00Z
UUID = "b0000000-0000-4000-8000-000000000024"  # a fixed UUID and directory hash seed: reproducible images
# ext2 as 2.4 reads it: revision 1, 128-byte inodes, 1 KiB blocks, none of the later features
MKE2FS_FEATURES = "^resize_inode,^dir_index,^ext_attr,^large_file,^metadata_csum,^64bit,^huge_file,^dir_nlink"


def size_kib(entries: list[cpio.Entry]) -> int:
    """Blocks (KiB) enough for the entries: their data in whole blocks, an inode and a
    directory slot each, a quarter more for block maps and indirect blocks, 1 MiB spare."""
    data = sum(-(-len(e.data) // 1024) for e in entries if stat.S_ISREG(e.mode))
    return int((data + len(entries)) * 1.25) + 1024


def debugfs_script(entries: list[cpio.Entry]) -> str:
    """debugfs commands: device nodes made, then every inode owned by root with the
    entry's mode (mke2fs -d copied the staging files' owner), then the fixed times, last,
    because debugfs stamps what it changes with the clock (a directory's too, when a node
    is made in it)."""
    nodes, owners, times = [], [], []
    stamp = ("atime", "ctime", "mtime")
    named = {e.path.strip("/") for e in entries}
    implied = {"/".join(p.split("/")[:i]) for p in named for i in range(1, p.count("/") + 1)} - named
    everything = list(entries) + [cpio.directory(d) for d in sorted(implied)] + [cpio.directory("lost+found", 0o700)]
    for e in sorted(everything, key=lambda e: e.path):
        path = "/" + e.path.strip("/")
        if stat.S_ISCHR(e.mode) or stat.S_ISBLK(e.mode):
            parent, name = path.rsplit("/", 1)
            kind = "c" if stat.S_ISCHR(e.mode) else "b"
            nodes += [f"cd {parent or '/'}", f"mknod {name} {kind} {e.rdev[0]} {e.rdev[1]}", "cd /"]
        owners += [f"sif {path} uid 0", f"sif {path} gid 0"]
        if not stat.S_ISLNK(e.mode):
            owners.append(f"sif {path} mode 0{e.mode:o}")
        times += [f"sif {path} {field} @{FIXED_TIME}" for field in stamp]
    owners += ["sif / uid 0", "sif / gid 0"]
    times += [f"sif / {field} @{FIXED_TIME}" for field in stamp]
    return "\n".join(nodes + owners + times) + "\n"


def _check_path(p: str) -> None:
    if any(c in p for c in " \t\n\"'\\") or ".." in p.split("/"):
        raise BringupError(f"ext2 image: entry {p!r}: a name debugfs cannot take (space, quote, backslash or ..)")


def _stage(entries: list[cpio.Entry], root: Path) -> None:
    for e in sorted(entries, key=lambda e: e.path.count("/")):
        rel = e.path.strip("/")
        if not rel:
            continue
        _check_path(rel)
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if stat.S_ISDIR(e.mode):
            p.mkdir(exist_ok=True)
        elif stat.S_ISREG(e.mode):
            p.write_bytes(e.data)
            os.chmod(p, stat.S_IMODE(e.mode))
        elif stat.S_ISLNK(e.mode):
            p.symlink_to(e.data.decode())
    for dirpath, dirnames, filenames in os.walk(root, topdown=False):
        for n in filenames + dirnames:
            os.utime(Path(dirpath) / n, (FIXED_TIME, FIXED_TIME), follow_symlinks=False)
    os.utime(root, (FIXED_TIME, FIXED_TIME))


def write(entries: list[cpio.Entry], out: Path) -> int:
    """Write the image to out (atomically); returns its size in bytes."""
    for tool in ("mke2fs", "debugfs"):
        if shutil.which(tool) is None and not Path(f"/usr/sbin/{tool}").exists() and not Path(f"/sbin/{tool}").exists():
            raise BringupError(f"an ext2 initrd needs {tool}: install Debian package e2fsprogs (make deps does)")
    env = dict(os.environ, E2FSPROGS_FAKE_TIME=str(FIXED_TIME), SOURCE_DATE_EPOCH=str(FIXED_TIME))
    env["PATH"] = env.get("PATH", "") + ":/usr/sbin:/sbin"
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".ext2-") as tmp:
        root, img = Path(tmp) / "root", Path(tmp) / "image"
        root.mkdir()
        _stage(entries, root)
        argv = ["mke2fs", "-q", "-F", "-t", "ext2", "-r", "1", "-I", "128", "-b", "1024", "-m", "0"]
        argv += ["-O", MKE2FS_FEATURES, "-U", UUID, "-E", f"hash_seed={UUID}", "-d", str(root), str(img)]
        p = subprocess.run([*argv, str(size_kib(entries))], capture_output=True, text=True, env=env)
        if p.returncode != 0:
            raise BringupError(f"ext2 initrd {out}: mke2fs failed: {(p.stderr or p.stdout).strip()[-300:]}")
        script = Path(tmp) / "debugfs.cmds"
        script.write_text(debugfs_script(entries))
        p = subprocess.run(["debugfs", "-w", "-f", str(script), str(img)], capture_output=True, text=True, env=env)
        bad = [ln for ln in p.stderr.splitlines() if ln.strip() and not ln.startswith(("debugfs ", "Allocated inode"))]
        if p.returncode != 0 or bad:
            raise BringupError(f"ext2 initrd {out}: debugfs: {(bad or [p.stderr.strip()])[-1][-300:]}")
        img.replace(out)
    return out.stat().st_size
