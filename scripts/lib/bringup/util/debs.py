"""Reading the files inside a Debian binary package (.deb).

`dpkg-deb --fsys-tarfile` streams the package's data tarball; the files come
out one by one, in archive order, without unpacking the package to disk.
Every failure (no dpkg-deb, not a .deb, a truncated one) is one BringupError
that names the .deb."""

from __future__ import annotations

import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Generator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from bringup.errors import BringupError


def path_in_deb(name: str) -> str:
    """A tar path as the package means it: "./usr/bin/x" -> "usr/bin/x", "./" -> ""."""
    name = name.removeprefix("./").lstrip("/")
    return "" if name == "." else name


@dataclass
class Member:
    """One entry of a .deb's data tarball; its content can be read only while
    `members()` stands on it."""

    deb: Path
    name: str  # path inside the package, without the leading "./"
    info: tarfile.TarInfo
    _tar: tarfile.TarFile

    def read(self) -> bytes:
        """A regular file's content."""
        with self._open() as f:
            try:
                return f.read()
            except (tarfile.TarError, EOFError, OSError) as e:
                raise BringupError(f"{self.deb}: cannot read {self.name}: {e}") from e

    def copy_to(self, dest: Path) -> None:
        """A regular file's content into dest, streamed (for large members)."""
        with self._open() as f, open(dest, "wb") as out:
            try:
                shutil.copyfileobj(f, out, 1 << 20)
            except (tarfile.TarError, EOFError) as e:
                raise BringupError(f"{self.deb}: cannot read {self.name}: {e}") from e

    def _open(self) -> IO[bytes]:
        f = self._tar.extractfile(self.info) if self.info.isfile() else None
        if f is None:
            raise BringupError(f"{self.deb}: {self.name} is not a regular file")
        return f


def members(deb: Path) -> Generator[Member, None, None]:
    """The entries of a .deb's data tarball, in archive order.

    Stopping early (break, or closing the iterator) stops dpkg-deb; going to
    the end also checks that dpkg-deb succeeded."""
    deb = Path(deb)
    with tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE, stderr=err)
        except OSError as e:
            raise BringupError(f"{deb}: cannot run dpkg-deb: {e.strerror} (install Debian package dpkg)") from e
        assert proc.stdout is not None
        finished = False
        try:
            try:
                with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
                    for info in tar:
                        yield Member(deb, path_in_deb(info.name), info, tar)
                while proc.stdout.read(1 << 16):  # the tar's record padding
                    pass
            except (tarfile.TarError, EOFError) as e:
                proc.stdout.close()  # a dpkg-deb still writing gets SIGPIPE
                proc.wait()
                raise BringupError(f"{deb}: not a readable .deb: {_why(err, proc.returncode, e)}") from e
            finished = True
        finally:
            if not finished and proc.poll() is None:
                proc.kill()  # stopped early: nobody reads the rest
            proc.stdout.close()
            proc.wait()
        if proc.returncode != 0:
            raise BringupError(f"{deb}: dpkg-deb --fsys-tarfile failed: {_why(err, proc.returncode)}")


def _why(err: IO[bytes], returncode: int | None, exc: Exception | None = None) -> str:
    """dpkg-deb's own words (first line of its stderr), else the tar error, else the exit status."""
    err.seek(0)
    lines = [x.strip() for x in err.read().decode("utf-8", errors="replace").splitlines() if x.strip()]
    if lines:
        return lines[0]
    if exc is not None:
        return str(exc) or type(exc).__name__
    return f"dpkg-deb exit {returncode}"


def read(deb: Path, member: str) -> bytes:
    """The content of one regular file of a .deb, e.g. read(deb, "bin/busybox")."""
    with closing(members(deb)) as ms:
        for m in ms:
            if m.name == member and m.info.isfile():
                return m.read()
    raise BringupError(f"{deb}: has no {member}")


def extract(deb: Path, pattern: str, dest_dir: Path, what: str = "") -> Path:
    """The first regular file of a .deb whose whole path matches the regular
    expression `pattern`, copied to dest_dir under its own file name.
    `what` names it in the error when there is none (default: the pattern)."""
    rx = re.compile(pattern)
    with closing(members(deb)) as ms:
        for m in ms:
            if m.info.isfile() and rx.fullmatch(m.name):
                out = Path(dest_dir) / Path(m.name).name
                m.copy_to(out)
                return out
    raise BringupError(f"{deb}: no {what or f'file matching {pattern}'} inside")
