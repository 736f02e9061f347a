"""The ramdisk: busybox for the board's userspace architecture, the files in
rootfs-overlay/, /dev/console, packed as a gzip'd newc cpio.

Result: logs/<board>/rootfs/<name>.cpio.gz and <name>.json (what is inside,
where busybox came from, its sha256 and the key of its inputs).  The record is
rewritten only when the ramdisk's bytes or that key change.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bringup import records
from bringup.builder import musl
from bringup.builder.sources import sha256_file
from bringup.errors import BringupError
from bringup.model.board import Board
from bringup.util import cpio, debs, ext2image, lock, paths
from bringup.util.aptprivate import PrivateApt

USERSPACE_SUITE = "bookworm"
RECIPE_VERSION = 2  # bump when base_entries() or the packing change the ramdisk

# busybox applets the ramdisk links; the scripts in rootfs-overlay/ use only these
# fmt: off
APPLETS = [
    "sh", "ash", "cat", "chmod", "cp", "cut", "date", "dd", "df", "dmesg", "echo", "env", "false", "free",
    "grep", "head", "hostname", "id", "ifconfig", "init", "ip", "kill", "ln", "login", "ls", "mkdir", "mknod",
    "mount", "mv", "poweroff", "printf", "ps", "reboot", "rm", "sed", "seq", "setsid", "sleep", "sort",
    "sync", "tail", "tee", "test", "time", "top", "touch", "tr", "true", "umount", "uname", "uptime", "wc",
    "getty", "halt", "awk", "mktemp", "basename", "dirname", "expr", "xargs", "which", "[",
]
# fmt: on
SBIN = {"init", "getty", "ifconfig", "ip", "poweroff", "reboot", "halt", "mknod"}


def busybox_for(arch: str, cache: Path, cross_compile: str | None = None, say=print) -> tuple[Path, str]:
    """A static busybox for a Debian architecture: (binary, version).

    Debian's busybox-static when Debian builds that architecture; otherwise
    Debian's busybox source, cross-built static with `cross_compile`."""
    apt = PrivateApt(cache / "apt", USERSPACE_SUITE, architectures=tuple(dict.fromkeys(("amd64", arch))))
    pkg = f"busybox-static:{arch}"
    try:
        version = apt.candidate(pkg)
    except BringupError:
        version = None  # the mirror has no index for that architecture
    if version is None:
        if cross_compile is None:
            raise BringupError(
                f"no busybox-static for userspace arch {arch!r} in Debian {USERSPACE_SUITE} "
                f"and no cross compiler to build it"
            )
        return busybox_from_source(arch, cross_compile, cache, say)
    out = cache / "userspace" / arch / f"busybox-{version.replace(':', '_')}"
    if not out.exists():
        with lock.exclusive(_lock_of(out), f"busybox {version} ({arch})", say):  # the cache is shared
            if not out.exists():
                deb = apt.download(pkg)
                say(f"  unpacking busybox {version} ({arch})")
                _install(debs.read(deb, "bin/busybox"), out)
    return out, version


def _lock_of(out: Path) -> Path:
    """The lock file of a thing built into the shared cache (util/lock.py: exclusive)."""
    return out.with_name(out.name + ".lock")


