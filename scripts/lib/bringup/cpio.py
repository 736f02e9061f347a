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
    path: str             # inside the archive, no leading '/'
    mode: int             # full st_mode (type | permissions)
    data: bytes = b""     # file content, or the target of a symlink
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
