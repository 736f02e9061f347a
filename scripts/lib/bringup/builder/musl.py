"""A musl C library toolchain for static userspace programs that run on every era.

Debian 12's static glibc (busybox-static, lmbench) dies on Linux 2.4 with SIGSEGV:
its start-up sets up thread-local storage with `set_thread_area`, which 2.4 lacks
(dietlibc does the same and dies too).  musl's i386 start-up falls back to
`modify_ldt` when `set_thread_area` fails, and its time and stat calls fall back
to the older system calls, so a static musl program runs on 2.4 as on 6.12
(docs/eras.md, "User space on every era").

This module makes, once per (Debian architecture, musl version), a compiler prefix
that builds such programs: Debian's `musl-dev:<arch>` (static libraries, start
files, headers; fetched through the private apt configuration and unpacked, never
installed), the kernel's user-space headers of Debian's cross toolchain
(`/usr/<gnu triplet>/include/{linux,asm,...}`, which musl does not carry), a gcc
spec file that points the GNU cross compiler at both, and `<prefix>gcc`/`ar`/...
wrappers.  The result is `<cache>/userspace/<arch>/musl-<version>/bin/<triplet>-`,
a CROSS_COMPILE prefix for busybox, mem_eat and lmbench alike.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bringup.errors import BringupError
from bringup.util.aptprivate import PrivateApt
from bringup.util.lock import exclusive

SUITE = "bookworm"
RECIPE = 1  # bump when the layout below changes: old toolchains are then made again
# the kernel's user-space header directories of the GNU cross toolchain that musl
# programs include (<linux/...>, <asm/...>); musl itself ships none of them
KERNEL_HEADER_DIRS = ("linux", "asm", "asm-generic", "mtd", "scsi", "sound", "video", "drm", "misc", "rdma")
TOOLS = ("ar", "as", "ld", "nm", "objcopy", "objdump", "ranlib", "readelf", "size", "strip", "strings")


@dataclass(frozen=True)
class Musl:
    prefix: str  # CROSS_COMPILE: <dir>/bin/<triplet>-
    version: str  # Debian's musl-dev version
    arch: str  # Debian architecture

    @property
    def cc(self) -> str:
        return f"{self.prefix}gcc"

    def describe(self) -> str:
        return f"musl {self.version} (Debian {SUITE} musl-dev:{self.arch}), static"


def spec_text(root: Path, libdir: Path, incdir: Path, kernel_headers: Path) -> str:
    """A gcc spec file (like musl-gcc.specs) for static, non-PIE programs: musl's headers
    and the kernel's instead of glibc's, musl's start files and libc.a, libgcc."""
    inc = f"-nostdinc -isystem {incdir} -isystem {kernel_headers} -isystem include%s"
    return (
        "%rename cpp_options old_cpp_options\n\n"
        f"*cpp_options:\n{inc} %(old_cpp_options)\n\n"
        f"*cc1:\n%(cc1_cpu) {inc}\n\n"
        f"*link_libgcc:\n-L{libdir} -L .%s\n\n"
        "*libgcc:\nlibgcc.a%s %:if-exists(libgcc_eh.a%s)\n\n"
        f"*startfile:\n{libdir}/crt1.o {libdir}/crti.o crtbegin.o%s\n\n"
        f"*endfile:\ncrtend.o%s {libdir}/crtn.o\n\n"
        "*link:\n-nostdlib -static\n\n"
    )