def _install(data: bytes, out: Path) -> None:
    """An executable written beside `out` under a name of its own, then renamed into place."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        tmp.chmod(0o755)
        tmp.rename(out)
    finally:
        tmp.unlink(missing_ok=True)


# Debian's busybox-static options that need glibc: GNU regex extensions (vi's search,
# grep's extra compatibility) and Sun RPC (NFS mount, inetd); off in a musl build
MUSL_OFF = ("FEATURE_VI_REGEX_SEARCH", "EXTRA_COMPAT", "FEATURE_MOUNT_NFS", "FEATURE_INETD_RPC", "FEATURE_HAVE_RPC")


def busybox_from_source(arch: str, cross_compile: str, cache: Path, say=print, libc: str = "glibc") -> tuple[Path, str]:
    """Debian's busybox source (private deb-src), built static with Debian's
    busybox-static configuration and the given cross compiler (for musl: less the
    options of MUSL_OFF)."""
    if not shutil.which(f"{cross_compile}gcc"):
        raise BringupError(f"building busybox for {arch} needs {cross_compile}gcc (make deps installs it)")
    src_root = cache / "userspace" / "src"
    tree, version = debian_source("busybox", src_root, say)
    tag = "" if libc == "glibc" else f"-{libc}"
    out = cache / "userspace" / arch / f"busybox-{version.replace(':', '_')}{tag}-built"
    if not out.exists():
        with lock.exclusive(_lock_of(out), f"busybox {version} for {arch} ({libc})", say):  # the cache is shared
            if not out.exists():
                _build_busybox(tree, version, arch, cross_compile, cache, say, libc)
    return out, version + " (built from source)"


def _build_busybox(tree: Path, version: str, arch: str, cross_compile: str, cache: Path, say, libc: str) -> None:
    """busybox_from_source's build, under its lock: make in a build directory, the binary
    renamed into place."""
    tag = "" if libc == "glibc" else f"-{libc}"
    out = cache / "userspace" / arch / f"busybox-{version.replace(':', '_')}{tag}-built"
    bdir = cache / "userspace" / arch / f"busybox{tag}-build"
    if bdir.exists():
        shutil.rmtree(bdir)
    bdir.mkdir(parents=True)
    config = (tree / "debian" / "config" / "pkg" / "static").read_text()
    if libc == "musl":
        for opt in MUSL_OFF:
            config = config.replace(f"CONFIG_{opt}=y\n", f"# CONFIG_{opt} is not set\n")
    (bdir / ".config").write_text(config)
    say(f"  building busybox {version} for {arch} from Debian's source ({cross_compile}gcc, static, {libc})")
    log = bdir / "build.log"
    with open(log, "w") as lf:
        for target, feed in (("oldconfig", True), ("busybox", False)):
            p = subprocess.run(
                [
                    "make",
                    "-C",
                    str(tree),
                    f"O={bdir}",
                    f"CROSS_COMPILE={cross_compile}",
                    f"-j{os.cpu_count() or 1}",
                    target,
                ],
                stdout=lf,
                stderr=subprocess.STDOUT,
                input=b"\n" * 2000 if feed else None,
                stdin=None if feed else subprocess.DEVNULL,
            )
            if p.returncode != 0:
                raise BringupError(f"busybox build for {arch} failed at 'make {target}'; log: {log}")
    _install((bdir / "busybox").read_bytes(), out)


def debian_source(package: str, root: Path, say=print) -> tuple[Path, str]:
    """Download (private deb-src, hashes checked by apt) and unpack a Debian
    source package; returns (tree, version)."""
    apt = PrivateApt(root.parent.parent / "apt", USERSPACE_SUITE, deb_src=True)
    apt.update()
    p = subprocess.run(
        ["apt-cache", "showsrc", "--only-source", package], env=apt._env(), capture_output=True, text=True
    )
    versions = [line.split(":", 1)[1].strip() for line in p.stdout.splitlines() if line.startswith("Version:")]
    if not versions:
        raise BringupError(f"Debian source package {package!r} not found in {USERSPACE_SUITE}")
    version = versions[0]
    tree = root / f"{package}-{version.replace(':', '_')}" / "src"
    if not (tree / ".complete").exists():
        with lock.exclusive(_lock_of(tree.parent), f"the Debian source {package} {version}", say):
            if not (tree / ".complete").exists():
                _fetch_source(apt, package, version, tree, say)
    return tree, version


def _fetch_source(apt: PrivateApt, package: str, version: str, tree: Path, say) -> None:
    """debian_source's download and unpacking, under its lock (.complete written last)."""
    dl = tree.parent
    dl.mkdir(parents=True, exist_ok=True)
    say(f"  fetching Debian source {package} {version}")
    p = subprocess.run(
        ["apt-get", "-q", "source", "--download-only", f"{package}={version}"],
        cwd=dl,
        env=apt._env(),
        capture_output=True,
        text=True,
    )
    if p.returncode != 0:
        raise BringupError(f"apt-get source {package} failed: {(p.stderr or p.stdout).strip()[-300:]}")
    dsc = sorted(dl.glob(f"{package}_*.dsc"))
    if not dsc:
        raise BringupError(f"apt-get source {package}: no .dsc downloaded")
    if tree.exists():
        shutil.rmtree(tree)
    p = subprocess.run(["dpkg-source", "-x", str(dsc[-1]), str(tree)], capture_output=True, text=True)
    if p.returncode != 0:
        raise BringupError(f"dpkg-source -x {dsc[-1].name} failed: {p.stderr.strip()[-300:]}")
    (tree / ".complete").touch()


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
    e = [
        cpio.directory(d)
        for d in (
            "bin",
            "sbin",
            "usr",
            "usr/bin",
            "usr/sbin",
            "dev",
            "proc",
            "sys",
            "tmp",
            "run",
            "root",
            "etc",
            "etc/init.d",
            "var",
        )
    ]
    e.append(cpio.file("bin/busybox", busybox, 0o755))
    for a in APPLETS:
        where = "sbin" if a in SBIN else "bin"
        e.append(cpio.symlink(f"{where}/{a}", "/bin/busybox"))
    e.append(cpio.symlink("init", "/bin/busybox"))  # the kernel runs /init: busybox init
    e.append(cpio.chardev("dev/console", 5, 1))
    e.append(cpio.chardev("dev/null", 1, 3, 0o666))
    # what a kernel without devtmpfs (2.4: the ext2 initrd) finds in /dev: lmbench reads
    # /dev/zero (lat_syscall read, the setup's test file), the shell wants /dev/tty;
    # devtmpfs mounts over them on 2.6.32 and later
    for name, major, minor in (("zero", 1, 5), ("full", 1, 7), ("random", 1, 8), ("urandom", 1, 9), ("tty", 5, 0)):
        e.append(cpio.chardev(f"dev/{name}", major, minor, 0o666))
    e.append(cpio.chardev("dev/ttyS0", 4, 64, 0o620))
    return e


