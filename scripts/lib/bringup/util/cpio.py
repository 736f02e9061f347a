"""A 'newc' cpio writer (what the kernel's initramfs unpacker reads).

Pure Python so that device nodes (/dev/console) go into the archive without
root, and deterministic: fixed mtimes, sorted entries, uid/gid 0."""

from __future__ import annotations

import gzip
import io
import stat
from dataclasses import dataclass


@dataclass
class Entry:
    path: str  # inside the archive, no leading '/'
    mode: int  # full st_mode (type | permissions)
    data: bytes = b""  # file content, or the target of a symlink
    rdev: tuple = (0, 0)  # (major, minor) for device nodes


def file(path, data: bytes, perm=0o644) -> Entry:
    return Entry(path, stat.S_IFREG | perm, data)


def directory(path, perm=0o755) -> Entry:
    return Entry(path, stat.S_IFDIR | perm)


def symlink(path, target: str) -> Entry:
    return Entry(path, stat.S_IFLNK | 0o777, target.encode())


def chardev(path, major, minor, perm=0o600) -> Entry:
    return Entry(path, stat.S_IFCHR | perm, rdev=(major, minor))


def _header(ino: int, e: Entry, name: bytes) -> bytes:
    nlink = 2 if stat.S_ISDIR(e.mode) else 1
    fields = [ino, e.mode, 0, 0, nlink, 0, len(e.data), 0, 0, e.rdev[0], e.rdev[1], len(name) + 1, 0]
    return b"070701" + b"".join(b"%08X" % f for f in fields)


def _pad(n: int) -> bytes:
    return b"\0" * ((4 - n % 4) % 4)


def archive(entries: list[Entry]) -> bytes:
    """The cpio bytes; parents come before children (entries are sorted by path)."""
    out = io.BytesIO()
    seen = set()
    for ino, e in enumerate(sorted(entries, key=lambda e: e.path), start=1):
        path = e.path.strip("/")
        if not path or path in seen:
            raise ValueError(f"cpio: bad or duplicate path {e.path!r}")
        seen.add(path)
        name = path.encode()
        hdr = _header(ino, e, name)
        out.write(hdr + name + b"\0")
        out.write(_pad(len(hdr) + len(name) + 1))
        out.write(e.data)
        out.write(_pad(len(e.data)))
    trailer = Entry("TRAILER!!!", 0)
    name = b"TRAILER!!!"
    hdr = _header(0, trailer, name)
    out.write(hdr + name + b"\0" + _pad(len(hdr) + len(name) + 1))
    return out.getvalue()


def gzipped(data: bytes) -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, compresslevel=9) as g:
        g.write(data)
    return buf.getvalue()


def read(data: bytes) -> list[Entry]:
    """Parse 'newc' cpio bytes (gzip-compressed or not) back into entries."""
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    out: list[Entry] = []
    pos = 0
    while True:
        if data[pos : pos + 6] not in (b"070701", b"070702"):
            raise ValueError(f"cpio: bad header magic at offset {pos}")
        f = [int(data[pos + 6 + 8 * i : pos + 14 + 8 * i], 16) for i in range(13)]
        mode, size, rmaj, rmin, namesize = f[1], f[6], f[9], f[10], f[11]
        start = pos + 110
        name = data[start : start + namesize - 1].decode()
        pos = start + namesize
        pos += (4 - pos % 4) % 4
        body = data[pos : pos + size]
        pos += size
        pos += (4 - pos % 4) % 4
        if name == "TRAILER!!!":
            return out
        out.append(Entry(name, mode, body, (rmaj, rmin)))


def unpack(entries: list[Entry], dest, devices: bool | None = None) -> int:
    """Write entries into a directory (a root filesystem for NFS export).
    Paths that would escape dest are refused; device nodes are made only when
    we may (root), else left to the guest's devtmpfs.  Returns files written."""
    import os
    from pathlib import Path

    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    root = os.path.realpath(dest)
    if devices is None:
        devices = os.geteuid() == 0
    n = 0
    for e in sorted(entries, key=lambda e: e.path):
        rel = e.path.strip("/")
        target = os.path.normpath(os.path.join(root, rel))
        parent = os.path.realpath(os.path.dirname(target))  # through symlinks made so far
        if not target.startswith(root + os.sep) or not (parent == root or parent.startswith(root + os.sep)):
            raise ValueError(f"cpio: {e.path!r} escapes the target directory")
        perm = stat.S_IMODE(e.mode)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if stat.S_ISDIR(e.mode):
            os.makedirs(target, exist_ok=True)
            os.chmod(target, perm)
        elif stat.S_ISLNK(e.mode):
            os.symlink(e.data.decode(), target)
        elif stat.S_ISREG(e.mode):
            with open(target, "wb") as fh:
                fh.write(e.data)
            os.chmod(target, perm)
        elif stat.S_ISCHR(e.mode) or stat.S_ISBLK(e.mode):
            if devices:
                os.mknod(target, e.mode, os.makedev(*e.rdev))
            else:
                continue
        n += 1
    return n
