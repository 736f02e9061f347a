"""Is the kernel that boots the one we built?  KernelCheck reads the build's
banner (the 'Linux version' string in its vmlinux: release, builder, compiler,
version string with bringup's fixed KBUILD_BUILD_TIMESTAMP) and checks the
first banner line the console shows against it.  A board that boots the
kernel in its flash, or a stale file on a TFTP server, fails the run with
"booted kernel X, expected Y".  Pure: it sees console lines, never the target."""

from __future__ import annotations

from pathlib import Path

from bringup.parse import banner
from bringup.records import Build

_CACHE: dict[tuple[str, int, int], banner.Banner | None] = {}


def built_banner(build: Build, recdir: Path) -> banner.Banner | None:
    """The banner of the build's vmlinux (None when the record lists none, or it has no banner)."""
    rel = build.artifacts.get("vmlinux")
    if not rel:
        return None
    f = Path(recdir) / rel
    try:
        st = f.stat()
    except OSError:
        return None
    key = (str(f), st.st_mtime_ns, st.st_size)
    if key not in _CACHE:
        _CACHE[key] = banner.from_file(f)
    return _CACHE[key]


class KernelCheck:
    """Feed it console lines; the first version banner is compared, once."""

    def __init__(self, release: str | None, built: banner.Banner | None):
        self.release, self.built = release, built
        self.seen: banner.Banner | None = None

    @classmethod
    def for_build(cls, build: Build, recdir: Path) -> KernelCheck:
        return cls(build.kernelrelease, built_banner(build, recdir))

    def expected(self) -> str | None:
        return self.built.full() if self.built else self.release

    def feed(self, text: str) -> str | None:
        """Why the booted kernel is not the built one (one line), or None."""
        if self.seen is not None:
            return None
        b = banner.parse(text)
        if b is None:
            return None
        self.seen = b
        return banner.mismatch(b, self.release, self.built)
