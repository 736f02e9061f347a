"""Kernel sources: fetch once, verify, extract safely, return a tree.

Kinds (a board's `source` table):
  debian  = "linux-source-6.1", suite = "bookworm"   private apt download
  url     = "https://.../linux-2.6.11.7.tar.bz2", sha256 = "..."
  tarball = "/path/linux.tar.xz" (sha256 optional)
  path    = "/path/to/linux"                        used in place, never modified
url and tarball may add tree = "git:<40 hex>", the git tree id of the
extracted tree (what `git add -A -f && git write-tree` prints inside it).

Download directories (Buildroot's BR2_DL_DIR, Yocto's DL_DIR): before a URL
is downloaded, the file is looked for by name in each directory of
BRINGUP_DL_DIR (colon-separated), then in the cache's downloads/.  A file is
used when its sha256 is the board's; a file with another sha256 (the same
release archived or compressed differently, e.g. rebuilt from a git mirror)
only when the board gives `tree` and the extracted tree has that id: content
is verified, not compression.  The record says which file was used and how it
was verified.
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
from bringup.model.specs import SourceSpec
from bringup.util import debs, gittree, paths
from bringup.util.aptprivate import PrivateApt
from bringup.util.progress import Progress

DL_DIR_ENV = "BRINGUP_DL_DIR"
TREE_MARK = ".git-tree"  # next to .complete in an extracted source: the tree id computed from it


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
        return _url(source, cache, log)
    if source.tarball:
        f = paths.expand_user(source.tarball, "source.tarball")
        if not f.is_file():
            raise BringupError(f"source tarball {f}: no such file")
        digest = sha256_file(f)
        detail = {"kind": "tarball", "tarball": str(f)}
        if not source.sha256 or digest == source.sha256.lower():
            verified = "sha256" if source.sha256 else "none"
            return _from_tarball(f, digest, cache, detail | _used(f, digest, verified, "tarball", source), log)
        if not source.tree:
            raise BringupError(f"source tarball {f}: sha256 mismatch: expected {source.sha256}, got {digest}")
        tree, got = _tree_checked(f, digest, source.tree, cache, log)
        if tree is None:
            raise BringupError(
                f"source tarball {f}: sha256 mismatch (expected {source.sha256}, got {digest}) "
                f"and its tree is {got}, not {source.tree}"
            )
        return _tree_source(tree, digest, detail | _used(f, digest, "tree", "tarball", source), source)
    if source.path:
        p = paths.expand_user(source.path, "source.path")
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
            safe_extract(inner, dest, log)
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


def download_dirs(own: Path) -> list[Path]:
    """Where a URL's file is looked for before it is downloaded: each directory of
    BRINGUP_DL_DIR (colon-separated, in order), then bringup's own downloads
    directory (`own`, the cache's downloads/)."""
    dirs = [paths.expand_user(d, DL_DIR_ENV) for d in os.environ.get(DL_DIR_ENV, "").split(":") if d.strip()]
    dirs.append(Path(own))
    return list(dict.fromkeys(dirs))


def check_download_dirs() -> None:
    """BRINGUP_DL_DIR, before any work: each entry a directory (or not there at all: a share
    that is not mounted), never a file, `~nosuchuser` or a path with a control character."""
    from bringup.model.base import CONTROL

    for d in os.environ.get(DL_DIR_ENV, "").split(":"):
        if not d.strip():
            continue
        if CONTROL.search(d):
            raise BringupError(f"{DL_DIR_ENV}: entry {paths.show(d)}: contains a control character")
        p = paths.expand_user(d, DL_DIR_ENV)
        if (p.exists() or p.is_symlink()) and not p.is_dir():
            kind = "a dangling symlink" if not p.exists() else "not a directory"
            raise BringupError(
                f"{DL_DIR_ENV}: entry {paths.show(d)}: {kind} (a download directory is searched for files)"
            )


def url_file_name(url: str) -> str:
    return _safe_name(url.rstrip("/").rsplit("/", 1)[-1]) or "download"


def _candidates(url: str, sha256: str, own: Path) -> list[tuple[Path, str]]:
    """(file, origin) for every local file that may be the URL's: by name in each
    download directory; in bringup's own (`own`) first under the name it stores
    downloads as."""
    name = url_file_name(url)
    found = []
    for d in download_dirs(own):
        is_cache = d.resolve() == Path(own).resolve()
        names = [name]
        if is_cache:  # <sha256[:16]>-<name>: the expected one first, then others (kept for their tree)
            others = sorted(f.name for f in d.glob(f"*-{name}") if re.fullmatch(r"[0-9a-f]{16}-.*", f.name))
            names = [f"{sha256[:16]}-{name}", name, *others]
        for n in names:
            f = d / n
            if f.is_file():
                found.append((f, "cache" if is_cache else "download-dir"))
    return list(dict.fromkeys(found))


def _used(f: Path, digest: str, verified: str, origin: str, source: SourceSpec) -> dict:
    """The record's account of the file a source came from."""
    d = {"file": str(f), "sha256": digest, "verified": verified, "origin": origin}
    if source.tree:
        d["tree_id"] = source.tree
    if source.sha256 and digest != source.sha256.lower():
        d["expected_sha256"] = source.sha256.lower()
    return d


def _url(source: SourceSpec, cache: Path, log) -> SourceTree:
    want = source.sha256.lower()
    detail = {"kind": "url", "url": source.url}
    looked = []
    for f, origin in _candidates(source.url, want, cache / "downloads"):
        digest = sha256_file(f)
        if digest == want:
            if origin != "cache":
                log(f"using {f} (sha256 matches the board's)")
                _keep(f, digest, source.url, cache / "downloads")
            return _from_tarball(f, digest, cache, detail | _used(f, digest, "sha256", origin, source), log)
        if source.tree:
            log(f"{f}: sha256 {digest[:16]}... is not the board's; checking its tree against {source.tree}")
            tree, got = _tree_checked(f, digest, source.tree, cache, log)
            if tree is not None:
                log(f"using {f} (its tree is {source.tree})")
                if origin != "cache":
                    _keep(f, digest, source.url, cache / "downloads")
                return _tree_source(tree, digest, detail | _used(f, digest, "tree", origin, source), source)
            looked.append(f"{f} has sha256 {digest} and tree {got}")
        else:
            looked.append(f"{f} has sha256 {digest} (the board has no 'tree' to check its content)")
        log(f"ignoring {looked[-1]}")
    try:
        f, digest = _download(source.url, want, cache / "downloads", log, keep_mismatch=bool(source.tree))
    except BringupError as e:
        where = "; ".join(looked) or f"no file {url_file_name(source.url)} in " + ", ".join(
            str(d) for d in download_dirs(cache / "downloads")
        )
        raise BringupError(f"{e} ({where}; {DL_DIR_ENV} lists download directories)") from None
    if digest == want:
        return _from_tarball(f, digest, cache, detail | _used(f, digest, "sha256", "download", source), log)
    tree, got = _tree_checked(f, digest, source.tree, cache, log)
    if tree is None:
        f.unlink(missing_ok=True)
        raise BringupError(
            f"download {source.url}: sha256 mismatch (expected {want}, got {digest}) and its tree is {got}, "
            f"not {source.tree}"
        )
    return _tree_source(tree, digest, detail | _used(f, digest, "tree", "download", source), source)


def _tree_checked(f: Path, digest: str, tree_id: str, cache: Path, log) -> tuple[Path | None, str]:
    """Extract f (once) and compare its tree's git id with tree_id ('git:<hex>').
    Returns (the tree, the id found); the tree is None, and the extraction removed,
    when the ids differ."""
    dest = cache / "src" / f"tar-{digest[:16]}"
    tree = _single_tree(dest)
    extracted_now = tree is None
    if tree is None:
        safe_extract(f, dest, log)
        tree = _single_tree(dest)
        if tree is None:
            raise BringupError(f"{f}: does not hold one kernel tree (a top-level directory with a Makefile)")
    mark = dest / TREE_MARK
    got = mark.read_text().strip() if mark.is_file() else ""
    if not got:
        got = "git:" + gittree.tree_id(tree)
        mark.write_text(got + "\n")
    if got != tree_id.lower():
        if extracted_now:
            shutil.rmtree(dest, ignore_errors=True)
        return None, got
    return tree, got


def _tree_source(tree: Path, digest: str, detail: dict, source: SourceSpec) -> SourceTree:
    return SourceTree(
        path=tree, kind=detail["kind"], identity=source.tree.lower(), version=kernel_version(tree), detail=detail
    )


def _from_tarball(f: Path, digest: str, cache: Path, detail: dict, log) -> SourceTree:
    dest = cache / "src" / f"tar-{digest[:16]}"
    tree = _single_tree(dest)
    if tree is None:
        safe_extract(f, dest, log)
        tree = _single_tree(dest)
        if tree is None:
            raise BringupError(f"{f}: does not hold one kernel tree (a top-level directory with a Makefile)")
    detail = dict(detail, sha256=digest)
    # a board that gives the tree id names the content: the same build key whichever
    # archive of that tree was used (the board pairs its sha256 with that tree)
    identity = detail.get("tree_id") or f"sha256:{digest}"
    return SourceTree(path=tree, kind=detail["kind"], identity=identity, version=kernel_version(tree), detail=detail)


def _single_tree(dest: Path) -> Path | None:
    if not (dest / ".complete").exists():
        return None
    dirs = [d for d in dest.iterdir() if d.is_dir()]
    if len(dirs) == 1 and (dirs[0] / "Makefile").is_file():
        return dirs[0]
    return None


def safe_extract(tarball: Path, dest: Path, say=None) -> None:
    """Extract into dest, refusing members that would land outside it.

    Extraction goes to a temporary sibling first and is renamed into place, so
    an interrupted extraction never looks complete.  Progress (`say`: where its
    lines go, None for none) counts the compressed megabytes read against the
    tarball's size."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".part-", dir=dest.parent))
    size_mb = max(1, -(-Path(tarball).stat().st_size // 2**20))
    if say is not None:
        say(f"extracting {Path(tarball).name} ({size_mb} MB)")
    try:
        with (
            open(tarball, "rb") as raw,
            tarfile.open(fileobj=raw, mode="r:*") as tf,
            Progress(f"  extracting {Path(tarball).name}", total=size_mb, unit="MB", say=say or _quiet) as prog,
        ):
            for m in tf:
                _check_member(m, tmp, tarball)
                tf.extract(m, tmp, filter="data")
                prog.update(-(-raw.tell() // 2**20), note=m.name)
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


def _keep(f: Path, digest: str, url: str, downloads: Path) -> None:
    """A verified file from a download directory kept in bringup's own downloads too
    (hard-linked where it can be), as a download would be: a later clone finds it there
    even without that directory beside it.  Written beside and renamed: never half a file."""
    final = Path(downloads) / f"{digest[:16]}-{url_file_name(url)}"
    if final.exists():
        return
    part = final.with_name(final.name + ".part")
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        part.unlink(missing_ok=True)
        try:
            os.link(f, part)
        except OSError:
            shutil.copyfile(f, part)
        os.replace(part, final)
    except OSError:
        part.unlink(missing_ok=True)  # a convenience only: the file in the download directory is used


def fetch_url(url: str, sha256: str, downloads: Path, log=print) -> Path:
    """The URL's file, verified against sha256: from a download directory
    (BRINGUP_DL_DIR, then `downloads`) when one holds it by name, else downloaded
    once into `downloads`."""
    sha256 = sha256.lower()
    for f, _origin in _candidates(url, sha256, downloads):
        if sha256_file(f) == sha256:
            return f
    return _download(url, sha256, downloads, log)[0]


def _download(url: str, sha256: str, downloads: Path, log, keep_mismatch: bool = False) -> tuple[Path, str]:
    """Download into `downloads`; (file, its sha256).  A file whose sha256 is not the
    expected one is removed, unless keep_mismatch (its content is checked otherwise)."""
    downloads.mkdir(parents=True, exist_ok=True)
    final = downloads / f"{sha256[:16]}-{url_file_name(url)}"
    part = final.with_name(final.name + ".part")
    log(f"downloading {url}")
    h = hashlib.sha256()
    try:
        with urllib.request.urlopen(url, timeout=60) as r, open(part, "wb") as out:
            length = _content_length(r)
            with Progress(
                f"  downloading {url_file_name(url)}",
                total=-(-length // 2**20) if length else None,
                unit="MB",
                say=log,
            ) as prog:
                got = 0
                while chunk := r.read(1 << 20):
                    h.update(chunk)
                    out.write(chunk)
                    got += len(chunk)
                    prog.update(-(-got // 2**20))
    except OSError as e:
        part.unlink(missing_ok=True)
        raise BringupError(f"download {url} failed: {e}") from e
    digest = h.hexdigest()
    if digest != sha256:
        if keep_mismatch:
            other = downloads / f"{digest[:16]}-{url_file_name(url)}"
            part.rename(other)
            return other, digest
        part.unlink(missing_ok=True)
        raise BringupError(f"download {url}: sha256 mismatch: expected {sha256}, got {digest}")
    part.rename(final)
    return final, digest


def _content_length(response) -> int:
    """The response's Content-Length in bytes; 0 when the server does not say."""
    try:
        return max(0, int(response.headers.get("Content-Length") or 0))
    except (AttributeError, ValueError):
        return 0


def _quiet(_msg: str) -> None:
    pass


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
