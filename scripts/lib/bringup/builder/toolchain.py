"""The cross toolchain for a kernel: find it, name its version, or say which
Debian package provides it."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass

from bringup.errors import BringupError
from bringup.model.board import Arch


@dataclass
class Toolchain:
    cross_compile: str  # the prefix, possibly an absolute path prefix
    gcc: str  # resolved path of <prefix>gcc
    version: str  # first line of gcc --version
    ccache: str | None  # path of ccache, when used

    def cc(self, flags: list[str] | tuple[str, ...] = ()) -> str:
        """CC= for make: ccache-wrapped when ccache is there, with `flags` added."""
        name = f"{self.cross_compile}gcc"
        return " ".join([self.ccache, name, *flags] if self.ccache else [name, *flags])

    @property
    def major(self) -> int | None:
        return gcc_major(self.version)


def gcc_major(version_line: str) -> int | None:
    """The major version from `gcc --version`'s first line, 'NAME (PKGVERSION) VERSION ...':
    'gcc (Debian 12.2.0-14) 12.2.0' -> 12, 'ppc_8xx-gcc (GCC) 3.3.3 (DENX ELDK 3.1.1 3.3.3-9)' -> 3."""
    m = re.search(r"\)\s+(\d+)\.\d+", version_line) or re.search(r"(?<![\w.])(\d+)\.\d+", version_line)
    return int(m.group(1)) if m else None


def find(cross_compile: str, arch: Arch, use_ccache: bool = True) -> Toolchain:
    gcc = shutil.which(f"{cross_compile}gcc")
    if gcc is None:
        pkg = arch.toolchain_packages.get(cross_compile)
        if pkg:
            hint = f"install Debian package {pkg} (make deps does)"
        else:
            hint = (
                "no Debian package provides it: point cross_compile in the board file (or "
                "CROSS_COMPILE=) at your own toolchain's prefix, e.g. /opt/eldk/usr/bin/ppc_8xx-"
            )
        raise BringupError(f"toolchain {cross_compile}gcc not found for arch {arch.name}: {hint}")
    try:
        out = subprocess.run([gcc, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BringupError(f"toolchain {gcc} does not run: {e}") from e
    version = out.splitlines()[0].strip() if out else "unknown"
    ccache = shutil.which("ccache") if use_ccache else None
    return Toolchain(cross_compile=cross_compile, gcc=gcc, version=version, ccache=ccache)
