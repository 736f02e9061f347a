"""The ramdisk: busybox for the board's userspace architecture, the files in
rootfs-overlay/, /dev/console, packed as a gzip'd newc cpio.

Result: logs/<board>/rootfs/<name>.cpio.gz and <name>.json (what is inside,
where busybox came from, a content key).  Rebuilt only when that key changes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

from . import cpio, paths, records
from .aptprivate import PrivateApt
from .board import Board
from .errors import BringupError

ROOTFS_SCHEMA = "bringup.rootfs/1"
USERSPACE_SUITE = "bookworm"

# busybox applets the ramdisk links; the scripts in rootfs-overlay/ use only these
APPLETS = """sh ash cat chmod cp cut date dd df dmesg echo env false free grep head hostname
id ifconfig init ip kill ln login ls mkdir mknod mount mv poweroff printf ps reboot rm sed seq
setsid sleep sort sync tail tee test time top touch tr true umount uname uptime wc getty halt
awk mktemp basename dirname expr xargs which [""".split()
SBIN = {"init", "getty", "ifconfig", "ip", "poweroff", "reboot", "halt", "mknod"}


def busybox_for(arch: str, cache: Path, say=print) -> tuple[Path, str]:
    """Debian's static busybox for a Debian architecture: (binary, version)."""
    apt = PrivateApt(cache / "apt", USERSPACE_SUITE, architectures=tuple(dict.fromkeys(("amd64", arch))))
    pkg = f"busybox-static:{arch}"
    try:
        version = apt.candidate(pkg)
    except BringupError as e:
        raise BringupError(f"no busybox for userspace arch {arch!r}: {e}")
    if version is None:
        raise BringupError(f"no busybox-static for userspace arch {arch!r} in Debian {USERSPACE_SUITE} "
                           f"(not a Debian architecture): give the board a busybox binary")
    out = cache / "userspace" / arch / f"busybox-{version.replace(':', '_')}"
    if not out.exists():
        deb = apt.download(pkg)
        say(f"  unpacking busybox {version} ({arch})")
        data = _member_of_deb(deb, "bin/busybox")
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.chmod(0o755)
        tmp.rename(out)
    return out, version


def _member_of_deb(deb: Path, member: str) -> bytes:
    p = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE)
    data = None
    with tarfile.open(fileobj=p.stdout, mode="r|") as tf:
        for m in tf:
            if m.name.lstrip("./") == member and m.isfile():
                data = tf.extractfile(m).read()
    p.wait()
    if data is None:
        raise BringupError(f"{deb}: has no {member}")
    return data


def overlay_entries(overlay: Path) -> list[cpio.Entry]:
    entries = []
    for dirpath, dirnames, filenames in os.walk(overlay):
        dirnames.sort()
        rel = Path(dirpath).relative_to(overlay)
        if str(rel) != ".":
            entries.append(cpio.directory(str(rel)))
        for f in sorted(filenames):
            if f == "README.md" and str(rel) == ".":
                continue
            src = Path(dirpath) / f
            path = str(rel / f) if str(rel) != "." else f
            if src.is_symlink():
                entries.append(cpio.symlink(path, os.readlink(src)))
            else:
                perm = 0o755 if os.access(src, os.X_OK) else 0o644
                entries.append(cpio.file(path, src.read_bytes(), perm))
    return entries


def base_entries(busybox: bytes) -> list[cpio.Entry]:
    e = [cpio.directory(d) for d in ("bin", "sbin", "usr", "usr/bin", "usr/sbin", "dev", "proc",
                                       "sys", "tmp", "run", "root", "etc", "etc/init.d", "var")]
    e.append(cpio.file("bin/busybox", busybox, 0o755))
    for a in APPLETS:
        where = "sbin" if a in SBIN else "bin"
        e.append(cpio.symlink(f"{where}/{a}", "/bin/busybox"))
    e.append(cpio.symlink("init", "/bin/busybox"))        # the kernel runs /init: busybox init
    e.append(cpio.chardev("dev/console", 5, 1))
    e.append(cpio.chardev("dev/null", 1, 3, 0o666))
    return e


def build(board: Board, logs: Path, cache: Path, extra: list[cpio.Entry] = (), name: str = "initramfs",
          extra_key: dict | None = None, say=print) -> dict:
    """Build (or reuse) the board's ramdisk; returns its record."""
    arch = board.arch.debian_arch
    bb, bb_version = busybox_for(arch, cache, say)
    entries = _dedupe(base_entries(bb.read_bytes()) + overlay_entries(paths.OVERLAY) + list(extra))
    data = cpio.gzipped(cpio.archive(entries))
    outdir = Path(logs) / board.name / "rootfs"
    out = outdir / f"{name}.cpio.gz"
    digest = hashlib.sha256(data).hexdigest()
    recf = outdir / f"{name}.json"
    if out.exists() and recf.exists():
        try:
            old = records.read_json(recf)
            if old.get("sha256") == digest:
                return old
        except BringupError:
            pass
    outdir.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(out)
    rec = {
        "schema": ROOTFS_SCHEMA, "board": board.name, "name": name, "file": out.name, "bytes": len(data),
        "sha256": digest, "userspace_arch": arch,
        "busybox": {"source": f"debian {USERSPACE_SUITE} busybox-static:{arch}", "version": bb_version},
        "files": sorted(e.path for e in entries), "extra": extra_key or {},
    }
    records.write_json(recf, rec)
    say(f"  ramdisk {paths.rel(out)}: {len(data)} bytes, busybox {bb_version} ({arch})")
    return rec


def _dedupe(entries: list[cpio.Entry]) -> list[cpio.Entry]:
    """Later entries win (overlay over base, extras over both)."""
    by_path = {}
    for e in entries:
        by_path[e.path.strip("/")] = e
    return list(by_path.values())