def inputs_key(board: Board, overlay: Path | None = None) -> str:
    """sha256 over what the ramdisk is made from that is known without building it:
    the recipe (layout, applets), the userspace architecture and suite, and every file
    of rootfs-overlay/.  busybox's version and what callers add are recorded, not keyed."""
    entries = overlay_entries(overlay or paths.OVERLAY)
    material = {
        "recipe": RECIPE_VERSION,
        "suite": USERSPACE_SUITE,
        "arch": board.arch.debian_arch,
        "libc": board.libc,
        "applets": APPLETS,
        "sbin": sorted(SBIN),
        "overlay": [[e.path, e.mode, hashlib.sha256(e.data).hexdigest()] for e in entries],
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def build(
    board: Board,
    logs: Path,
    cache: Path,
    extra: Sequence[cpio.Entry] = (),
    name: str = "initramfs",
    extra_key: dict | None = None,
    say=print,
) -> records.Rootfs:
    """Build (or reuse) the board's ramdisk; returns its record."""
    arch = board.arch.debian_arch
    bb, bb_version, libc = userspace_busybox(board, cache, say)
    entries = _dedupe(base_entries(bb.read_bytes()) + overlay_entries(paths.OVERLAY) + list(extra))
    archive = cpio.archive(entries)
    archive_digest = hashlib.sha256(archive).hexdigest()
    outdir = Path(logs) / board.name / "rootfs"
    out = outdir / f"{name}.cpio.gz"
    ext2_out = outdir / f"{name}.ext2" if needs_ext2(board) else None
    key = inputs_key(board)
    recf = outdir / f"{name}.json"
    old = _unchanged(recf, out, archive_digest, key)
    if old is not None and _ext2_unchanged(old, ext2_out):
        return old  # compressing it again (gzip -9, seconds for the workloads' ramdisk) would give the same file
    ext2: dict[str, str | int] | None = None
    if ext2_out is not None:
        size = ext2image.write(entries, ext2_out)
        ext2 = {"file": ext2_out.name, "bytes": size, "sha256": sha256_file(ext2_out)}
    data = cpio.gzipped(archive)
    digest = hashlib.sha256(data).hexdigest()
    outdir.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(out)
    rec = {
        "board": board.name,
        "name": name,
        "file": out.name,
        "bytes": len(data),
        "sha256": digest,
        "archive_sha256": archive_digest,
        "inputs_key": key,
        "userspace_arch": arch,
        "libc": libc,
        "ext2": ext2,
        "busybox": {"source": _busybox_source(arch, libc, bb_version), "version": bb_version},
        "files": sorted(e.path for e in entries),
        "extra": extra_key or {},
    }
    written = records.write(recf, rec, records.Rootfs)
    say(f"  ramdisk {paths.rel(out)}: {len(data)} bytes, busybox {bb_version} ({arch}, {libc})")
    if ext2 is not None:
        for_kernels = ", ".join(ext2_kernels(board))
        say(f"  ext2 initrd {paths.rel(outdir / str(ext2['file']))}: {ext2['bytes']} bytes (for {for_kernels})")
    return written


def _busybox_source(arch: str, libc: str, version: str) -> str:
    """Where the ramdisk's busybox came from, as its record says."""
    if "from source" in version:
        return f"debian {USERSPACE_SUITE} busybox source, cross-built" + ("" if libc == "glibc" else f" against {libc}")
    return f"debian {USERSPACE_SUITE} busybox-static:{arch}"


def needs_ext2(board: Board) -> bool:
    return bool(ext2_kernels(board))


def ext2_kernels(board: Board) -> list[str]:
    """The board's kernels that boot the ramdisk as an ext2 initrd (their era has no initramfs)."""
    return [k.id for k in board.kernels if k.era.ramdisk == "ext2"]


def _ext2_unchanged(old: records.Rootfs, ext2_out: Path | None) -> bool:
    """The ext2 image beside the record is the one it describes (or none is needed)."""
    if ext2_out is None:
        return True
    if old.ext2 is None or not ext2_out.is_file():
        return False
    return old.ext2.bytes == ext2_out.stat().st_size and sha256_file(ext2_out) == old.ext2.sha256


def userspace_busybox(board: Board, cache: Path, say=print) -> tuple[Path, str, str]:
    """The ramdisk's busybox: (binary, version, libc).  glibc: Debian's busybox-static (or
    Debian's source cross-built where Debian has no binary); musl: Debian's source built
    against Debian's musl (builder/musl.py), a userspace that runs on every era."""
    arch = board.arch.debian_arch
    if board.libc == "musl":
        mu = musl.toolchain(arch, board.arch.userspace_cross_compile, cache, say)
        bb, version = busybox_from_source(arch, mu.prefix, cache, say, libc="musl")
        return bb, version, f"musl {mu.version}"
    bb, version = busybox_for(arch, cache, board.cross_compile, say)
    return bb, version, "glibc"


def userspace_prefix(board: Board, cache: Path, say=print) -> str:
    """CROSS_COMPILE for the ramdisk's own static programs (mem_eat, lmbench from source):
    the arch's GNU cross compiler (glibc), or the musl prefix made on it."""
    if board.libc == "musl":
        return musl.toolchain(board.arch.debian_arch, board.arch.userspace_cross_compile, cache, say).prefix
    return board.arch.userspace_cross_compile


def _unchanged(recf: Path, out: Path, archive_digest: str, key: str) -> records.Rootfs | None:
    """The ramdisk's record when the file next to it is the one it describes and holds
    the same archive made from the same inputs; else None (build it)."""
    if not (out.exists() and recf.exists()):
        return None
    try:
        old = records.read(recf, records.Rootfs)
    except BringupError:
        return None
    if old.archive_sha256 != archive_digest or old.inputs_key != key:
        return None
    return old if old.bytes == out.stat().st_size and sha256_file(out) == old.sha256 else None


def _dedupe(entries: list[cpio.Entry]) -> list[cpio.Entry]:
    """Later entries win (overlay over base, extras over both); every missing parent
    directory comes first (the kernel's initramfs unpacker makes no parents: without
    usr/lib, an added usr/lib/lmbench/bin was silently not there)."""
    by_path = {}
    for e in entries:
        by_path[e.path.strip("/")] = e
    out: list[cpio.Entry] = []
    done: set[str] = set()
    for path, e in by_path.items():
        if path in done:
            continue
        parts = path.split("/")
        for i in range(1, len(parts)):  # each parent before its children: the archive's own, else a new one
            d = "/".join(parts[:i])
            if d not in done:
                out.append(by_path.get(d) or cpio.directory(d))
                done.add(d)
        out.append(e)
        done.add(path)
    return out
