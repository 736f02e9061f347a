"""Build one board's kernels and write a build record for each.

The era (configs/era/*.toml) decides the recipe: out-of-tree or in a private
copy, which config target, which make steps.  Nothing here knows about a
particular board, architecture or kernel version.

Results for <board>/<kernel> go to logs/<board>/<kernel>/:
  build.json, build.log, images/      the last good build
  build-failed.json, build-failed.log the last failed or interrupted one
A failed or interrupted build never touches the good files.

Every good build is also kept in the cache, under its content key
(<cache>/results/<board>/<kernel>/<key>/): another logs directory (another
checkout, a test's temporary logs) asking for the same build gets a copy of
that build's record, log and images instead of running make again.  FORCE=1
always runs make.

The parts of a build, one module each: builder/context.py (the state a build carries,
make's environment, the log), builder/make.py (driving make), builder/erafixes.py (the
era's fixes and private copies), builder/ccache.py (ccache's statistics), builder/store.py
(the last good build in logs/ and the cache's result store), builder/collect.py (the
record of a good build: artifacts, sizes, times).  This module puts them
in order: the key, the tree, configure, make, collect the record.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from bringup import records
from bringup.builder import sources, toolchain
from bringup.builder.collect import collect, dot_config, kernelrelease, out_dir
from bringup.builder.context import FIXED_ENV, Built, Ctx, Step, _env, _log, _rel, _tail
from bringup.builder.erafixes import _apply_patches, _private_copy, fix_sha256, select_fixes
from bringup.builder.make import (
    _last_kbuild_commands,
    _make,
)
from bringup.builder.store import (
    _restore,
    _store,
    _stored,
    _swap_images,
    _up_to_date,
    _write_good,
)
from bringup.errors import BringupError, BuildFailed
from bringup.model.board import Board, EraFix, Kernel
from bringup.parse.kconfig import dropped_symbols, merge_fragment, parse_config
from bringup.util import clock, lock
from bringup.util.progress import Progress
from bringup.util.switches import env_switch

RECIPE_VERSION = 1  # bump when the build steps change in a way that invalidates old builds


def record_dir(logs: Path, board: str, kernel: str) -> Path:
    return Path(logs) / board / kernel


def build_all(
    board: Board,
    logs: Path,
    cache: Path,
    only: list | None = None,
    force: bool = False,
    jobs: int | None = None,
    say=print,
) -> list[Built]:
    kernels = [kernel for kernel in board.kernels if not only or kernel.id in only]
    if only:
        unknown = sorted(set(only) - {kernel.id for kernel in board.kernels})
        if unknown:
            known = ", ".join(kernel.id for kernel in board.kernels)
            raise BringupError(f"board {board.name}: no kernel {unknown[0]!r} (has: {known})")
    for kernel in kernels:  # every kernel's toolchain, before the first build (a missing one stopped the second)
        try:
            toolchain.find(kernel.cross_compile, kernel.arch, use_ccache=False)
        except BringupError as e:
            raise BringupError(f"{board.name}/{kernel.id}: {e}") from None
    results, failures = [], []
    for i, kernel in enumerate(kernels, 1):
        say(f"[{i}/{len(kernels)}] {board.name} {kernel.id}")
        try:
            results.append(build_kernel(board, kernel, logs, cache, force=force, jobs=jobs, say=say))
        except BuildFailed as e:
            failures.append(str(e))
            say(f"bringup: error: {e}")
    if failures:
        raise BuildFailed(f"{len(failures)} of {len(kernels)} builds failed for board {board.name}")
    return results


def _sources(board: Board, kernel: Kernel, recdir: Path, cache: Path, say) -> sources.SourceTree:
    """The kernel's source tree; a fetch that fails (the mirror offline) leaves a failure
    record, sources-failed.json, beside the good build record, and the next good fetch removes it."""
    failed = recdir / records.failed_name("sources")
    try:
        src = sources.prepare(kernel.source, cache, log=lambda m: say(f"  {m}"))
    except BringupError as e:
        why = f"{board.name}/{kernel.id}: sources: {e}"
        with contextlib.suppress(OSError, BringupError):  # the line below matters more than the record
            records.write(
                failed,
                {
                    "step": "sources",
                    "board": board.name,
                    "kernel": kernel.id,
                    "created": clock.now(),
                    "error": records.plain_text(why, 2000),
                    "run": None,
                    "kept": "build.json" if (recdir / "build.json").exists() else None,
                },
                records.Failure,
            )
        raise type(e)(why) from None
    failed.unlink(missing_ok=True)
    return src


def build_key(
    board: Board,
    kernel: Kernel,
    src: sources.SourceTree,
    tc: toolchain.Toolchain,
    configs_dir: Path | None = None,
    fixes: list[EraFix] | None = None,
) -> str | None:
    """A content key: equal keys mean the same build.  None when the source's
    content is unknown (a local tree outside git): such builds always run make."""
    if not src.identity:
        return None
    from bringup.util import paths

    configs = configs_dir or paths.CONFIGS
    inputs = []
    for f in kernel.config_inputs(configs):
        inputs.append([f.name, hashlib.sha256(f.read_bytes()).hexdigest()])
    material = {
        "recipe": RECIPE_VERSION,
        "source": src.identity,
        "era": kernel.era.name,
        "era_steps": kernel.era.steps,
        "arch": kernel.arch.kernel_arch,
        "cross_compile": kernel.cross_compile,
        "gcc": tc.version,
        "defconfig": kernel.defconfig,
        "config_inputs": inputs,
        "make_args": kernel.make_args,
        "image": board.image.model_dump(),
        "fixed_env": FIXED_ENV,
    }
    # added only when they matter, so that the keys of earlier builds stay valid
    if fixes:
        material["fixes"] = [[f.name, fix_sha256(kernel, f)] for f in fixes]
    if kernel.dtb != board.image.dtb:
        material["dtb"] = kernel.dtb
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


# --- era fixes ----------------------------------------------------------------


def _prepare_tree(ctx: Ctx) -> Path:
    """Where make runs.  The source itself for an out-of-tree build without patches
    (make writes only to O=); otherwise a private copy: the 2.4 recipe's in the build
    directory, or, for patched out-of-tree builds, one copy per (source, patches)
    in the cache, made once, patched, and then only read (builds use O=)."""
    kernel, src = ctx.kernel, ctx.src
    patches = [f for f in ctx.fixes if f.patch]
    if not kernel.era.out_of_tree:
        tree = _private_copy(src.path, ctx.builddir / "tree", ctx.say)
        _apply_patches(ctx, tree, patches)
        return tree
    if not patches:
        return src.path
    shas = [[f.name, fix_sha256(kernel, f)] for f in patches]
    if not src.identity:  # content unknown: a fresh copy for every build
        dest = ctx.builddir.parent / f"{ctx.builddir.name}.src"
        if dest.exists():
            shutil.rmtree(dest)
        tree = _private_copy(src.path, dest / src.path.name, ctx.say, why="patched by era fixes")
        _apply_patches(ctx, tree, patches)
        return tree
    key = hashlib.sha256(json.dumps([src.identity, shas]).encode()).hexdigest()[:16]
    dest = ctx.cache / "src" / f"fixed-{key}"
    tree = dest / src.path.name
    if (dest / ".complete").exists() and (tree / "Makefile").is_file():
        _log(ctx, f"# era fixes {', '.join(f.name for f in patches)} already applied in {tree}")
        return tree
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".part-", dir=dest.parent))
    try:
        _private_copy(src.path, tmp / src.path.name, ctx.say, why="patched by era fixes")
        _apply_patches(ctx, tmp / src.path.name, patches)
        (tmp / "fixes.json").write_text(json.dumps({"source": src.identity, "patches": shas}, indent=1) + "\n")
        (tmp / ".complete").touch()
        if not (dest / ".complete").exists():  # else another bringup made it meanwhile: use that one
            if dest.exists():
                shutil.rmtree(dest)  # an incomplete leftover
            tmp.rename(dest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return tree


def build_kernel(
    board: Board, kernel: Kernel, logs: Path, cache: Path, force: bool = False, jobs: int | None = None, say=print
) -> Built:
    recdir = record_dir(logs, board.name, kernel.id)
    tc = toolchain.find(kernel.cross_compile, kernel.arch, use_ccache=env_switch("BRINGUP_CCACHE"))
    if board.image.uimage and not shutil.which("mkimage"):
        raise BringupError(
            f"board {board.name}: image.uimage needs mkimage: install Debian package u-boot-tools (make deps does)"
        )
    src = _sources(board, kernel, recdir, cache, say)
    fixes = select_fixes(kernel, src, tc)
    key = build_key(board, kernel, src, tc, fixes=fixes)
    good = recdir / "build.json"
    kept = _up_to_date(good, key) if key and not force else None
    if kept is not None:
        say(f"  up to date ({kept.kernelrelease}); {_rel(good)} kept (use FORCE=1 to rebuild)")
        return Built(kept, good, reused=True)
    stored = _stored(Path(cache), board.name, kernel.id, key) if key and not force else None
    if stored is not None:
        rec = _restore(stored, recdir)
        say(
            f"  built before with the same sources, config and toolchain ({rec.kernelrelease}, "
            f"{rec.time.real:.0f}s on {rec.started[:10]}): copied from {_rel(stored)} "
            f"to {_rel(good)} (use FORCE=1 to rebuild)"
        )
        return Built(rec, good, reused=True)

    # Builds share the cache: one build of a board's kernel at a time, across checkouts.
    with lock.exclusive(Path(cache) / "build" / board.name / f"{kernel.id}.lock", f"{board.name}/{kernel.id}", say):
        return _build(board, kernel, src, tc, fixes, key, recdir, good, Path(cache), jobs, say)


def _build(board, kernel, src, tc, fixes, key, recdir: Path, good: Path, cache: Path, jobs, say) -> Built:
    # Every build that runs starts from an empty build tree, so that recorded times are
    # whole builds, comparable between kernels (ccache still helps; its hit rate is recorded).
    builddir = Path(cache) / "build" / board.name / kernel.id
    if builddir.exists():
        shutil.rmtree(builddir)
    builddir.mkdir(parents=True)
    recdir.mkdir(parents=True, exist_ok=True)
    log_path = recdir / "build.log.partial"
    ctx = Ctx(
        board=board,
        kernel=kernel,
        src=src,
        tc=tc,
        cache=Path(cache),
        recdir=recdir,
        builddir=builddir,
        tree=src.path,
        jobs=jobs or os.cpu_count() or 1,
        log_path=log_path,
        say=say,
        fixes=fixes,
    )
    started = clock.now()
    status, failure = "fail", None
    log_path.write_text(f"# bringup build of {board.name}/{kernel.id}, started {started}\n")
    ctx.progress = Progress(f"  {kernel.id}", total=_last_kbuild_commands(good), unit="commands", say=say)
    try:
        dropped = _recipe(ctx)
        rec, artifact_sources = collect(ctx, key, started, dropped)
        status = "ok"
    except BuildFailed as e:
        failure = str(e)  # records.write makes it plain text
        raise
    except KeyboardInterrupt:
        status, failure = "interrupted", "interrupted by the user"
        raise
    finally:
        ctx.progress.close()
        if status != "ok":
            _record_failure(ctx, key, started, status, failure)
    # success: publish images, log and record, in that order; then keep a copy by key
    _publish(ctx, rec, artifact_sources)
    if key:
        _store(cache, board.name, kernel.id, key, recdir)
    say(
        f"  ok: {rec.kernelrelease} in {rec.time.real:.0f}s "
        f"(user {rec.time.user:.0f}s, sys {rec.time.sys:.0f}s); "
        f"{rec.sizes.compressed_image.file} {rec.sizes.compressed_image.bytes} bytes; "
        f"record {_rel(good)}"
    )
    return Built(rec, good, reused=False)


def _recipe(ctx: Ctx) -> list[dict]:
    """The build proper: the tree make runs in (a private copy carrying the era's patches
    when it needs one), the config step, the make steps.  Returns the dropped symbols."""
    for fix in ctx.fixes:
        _log(ctx, f"# era fix {fix.name} ({fix.kind}): {fix.avoids}")
    if ctx.fixes:
        version = ctx.src.version or ctx.kernel.source.version
        ctx.say(f"  era fixes for {version}: {', '.join(f.name for f in ctx.fixes)}")
    ctx.tree = _prepare_tree(ctx)
    if ctx.tree != ctx.src.path:
        ctx.private_copy = ctx.tree
    dropped = _configure(ctx)
    for d in dropped:  # said at once: a build that fails later may fail because of it
        ctx.say(f"  warning: {d['file']}: {d['symbol']}={d['wanted']} did not survive {d['step']} (got {d['got']})")
    for target in _expand_steps(ctx):
        _make(ctx, [target], f"make {target}")
    if ctx.board.image.uimage:
        _mkimage(ctx)
    return dropped


# --- configuration ----------------------------------------------------------


def _configure(ctx: Ctx) -> list[dict]:
    kernel = ctx.kernel
    from bringup.util import paths

    dot = dot_config(ctx)
    if kernel.config_file:
        shutil.copyfile(kernel.config_inputs(paths.CONFIGS)[0], dot)
        _log(ctx, f"# copied {kernel.config_file} to .config")
    else:
        _make(ctx, [kernel.defconfig], f"make {kernel.defconfig}")
    if not dot.exists():
        hint = ' (a tree that ignores O= is 2.4-era: set era = "2.4" for this kernel)' if kernel.era.out_of_tree else ""
        raise BuildFailed(f"build of {ctx.board.name}/{kernel.id}: 'make {kernel.defconfig}' wrote no {dot}{hint}")
    wanted_by_file = []
    frags = kernel.config_inputs(paths.CONFIGS)[1 if kernel.config_file else 0 :]
    frags += [kernel.era.fragment_path(f) for f in ctx.fixes if f.fragment]
    text = dot.read_text()
    for f in frags:
        frag = parse_config(f.read_text())
        wanted_by_file.append((f.name, frag))
        text = merge_fragment(text, frag)
        _log(ctx, f"# merged fragment {f} ({len(frag)} symbols)")
    dot.write_text(text)
    target, feed = kernel.era.config_target, False
    if kernel.era.config_fallback and not _tree_has_target(ctx.tree, target):
        target, feed = kernel.era.config_fallback, True
    _make(ctx, [target], f"make {target}", feed_defaults=feed or target == "oldconfig")
    final = parse_config(dot.read_text())
    dropped = []
    for fname, frag in wanted_by_file:
        dropped.extend(dropped_symbols(final, frag, fname, target))
    for d in dropped:
        _log(ctx, f"# warning: {d['file']}: {d['symbol']}={d['wanted']} did not survive {target} (got {d['got']})")
    return dropped


def _tree_has_target(tree: Path, target: str) -> bool:
    for mk in (tree / "scripts" / "kconfig" / "Makefile", tree / "Makefile"):
        try:
            if re.search(rf"^{re.escape(target)}\b|[ \t]{re.escape(target)}\b", mk.read_text(errors="replace"), re.M):
                return True
        except OSError:
            pass
    return False


def _expand_steps(ctx: Ctx) -> list[str]:
    out = []
    img = ctx.board.image
    for s in ctx.kernel.era.steps:
        if s == "{image}":
            arch = ctx.kernel.arch
            target = img.target if img.target in arch.images else arch.compressed_image
            out.append(target)
            if target != arch.compressed_image:  # booted uncompressed (e.g. an ELF vmlinux): the compressed too
                out.append(arch.compressed_image)
        elif s == "{dtbs}":
            if ctx.kernel.arch.dtbs and ctx.kernel.dtb:
                out.append("dtbs")
        else:
            out.append(s)
    return out


# --- running make -----------------------------------------------------------


def _mkimage(ctx: Ctx) -> None:
    img = ctx.board.image
    arch = ctx.kernel.arch
    src = out_dir(ctx) / arch.images[arch.compressed_image]
    dst = out_dir(ctx) / "uImage.bringup"
    argv = [
        "mkimage",
        "-A",
        arch.mkimage_arch or arch.kernel_arch,
        "-O",
        "linux",
        "-T",
        "kernel",
        "-C",
        "none",
        "-a",
        str(img.load_address),
        "-e",
        str(img.entry_point or img.load_address),
        "-n",
        f"Linux-{kernelrelease(ctx)}"[:31],
        "-d",
        str(src),
        str(dst),
    ]
    _log(ctx, f"$ {shlex.join(argv)}")
    p = subprocess.run(argv, capture_output=True, text=True, env=_env(ctx))
    _log(ctx, p.stdout + p.stderr)
    ctx.steps.append(Step(name="mkimage", argv=argv, exit=p.returncode))
    if p.returncode != 0:
        raise BuildFailed(f"mkimage failed for {ctx.board.name}/{ctx.kernel.id}: {p.stderr.strip()}")


def _publish(ctx: Ctx, rec: records.Build, srcs: dict[str, Path]) -> None:
    recdir = ctx.recdir
    new = recdir / "images.new"
    if new.exists():
        shutil.rmtree(new)
    new.mkdir()
    for name, p in srcs.items():
        shutil.copyfile(p, recdir / rec.artifacts[name].replace("images/", "images.new/", 1))
    _swap_images(recdir)
    os.replace(ctx.log_path, recdir / "build.log")
    _write_good(recdir, rec)


def _record_failure(ctx: Ctx, key, started, status, failure) -> None:
    recdir = ctx.recdir
    if ctx.log_path.exists():
        os.replace(ctx.log_path, recdir / "build-failed.log")
    rec = {
        "status": status,
        "board": ctx.board.name,
        "kernel": ctx.kernel.id,
        "key": key,
        "started": started,
        "finished": clock.now(),
        "error": failure,
        "steps": [{"name": s.name, "exit": s.exit, "real": round(s.real, 3)} for s in ctx.steps],
        "commands": [shlex.join(s.argv) for s in ctx.steps],
        "log": "build-failed.log",
    }
    records.write(recdir / "build-failed.json", rec, records.BuildFailure)
    tail = _tail(recdir / "build-failed.log", 15)
    if tail and status == "fail":
        ctx.say("  --- last lines of " + _rel(recdir / "build-failed.log") + " ---")
        for line in tail:
            ctx.say("  | " + line)
