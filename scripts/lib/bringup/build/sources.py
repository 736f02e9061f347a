"""Kernel sources: fetch once, verify, extract safely, return a tree.

Kinds (a board's `source` table):
  debian  = "linux-source-6.1", suite = "bookworm"   private apt download
  url     = "https://.../linux-2.6.11.7.tar.bz2", sha256 = "..."
  tarball = "/path/linux.tar.xz" (sha256 optional)
  path    = "/path/to/linux"                        used in place, never modified
"""

from __future__ import annotations

import hashlib
import lzma
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import urllib.request
import zlib
from dataclasses import dataclass
from pathlib import Path

from bringup.errors import BringupError
from bringup.model.board import SourceSpec
from bringup.util import debs
from bringup.util.aptprivate import PrivateApt


@dataclass
class SourceTree:
    path: Path  # the kernel tree (top-level Makefile inside)
    kind: str
    identity: str  # content identity: changes when the source changes; "" = unknown
    version: str  # from the Makefile: 6.1.192, 2.4.25, ...
    detail: dict


def prepare(source: SourceSpec, cache: Path, log=print) -> SourceTree:
    if source.debian:
        return _debian(source, cache, log)
    if source.url:
        f = fetch_url(source.url, source.sha256, cache / "downloads", log)
        return _from_tarball(f, source.sha256, cache, {"kind": "url", "url": source.url}, log)
    if source.tarball:
        f = Path(source.tarball).expanduser()
        if not f.is_file():
            raise BringupError(f"source tarball {f}: no such file")
        digest = sha256_file(f)
        if source.sha256 and digest != source.sha256.lower():
            raise BringupError(f"source tarball {f}: sha256 mismatch: expected {source.sha256}, got {digest}")
        return _from_tarball(f, digest, cache, {"kind": "tarball", "tarball": str(f)}, log)
    if source.path:
        p = Path(source.path).expanduser()
        if not (p / "Makefile").is_file():
            raise BringupError(f"source path {p}: not a kernel tree (no Makefile)")
        return SourceTree(
            path=p,
            kind="path",
            identity=_tree_identity(p),
            version=kernel_version(p),
            detail={"kind": "path", "path": str(p)},
        )
    raise BringupError("source: give one of debian, url, tarball, path")


def _debian(source, cache, log) -> SourceTree:
    pkg, suite = source.debian, source.suite
    apt = PrivateApt(cache / "apt", suite)
    version = apt.candidate(pkg)
    if version is None:
        raise BringupError(f"source: Debian package {pkg!r} not found in suite {suite!r}")
    identity = f"debian:{pkg}={version}"
    dest = cache / "src" / _safe_name(f"{pkg}_{version}")
    tree = _single_tree(dest)
    if tree is None:
        log(f"fetching {pkg} {version} ({suite}) through a private apt configuration")
        deb = apt.download(pkg)
        with tempfile.TemporaryDirectory(dir=cache) as tmp:
            inner = _tarball_from_deb(deb, Path(tmp))
            log(f"extracting {inner.name} ({inner.stat().st_size // 2**20} MB)")
            safe_extract(inner, dest)
        tree = _single_tree(dest)
        if tree is None:
            raise BringupError(f"{deb}: the tarball inside does not hold one kernel tree")
    return SourceTree(
        path=tree,
        kind="debian",
        identity=identity,
        version=kernel_version(tree),
        detail={"kind": "debian", "package": pkg, "suite": suite, "package_version": version},
    )


def _tarball_from_deb(deb: Path, tmp: Path) -> Path:
    """The usr/src/linux-source-X.tar.* inside a linux-source .deb."""
    return debs.extract(deb, r"usr/src/linux-source-[^/]+\.tar\.(xz|bz2|gz)", tmp, "usr/src/linux-source-*.tar.*")


def _from_tarball(f: Path, digest: str, cache: Path, detail: dict, log) -> SourceTree:
    dest = cache / "src" / f"tar-{digest[:16]}"
    tree = _single_tree(dest)
    if tree is None:
        log(f"extracting {f.name}")
        safe_extract(f, dest)
        tree = _single_tree(dest)
        if tree is None:
            raise BringupError(f"{f}: does not hold one kernel tree (a top-level directory with a Makefile)")
    detail = dict(detail, sha256=digest)
    return SourceTree(
        path=tree, kind=detail["kind"], identity=f"sha256:{digest}", version=kernel_version(tree), detail=detail
    )


def _single_tree(dest: Path) -> Path | None:
    if not (dest / ".complete").exists():
        return None
    dirs = [d for d in dest.iterdir() if d.is_dir()]
    if len(dirs) == 1 and (dirs[0] / "Makefile").is_file():
        return dirs[0]
    return None


