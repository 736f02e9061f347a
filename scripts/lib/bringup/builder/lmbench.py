"""lmbench built from source: configs/lmbench.toml's [source] (lmbench 3.0-a9 from
the download directories, sha256- or tree-checked), or a tree, tarball or URL the
user gives.

This is the route for boards Debian has no lmbench binaries for (32-bit
PowerPC).  The tree is built static with a toolchain of [source_build.toolchains]
(the board's userspace cross compiler and the libc it links in), following the
recipe of configs/lmbench.toml's [source_build] table; the stripped programs of
bin/<os>/ that the benchmark set runs become /usr/lib/lmbench/bin in the ramdisk.
Builds are cached by (source identity, compiler version, toolchain, recipe), like
a kernel build: under a lock, written beside and renamed into place.
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

from bringup.builder import sources
from bringup.errors import BringupError
from bringup.model.benchset import SourceBuild, SourceFile, Toolchain
from bringup.util import cpio, gittree, paths
from bringup.util.lock import exclusive

TIRPC_INCLUDE = Path("/usr/include/tirpc")
STUBS = paths.ROOT / "scripts" / "lmbench" / "pmap_stubs.c"


def default_spec(source: SourceFile, cache: Path, say=print) -> dict:
    """configs/lmbench.toml's [source] as a source spec: its file, found by name in the
    download directories (BRINGUP_DL_DIR, then the cache's downloads/), verified by
    sha256 or, failing that, by the git tree id of its contents."""
    looked = []
    for d in sources.download_dirs(cache / "downloads"):
        f = d / source.file
        if not f.is_file():
            looked.append(f"no {f}")
            continue
        digest = sources.sha256_file(f)
        if digest == source.sha256:
            return {"tarball": str(f), "sha256": digest, "verified": "sha256", "version": source.version}
        if source.tree:
            tree = _extracted(f, digest, cache, say)
            got = "git:" + gittree.tree_id(tree)
            if got == source.tree:
                say(f"  {f}: sha256 {digest[:16]}... is not lmbench.toml's, its tree is ({source.tree})")
                return {"tarball": str(f), "sha256": digest, "verified": "tree", "version": source.version}
            looked.append(f"{f} has sha256 {digest} and tree {got}")
        else:
            looked.append(f"{f} has sha256 {digest}")
    raise BringupError(
        f"lmbench source {source.file} (sha256 {source.sha256[:16]}..., configs/lmbench.toml [source]) not found: "
        + "; ".join(looked)
        + f" ({sources.DL_DIR_ENV} lists download directories; make adds ../shared/sources)"
    )


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
    tree = _extracted(f, digest, cache, say)
    return tree, "sha256:" + digest


def _extracted(f: Path, digest: str, cache: Path, say) -> Path:
    """The one top directory of tarball f (sha256 digest), extracted once into the cache."""
    dest = cache / "userspace" / "lmbench-src" / digest[:16]
    if not (dest / ".complete").exists():
        say(f"  extracting {f.name}")
        with exclusive(dest.with_name(dest.name + ".lock"), f"the {f.name} extraction", say):
            if not (dest / ".complete").exists():
                sources.safe_extract(f, dest)
    dirs = [d for d in dest.iterdir() if d.is_dir()]
    if len(dirs) != 1:
        raise BringupError(f"lmbench source {f}: expected one top-level directory, found {len(dirs)}")
    _check_tree(dirs[0], f)
    return dirs[0]


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
    spec: dict,
    recipe: SourceBuild,
    cross_compile: str,
    arch: str,
    cache: Path,
    say=print,
    programs: list[str] | None = None,
    toolchain: str | None = None,
) -> tuple[list[cpio.Entry], dict]:
    """Build (or reuse) static lmbench binaries with `toolchain` (a name of
    recipe.toolchains; default recipe.toolchain) for the userspace prefix
    `cross_compile`; returns cpio entries for /usr/lib/lmbench/bin (`programs` only,
    when given: each must have been built) and a provenance dict for the records."""
    name = toolchain or recipe.toolchain
    tc, cc_name, cc, strip = _tools(recipe, name, cross_compile, arch)
    tree, identity = tree_for(spec, cache, say)
    ccv = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    triplet = cross_compile.rstrip("-").rsplit("/", 1)[-1]
    os_name = recipe.os.format(triplet=triplet, arch=arch)
    stubs_key = hashlib.sha256(STUBS.read_bytes()).hexdigest()[:16]
    form = {"os": os_name, "cc": cc_name, "cflags": " ".join(tc.cflags), "tirpc_include": TIRPC_INCLUDE}
    shown = [a.format(**form, stubs="pmap_stubs.o").rstrip() for a in recipe.make_args]
    key = hashlib.sha256(
        json.dumps([identity, ccv, name, tc.model_dump(), shown, stubs_key], sort_keys=True).encode()
    ).hexdigest()[:16]
    out = cache / "userspace" / arch / f"lmbench-{key}"
    if not (out / ".complete").exists():
        with exclusive(out.with_name(out.name + ".lock"), f"lmbench for {arch}", say):
            if not (out / ".complete").exists():
                _run_build(tree, recipe, form, os_name, out, cc, strip, arch, say)
    built, want, entries = _installed(out, arch, programs)
    source = spec.get("url") or spec.get("tarball") or spec.get("path")
    info = {
        "lmbench": f"bringup's build of lmbench {spec.get('version') or 'unknown version'} from {source} "
        f"({identity[:23]}), static, {name} toolchain ({ccv})",
        "origin": "bringup-build",
        "version": spec.get("version"),
        "source_file": Path(str(source)).name,
        "source_sha256": identity.split(":", 1)[1] if identity.startswith("sha256:") else None,
        "toolchain": name,
        "libc": tc.libc,
        "compiler": ccv,
        "build_key": key,
        "make_args": shown,
        "binaries": len(want),
        "not_built": sorted(set(recipe.left_out) - set(built)),
    }
    return entries, info


def _installed(out: Path, arch: str, programs: list[str] | None) -> tuple[list[str], list[str], list[cpio.Entry]]:
    """The programs the build at `out` made, those the ramdisk takes (`programs`, each of
    which must have been built; default all) and their cpio entries for /usr/lib/lmbench/bin."""
    built = sorted(p.name for p in (out / "bin").iterdir() if p.is_file())
    want = sorted(programs) if programs is not None else built
    missing = [p for p in want if p not in built]
    if missing:
        raise BringupError(
            f"lmbench for {arch}: the build at {out} has no {', '.join(missing)} "
            f"(the benchmark set runs them; log: {out.parent / (out.name + '.build.log')})"
        )
    # every parent directory: the kernel's initramfs unpacker makes no missing parents
    # (without usr/lib, none of these files is there in the guest)
    entries = [cpio.directory(d) for d in ("usr", "usr/lib", "usr/lib/lmbench", "usr/lib/lmbench/bin")]
    entries += [cpio.file(f"usr/lib/lmbench/bin/{p}", (out / "bin" / p).read_bytes(), 0o755) for p in want]
    return built, want, entries


def _tools(recipe: SourceBuild, name: str, cross_compile: str, arch: str) -> tuple[Toolchain, str, str, str]:
    """The toolchain `name` of the recipe, its compiler's name, the compiler and strip found
    on PATH; one line saying what to install when one is missing (or the RPC headers are)."""
    if name not in recipe.toolchains:
        raise BringupError(
            f"lmbench toolchain {name!r}: none of configs/lmbench.toml's ({', '.join(recipe.toolchains)})"
        )
    tc = recipe.toolchains[name]
    cc_name = tc.cc.format(cross_compile=cross_compile)
    cc = shutil.which(cc_name)
    if cc is None:
        raise BringupError(f"building lmbench for {arch} needs {cc_name} (toolchain {name}; make deps installs it)")
    strip = shutil.which(tc.strip.format(cross_compile=cross_compile))
    if strip is None:
        raise BringupError(f"building lmbench for {arch} needs {tc.strip.format(cross_compile=cross_compile)}")
    if not (TIRPC_INCLUDE / "rpc" / "rpc.h").is_file():
        raise BringupError(
            f"building lmbench needs the Sun RPC headers in {TIRPC_INCLUDE} "
            f"(Debian package libtirpc-dev; make deps installs it)"
        )
    return tc, cc_name, cc, strip


def _run_build(
    tree: Path, recipe: SourceBuild, form: dict, os_name: str, out: Path, cc: str, strip: str, arch: str, say
) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=out.name + ".build-", dir=out.parent))
    log = out.parent / f"{out.name}.build.log"
    try:
        src = work / "lmbench"
        shutil.copytree(tree, src, symlinks=True)
        (src / "bin" / os_name).mkdir(parents=True, exist_ok=True)
        stubs = work / "pmap_stubs.o"
        c = subprocess.run([cc, "-O", "-c", "-o", str(stubs), str(STUBS)], capture_output=True, text=True)
        if c.returncode != 0:
            raise BringupError(f"lmbench for {arch}: compiling {STUBS} failed: {c.stderr.strip()[-300:]}")
        args = [a.format(**form, stubs=stubs).rstrip() for a in recipe.make_args]
        say(f"  building lmbench for {arch} from source (static; log {log})")
        with open(log, "w") as lf:
            lf.write(f"$ make -k -C {src / 'src'} {' '.join(args)}\n")
            lf.flush()
            try:
                p = subprocess.run(
                    ["make", "-k", "-C", str(src / "src"), *args],
                    stdout=lf,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    timeout=recipe.timeout,
                )
            except subprocess.TimeoutExpired:
                raise BringupError(
                    f"lmbench build for {arch} did not finish within {recipe.timeout:.0f}s; log: {log}"
                ) from None
        bindir = src / "bin" / os_name
        bins = [
            b
            for b in bindir.iterdir()
            if b.is_file() and not b.name.endswith((".o", ".a")) and b.stat().st_mode & 0o111 and _is_elf(b)
        ]
        # make -k goes on past a program that cannot be built (lat_rpc, recipe.left_out):
        # a failure is a build with nothing, or one that lacks a program the caller needs
        if not bins:
            why = f"make exited {p.returncode}" if p.returncode else f"no programs in bin/{os_name}"
            raise BringupError(f"lmbench build for {arch} failed ({why}); log: {log}")
        stage = work / "out"
        (stage / "bin").mkdir(parents=True)
        for b in bins:
            shutil.copy2(b, stage / "bin" / b.name)
        s = subprocess.run(
            [strip, *(str(b) for b in sorted((stage / "bin").iterdir()))], capture_output=True, text=True
        )
        if s.returncode != 0:
            raise BringupError(f"lmbench for {arch}: {strip} failed: {s.stderr.strip()[-300:]}")
        (stage / ".complete").touch()
        if out.exists():
            shutil.rmtree(out)
        stage.rename(out)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _is_elf(f: Path) -> bool:
    with open(f, "rb") as fh:
        return fh.read(4) == b"\x7fELF"
