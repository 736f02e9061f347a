"""The kernel's version banner: which kernel a console shows booting, and which
kernel an image is.

Every kernel prints its `linux_banner` early:

    Linux version 6.12.95 (bringup@bringup) (arm-linux-gnueabihf-gcc (Debian 12.2.0-14) 12.2.0,
        GNU ld (GNU Binutils for Debian) 2.40) #1 SMP Thu Jan  1 00:00:00 UTC 2026

(one line): the release, the builder (KBUILD_BUILD_USER@KBUILD_BUILD_HOST), the
compiler and the version string (#build-number, flags, KBUILD_BUILD_TIMESTAMP).
The same text is a NUL-terminated string in vmlinux, so the banner of the
kernel that was built can be read from the build's vmlinux, and compared with
the line the console shows: a board that boots something else (the kernel in
its flash, an old file on the TFTP server) is caught by `mismatch`.
"""

from __future__ import annotations

import mmap
import re
from dataclasses import dataclass
from pathlib import Path

# release: no spaces, no printf conversions (linux_proc_banner is "%s version %s ...")
_BANNER = re.compile(
    r"Linux version (?P<release>[^\s%()]+) \((?P<by>[^()\s]*)\)"
    r"(?: \((?P<compiler>.*)\))? (?P<version>#\S*.*?)\s*$"
)
_MARK = b"Linux version "


@dataclass(frozen=True)
class Banner:
    release: str
    by: str  # user@host
    compiler: str | None  # None when the banner has none (2.4 wording without it, a test double)
    version: str  # '#1 SMP Thu Jan  1 00:00:00 UTC 2026', whitespace kept as the kernel prints it

    def short(self) -> str:
        """release, builder and version string: what tells two builds apart to a reader."""
        return f"{self.release} ({self.by}) {self.version}"

    def full(self) -> str:
        return f"{self.release} ({self.by}) ({self.compiler}) {self.version}" if self.compiler else self.short()


def parse(line: str) -> Banner | None:
    """The banner in one console line (a printk time or other prefix before it is
    fine), or None when the line is not a version banner."""
    i = line.find("Linux version ")
    if i < 0:
        return None
    m = _BANNER.match(line[i:].rstrip("\r\n"))
    if m is None:
        return None
    return Banner(m["release"], m["by"], m["compiler"], m["version"])


def from_image(data: bytes | mmap.mmap) -> Banner | None:
    """The linux_banner of an uncompressed kernel image (vmlinux), or None.

    An image may hold more than one: since 6.1, init/version.o keeps a banner
    whose version string has no build number ('# Thu Jan ...'), and the one
    the kernel prints is linked in from init/version-timestamp.o ('#1 Thu
    Jan ...').  The first with a build number wins, else the first."""
    found: list[Banner] = []
    start = 0
    while True:
        i = data.find(_MARK, start)
        if i < 0:
            break
        start = i + 1
        end = data.find(b"\0", i, i + 4096)
        if end <= i:
            continue
        text = bytes(data[i:end]).decode("latin-1")
        if "\n" in text.rstrip("\n"):  # one line only
            continue
        b = parse(text)
        if b is None:
            continue
        if re.match(r"#\d", b.version):
            return b
        found.append(b)
    return found[0] if found else None


def from_file(path: Path) -> Banner | None:
    """from_image() of a file, read through mmap (vmlinux may be hundreds of MB)."""
    with open(path, "rb") as f:
        try:
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
                return from_image(m)
        except ValueError:  # an empty file cannot be mapped
            return None


def mismatch(booted: Banner, release: str | None, built: Banner | None) -> str | None:
    """Why `booted` is not the kernel that was built, in one line, or None.
    `built` is the built vmlinux's banner (compared whole: release, builder,
    compiler and version string); without one, only the release is compared."""
    if built is not None:
        same = (booted.release, booted.by, _ws(booted.version)) == (built.release, built.by, _ws(built.version))
        if same and (booted.compiler is None or built.compiler is None or _ws(booted.compiler) == _ws(built.compiler)):
            return None
        if same:  # only the compiler differs: say it
            return f"booted kernel {booted.full()}, expected {built.full()}"
        return f"booted kernel {booted.short()}, expected {built.short()}"
    if release is not None and booted.release != release:
        return f"booted kernel {booted.release}, expected {release}"
    return None


def _ws(s: str) -> str:
    return " ".join(s.split())