def safe_extract(tarball: Path, dest: Path) -> None:
    """Extract into dest, refusing members that would land outside it.

    Extraction goes to a temporary sibling first and is renamed into place, so
    an interrupted extraction never looks complete."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".part-", dir=dest.parent))
    try:
        with tarfile.open(tarball) as tf:
            for m in tf:
                _check_member(m, tmp, tarball)
                tf.extract(m, tmp, filter="data")
        (tmp / ".complete").touch()
        if dest.exists():
            shutil.rmtree(dest)
        tmp.rename(dest)
    except tarfile.FilterError as e:  # e.g. a chain of symlinks that ends outside the target
        raise BringupError(f"{tarball}: member {e.tarinfo.name!r} would land outside the target; refusing") from e
    except tarfile.TarError as e:
        raise BringupError(f"{tarball}: not a readable tarball: {e}") from e
    except (EOFError, zlib.error, lzma.LZMAError, bz2_errors()) as e:
        raise BringupError(f"{tarball}: truncated or corrupt ({e}); download it again") from e
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def bz2_errors() -> type[Exception]:
    return OSError  # bz2 reports a corrupt stream as OSError ("Invalid data stream")


def _check_member(m: tarfile.TarInfo, root: Path, tarball: Path) -> None:
    name = m.name

    def escapes(target: str, base: Path) -> bool:
        full = os.path.normpath(os.path.join(base, target))
        return not (full == str(root) or full.startswith(str(root) + os.sep))

    if os.path.isabs(name) or escapes(name, root):
        raise BringupError(f"{tarball}: member {name!r} escapes the target directory; refusing to extract")
    if m.issym():
        if os.path.isabs(m.linkname) or escapes(m.linkname, root / os.path.dirname(name)):
            raise BringupError(f"{tarball}: symlink {name!r} -> {m.linkname!r} points outside the target; refusing")
    elif m.islnk():
        if os.path.isabs(m.linkname) or escapes(m.linkname, root):
            raise BringupError(f"{tarball}: hard link {name!r} -> {m.linkname!r} points outside the target; refusing")
    elif not (m.isfile() or m.isdir()):
        raise BringupError(f"{tarball}: member {name!r} is a device or fifo; refusing to extract")


def fetch_url(url: str, sha256: str, downloads: Path, log=print) -> Path:
    """Download once into the cache; verified against sha256 before it is kept."""
    downloads.mkdir(parents=True, exist_ok=True)
    name = _safe_name(url.rstrip("/").rsplit("/", 1)[-1]) or "download"
    final = downloads / f"{sha256[:16]}-{name}"
    if final.exists() and sha256_file(final) == sha256.lower():
        return final
    part = final.with_name(final.name + ".part")
    log(f"downloading {url}")
    h = hashlib.sha256()
    try:
        with urllib.request.urlopen(url, timeout=60) as r, open(part, "wb") as out:
            while chunk := r.read(1 << 20):
                h.update(chunk)
                out.write(chunk)
    except OSError as e:
        part.unlink(missing_ok=True)
        raise BringupError(f"download {url} failed: {e}") from e
    if h.hexdigest() != sha256.lower():
        part.unlink(missing_ok=True)
        raise BringupError(f"download {url}: sha256 mismatch: expected {sha256.lower()}, got {h.hexdigest()}")
    part.rename(final)
    return final


def sha256_file(f: Path) -> str:
    h = hashlib.sha256()
    with open(f, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def kernel_version(tree: Path) -> str:
    """VERSION.PATCHLEVEL.SUBLEVEL(EXTRAVERSION) from the top-level Makefile."""
    vals = {}
    try:
        with open(tree / "Makefile", errors="replace") as f:
            for line in f:
                m = re.match(r"^(VERSION|PATCHLEVEL|SUBLEVEL|EXTRAVERSION)\s*=\s*(.*?)\s*$", line)
                if m and m.group(1) not in vals:
                    vals[m.group(1)] = m.group(2)
                if len(vals) == 4:
                    break
    except OSError:
        return ""
    if "VERSION" not in vals:
        return ""
    v = ".".join(x for x in (vals.get("VERSION"), vals.get("PATCHLEVEL"), vals.get("SUBLEVEL")) if x)
    return v + vals.get("EXTRAVERSION", "")


def _tree_identity(p: Path) -> str:
    """For a git tree: HEAD plus a hash of uncommitted changes; otherwise unknown."""
    try:
        head = subprocess.run(
            ["git", "-C", str(p), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        diff = subprocess.run(
            ["git", "-C", str(p), "status", "--porcelain"], capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return ""
    return f"git:{head}:{hashlib.sha256(diff.encode()).hexdigest()[:16]}"


def _safe_name(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9._+-]", "_", s)