def toolchain(arch: str, gnu_prefix: str, cache: Path, say=print) -> Musl:
    """The musl prefix for Debian architecture `arch`, built on the GNU cross compiler
    `gnu_prefix` (e.g. "i686-linux-gnu-"); made once and reused."""
    gcc = shutil.which(f"{gnu_prefix}gcc")
    if gcc is None:
        raise BringupError(f"a musl userspace for {arch} needs {gnu_prefix}gcc (make deps installs it)")
    apt = PrivateApt(Path(cache) / "apt", SUITE, architectures=tuple(dict.fromkeys(("amd64", arch))))
    pkg = f"musl-dev:{arch}"
    try:
        version = apt.candidate(pkg)
    except BringupError as e:
        raise BringupError(f"a musl userspace for {arch}: {e}") from None
    if version is None:
        raise BringupError(f"a musl userspace for {arch}: Debian {SUITE} has no {pkg}")
    triplet = gnu_prefix.rstrip("-").replace("-gnu", "-musl")
    dest = Path(cache) / "userspace" / arch / f"musl-{version.replace(':', '_')}-r{RECIPE}"
    prefix = dest / "bin" / f"{triplet}-"
    found = Musl(prefix=str(prefix), version=version, arch=arch)
    if not (dest / ".complete").exists():
        dest.parent.mkdir(parents=True, exist_ok=True)
        with exclusive(dest.with_name(dest.name + ".lock"), f"musl {version} for {arch}", say):  # a shared cache
            if not (dest / ".complete").exists():
                _unpack(apt, pkg, version, dest, gnu_prefix, triplet, say)
    return found


def _unpack(apt: PrivateApt, pkg: str, version: str, dest: Path, gnu_prefix: str, triplet: str, say) -> None:
    """toolchain()'s work, under its lock: the prefix made in a directory beside `dest`
    and renamed into place (.complete written last)."""
    say(f"  musl {version} for {dest.parent.name}: unpacking Debian's {pkg} for a static userspace")
    deb = apt.download(pkg)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".part-", dir=dest.parent))
    try:
        _make(deb, tmp, dest, gnu_prefix, triplet)
        (tmp / ".complete").write_text(f"{pkg} {version}\n")
        if dest.exists():
            shutil.rmtree(dest)  # an incomplete leftover (.complete is written last)
        tmp.rename(dest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _make(deb: Path, tmp: Path, dest: Path, gnu_prefix: str, triplet: str) -> None:
    """Unpack the .deb into tmp/root and write the spec, the header links and the
    wrappers; paths inside name `dest` (where tmp is renamed to)."""
    root = tmp / "root"
    p = subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], capture_output=True, text=True)
    if p.returncode != 0:
        raise BringupError(f"{deb}: dpkg-deb -x failed: {p.stderr.strip()[-300:]}")
    libs = sorted(root.glob("usr/lib/*-linux-musl*/libc.a"))
    incs = sorted(d for d in root.glob("usr/include/*-linux-musl*") if (d / "stdio.h").is_file())
    if not libs or not incs:
        raise BringupError(f"{deb}: no usr/lib/*-linux-musl*/libc.a or usr/include/*-linux-musl*/stdio.h inside")
    final_root = dest / "root"
    libdir = final_root / libs[0].parent.relative_to(root)
    incdir = final_root / incs[0].relative_to(root)
    gnu_inc = Path("/usr") / gnu_prefix.rstrip("-") / "include"
    khdr = tmp / "kernel-headers"
    khdr.mkdir()
    for d in KERNEL_HEADER_DIRS:
        if (gnu_inc / d).is_dir():
            (khdr / d).symlink_to(gnu_inc / d)
    if not (khdr / "linux").exists():
        raise BringupError(f"a musl userspace needs the kernel headers of {gnu_prefix}gcc: no {gnu_inc}/linux")
    (tmp / "musl.specs").write_text(spec_text(final_root, libdir, incdir, dest / "kernel-headers"))
    bindir = tmp / "bin"
    bindir.mkdir()
    for tool in TOOLS:
        real = shutil.which(f"{gnu_prefix}{tool}")
        if real:
            (bindir / f"{triplet}-{tool}").symlink_to(real)
    gcc = shutil.which(f"{gnu_prefix}gcc")
    wrapper = f'#!/bin/sh\nexec {gcc} -specs={dest / "musl.specs"} -static -no-pie -fno-pie "$@"\n'
    for name in ("gcc", "cc"):
        w = bindir / f"{triplet}-{name}"
        w.write_text(wrapper)
        os.chmod(w, 0o755)
