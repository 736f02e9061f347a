"""lmbench built from a source the user gives: a tree, a tarball, or a URL + sha256.

This is the route for boards Debian has no lmbench binaries for (32-bit
PowerPC).  The tree is built static with the board's userspace cross compiler,
following the recipe of configs/lmbench.toml's [source_build] table; the
binaries of bin/<os>/ become /usr/lib/lmbench/bin in the ramdisk.  Builds are
cached by (source sha256, compiler version, recipe).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from bringup.build import sources
from bringup.errors import BringupError
from bringup.model.benchset import SourceBuild
from bringup.util import cpio, paths

TIRPC_INCLUDE = Path("/usr/include/tirpc")


def parse_spec(source: str | None, sha256: str | None) -> dict | None:
    """--lmbench-source/--lmbench-sha256 (LMBENCH_SRC/LMBENCH_SHA256) -> a source spec."""
    if sha256 and not re.fullmatch(r"[0-9a-fA-F]{64}", sha256):
        raise BringupError(f"--lmbench-sha256 {paths.show(sha256)}: not a sha256 (64 hex digits)")
    if not source:
        if sha256:
            raise BringupError("--lmbench-sha256 (LMBENCH_SHA256=): only with --lmbench-source (LMBENCH_SRC=)")
        return None
    if re.search(r"[\x00-\x1f\x7f]", source):
        raise BringupError(f"lmbench source {paths.show(source)}: contains a control character")
    if "://" in source:
        if not re.fullmatch(r"https?://[^\s]+", source):
            raise BringupError(f"lmbench source {paths.show(source)}: a URL is http:// or https://, without spaces")
        if not sha256:
            raise BringupError(f"lmbench source {source}: a URL needs its sha256 (LMBENCH_SHA256=)")
        return {"url": source, "sha256": sha256.lower()}
    p = paths.expand_user(source, "lmbench source")
    if p.is_dir():  # checked here, before any work (`make all` built every kernel before it looked)
        _check_tree(p, paths.show(source))
        if sha256:
            raise BringupError(f"--lmbench-sha256: only for a tarball or URL; lmbench source {source} is a directory")
        return {"path": str(p.resolve())}
    if p.is_file():
        if not _is_tarball(p):
            raise BringupError(
                f"lmbench source {paths.show(source)}: not a tar archive (.tar, .tar.gz, .tgz, .tar.xz ...)"
            )
        return {"tarball": str(p.resolve()), "sha256": (sha256 or "").lower()}
    raise BringupError(f"lmbench source {source}: no such file or directory")


def tree_for(spec: dict, cache: Path, say=print) -> tuple[Path, str]:
    """The source tree (with src/Makefile) and its identity."""
    if "path" in spec:
        tree = Path(spec["path"])
        _check_tree(tree, spec["path"])
        return tree, "path:" + _tree_digest(tree)
    if "url" in spec:
        f = sources.fetch_url(spec["url"], spec["sha256"], cache / "downloads", say)
        digest = spec["sha256"]
    else:
        f = Path(spec["tarball"])
        digest = sources.sha256_file(f)
        if spec.get("sha256") and digest != spec["sha256"]:
            raise BringupError(f"lmbench source {f}: sha256 mismatch: expected {spec['sha256']}, got {digest}")
    dest = cache / "userspace" / "lmbench-src" / digest[:16]
    if not (dest / ".complete").exists():
        say(f"  extracting {f.name}")
        sources.safe_extract(f, dest)
    dirs = [d for d in dest.iterdir() if d.is_dir()]
    if len(dirs) != 1:
        raise BringupError(f"lmbench source {f}: expected one top-level directory, found {len(dirs)}")
    _check_tree(dirs[0], f)
    return dirs[0], "sha256:" + digest


def _is_tarball(f: Path) -> bool:
    try:
        return tarfile.is_tarfile(f)
    except OSError:
        return False


def _check_tree(tree: Path, name) -> None:
    if not (tree / "src" / "Makefile").is_file():
        raise BringupError(f"lmbench source {name}: not an lmbench tree (no src/Makefile)")


def _tree_digest(tree: Path) -> str:
    h = hashlib.sha256()
    for f in sorted(p for p in tree.rglob("*") if p.is_file() and "bin" not in p.relative_to(tree).parts[:1]):
        st = f.stat()
        h.update(f"{f.relative_to(tree)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def build(
    spec: dict, recipe: SourceBuild, cross_compile: str, arch: str, cache: Path, say=print
) -> tuple[list[cpio.Entry], dict]:
    """Build (or reuse) static lmbench binaries; returns cpio entries for
    /usr/lib/lmbench/bin and a provenance dict."""
    cc = shutil.which(f"{cross_compile}gcc")
    if cc is None:
        raise BringupError(f"building lmbench for {arch} needs {cross_compile}gcc (make deps installs it)")
    if not (TIRPC_INCLUDE / "rpc" / "rpc.h").is_file():
        raise BringupError(
            f"building lmbench needs the Sun RPC headers in {TIRPC_INCLUDE} "
            f"(Debian package libtirpc-dev; make deps installs it)"
        )
    tree, identity = tree_for(spec, cache, say)
    ccv = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    triplet = cross_compile.rstrip("-").rsplit("/", 1)[-1]
    os_name = recipe.os.format(triplet=triplet, arch=arch)
    args = [a.format(os=os_name, cc=f"{cross_compile}gcc", tirpc_include=TIRPC_INCLUDE) for a in recipe.make_args]
    key = hashlib.sha256(json.dumps([identity, ccv, args], sort_keys=True).encode()).hexdigest()[:16]
    out = cache / "userspace" / arch / f"lmbench-{key}"
    info = {
        "lmbench": f"built from {spec.get('url') or spec.get('tarball') or spec.get('path')} "
        f"({identity[:23]}) with {ccv}",
        "make_args": args,
    }
    if not (out / ".complete").exists():
        _run_build(tree, args, os_name, out, recipe.timeout, arch, say)
    bins = sorted(p for p in (out / "bin").iterdir() if p.is_file())
    entries = [cpio.directory("usr/lib/lmbench"), cpio.directory("usr/lib/lmbench/bin")]
    entries += [cpio.file(f"usr/lib/lmbench/bin/{p.name}", p.read_bytes(), 0o755) for p in bins]
    return entries, {**info, "binaries": len(bins)}


def _run_build(tree: Path, args: list[str], os_name: str, out: Path, timeout: float, arch: str, say) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=out.name + ".build-", dir=out.parent))
    log = out.parent / f"{out.name}.build.log"
    try:
        src = work / "lmbench"
        shutil.copytree(tree, src, symlinks=True)
        (src / "bin" / os_name).mkdir(parents=True, exist_ok=True)
        say(f"  building lmbench for {arch} from source (static; log {log})")
        with open(log, "w") as lf:
            lf.write(f"$ make -C {src / 'src'} {' '.join(args)}\n")
            lf.flush()
            try:
                p = subprocess.run(
                    ["make", "-C", str(src / "src"), *args],
                    stdout=lf,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    timeout=timeout,
                )
            except subprocess.TimeoutExpired:
                raise BringupError(
                    f"lmbench build for {arch} did not finish within {timeout:.0f}s; log: {log}"
                ) from None
        bindir = src / "bin" / os_name
        bins = [
            p
            for p in bindir.iterdir()
            if p.is_file() and not p.name.endswith((".o", ".a")) and p.stat().st_mode & 0o111
        ]
        if p.returncode != 0 or not bins:
            why = f"make exited {p.returncode}" if p.returncode else f"no programs in bin/{os_name}"
            raise BringupError(f"lmbench build for {arch} failed ({why}); log: {log}")
        stage = work / "out"
        (stage / "bin").mkdir(parents=True)
        for b in bins:
            shutil.copy2(b, stage / "bin" / b.name)
        (stage / ".complete").touch()
        if out.exists():
            shutil.rmtree(out)
        stage.rename(out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
