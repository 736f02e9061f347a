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
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bringup import records
from bringup.build import sources, toolchain
from bringup.errors import BringupError, BuildFailed
from bringup.model.board import Board, EraFix, Kernel
from bringup.parse import elfsize
from bringup.parse.kconfig import dropped_symbols, merge_fragment, parse_config
from bringup.util import clock, lock, procutil
from bringup.util.progress import Progress
from bringup.util.switches import env_switch

RECIPE_VERSION = 1  # bump when the build steps change in a way that invalidates old builds
FIXED_ENV = {  # reproducible images: no timestamps, user or host in the version string
    "KBUILD_BUILD_TIMESTAMP": "Thu Jan  1 00:00:00 UTC 2026",
    "KBUILD_BUILD_USER": "bringup",
    "KBUILD_BUILD_HOST": "bringup",
    "SOURCE_DATE_EPOCH": "1767225600",
    "LC_ALL": "C",
}


@dataclass
class Step:
    name: str
    argv: list
    real: float = 0.0
    user: float = 0.0
    sys: float = 0.0
    exit: int | None = None


@dataclass
class Ctx:
    board: Board
    kernel: Kernel
    src: sources.SourceTree
    tc: toolchain.Toolchain
    cache: Path
    recdir: Path
    builddir: Path  # O= directory (2.6+) or the private copy's parent (2.4)
    tree: Path  # where make runs (-C)
    jobs: int
    log_path: Path
    steps: list = field(default_factory=list)
    say: Callable[[str], object] = print
    fixes: list[EraFix] = field(default_factory=list)  # the era's fixes this build applies
    private_copy: Path | None = None  # the copy of the tree make runs in, when not the source itself
    progress: Progress | None = None  # the whole build's: kbuild commands run against the last build's count
    kbuild_done: int = 0  # kbuild command lines in the log so far
    log_read: int = 0  # bytes of the log counted so far


@dataclass(frozen=True)
class Built:
    """What build_kernel returns: the record, where it is, and whether make ran."""

    record: records.Build
    file: Path  # build.json
    reused: bool  # up to date: the earlier build was kept


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
    kernels = [k for k in board.kernels if not only or k.id in only]
    if only:
        unknown = sorted(set(only) - {k.id for k in board.kernels})
        if unknown:
            raise BringupError(
                f"board {board.name}: no kernel {unknown[0]!r} (has: {', '.join(k.id for k in board.kernels)})"
            )
    for k in kernels:  # every kernel's toolchain, before the first build (a missing one stopped the second)
        try:
            toolchain.find(k.cross_compile, k.arch, use_ccache=False)
        except BringupError as e:
            raise BringupError(f"{board.name}/{k.id}: {e}") from None
    results, failures = [], []
    for i, k in enumerate(kernels, 1):
        say(f"[{i}/{len(kernels)}] {board.name} {k.id}")
        try:
            results.append(build_kernel(board, k, logs, cache, force=force, jobs=jobs, say=say))
        except BuildFailed as e:
            failures.append(str(e))
            say(f"bringup: error: {e}")
    if failures:
        raise BuildFailed(f"{len(failures)} of {len(kernels)} builds failed for board {board.name}")
    return results


def build_key(
    board: Board,
    k: Kernel,
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
    for f in k.config_inputs(configs):
        inputs.append([f.name, hashlib.sha256(f.read_bytes()).hexdigest()])
    material = {
        "recipe": RECIPE_VERSION,
        "source": src.identity,
        "era": k.era.name,
        "era_steps": k.era.steps,
        "arch": k.arch.kernel_arch,
        "cross_compile": k.cross_compile,
        "gcc": tc.version,
        "defconfig": k.defconfig,
        "config_inputs": inputs,
        "make_args": k.make_args,
        "image": board.image.model_dump(),
        "fixed_env": FIXED_ENV,
    }
    # added only when they matter, so that the keys of earlier builds stay valid
    if fixes:
        material["fixes"] = [[f.name, fix_sha256(k, f)] for f in fixes]
    if k.dtb != board.image.dtb:
        material["dtb"] = k.dtb
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


# --- era fixes ----------------------------------------------------------------


def select_fixes(k: Kernel, src: sources.SourceTree, tc: toolchain.Toolchain) -> list[EraFix]:
    """The era's fixes for this kernel: its version (the tree's Makefile, else the board's
    source.version), its architecture, the gcc major version of its toolchain."""
    return k.era.fixes_for(src.version or k.source.version, k.arch, tc.major)


def fix_sha256(k: Kernel, fix: EraFix) -> str:
    """What a fix is, as one sha256: of its patch or fragment file, else of its settings."""
    if fix.patch:
        return hashlib.sha256(k.era.patch_path(fix).read_bytes()).hexdigest()
    if fix.fragment:
        return hashlib.sha256(k.era.fragment_path(fix).read_bytes()).hexdigest()
    return hashlib.sha256(_fix_settings(fix).encode()).hexdigest()


def _fix_settings(fix: EraFix) -> str:
    if fix.make_vars:
        return "".join(f"{var}={val}\n" for var, val in sorted(fix.make_vars.items()))
    return "CC += " + " ".join(fix.cc_flags) + "\n"


def fix_record(k: Kernel, fix: EraFix) -> dict:
    """A fix as the build record lists it."""
    rec: dict = {"name": fix.name, "kind": fix.kind, "sha256": fix_sha256(k, fix)}
    if fix.patch:
        rec["patch"] = f"configs/era/{fix.patch}"
    elif fix.fragment:
        rec["fragment"] = fix.fragment
    elif fix.make_vars:
        rec["make_vars"] = dict(fix.make_vars)
    else:
        rec["cc_flags"] = list(fix.cc_flags)
    rec["avoids"] = fix.avoids
    rec["unchanged"] = fix.unchanged
    if fix.changes:
        rec["changes"] = fix.changes
    if fix.overrides:
        rec["overrides"] = fix.overrides
    return rec


def _apply_patches(ctx: Ctx, tree: Path, patches: list[EraFix]) -> None:
    """Apply each patch fix to `tree` (a private copy) with patch -p1; a patch that does
    not apply fails the build in one line naming the fix."""
    if patches and not shutil.which("patch"):
        raise BuildFailed(f"era fix {patches[0].name}: needs the 'patch' program (Debian package patch; make deps)")
    for fix in patches:
        pf = ctx.kernel.era.patch_path(fix)
        argv = ["patch", "-p1", "--forward", "--batch", "--no-backup-if-mismatch", "-d", str(tree), "-i", str(pf)]
        p = subprocess.run(argv, capture_output=True, text=True)
        _log(ctx, f"$ {shlex.join(argv)}\n{p.stdout}{p.stderr}# exit {p.returncode}")
        if p.returncode != 0:
            why = next(
                (line for line in (p.stdout + p.stderr).splitlines() if "FAILED" in line or "can't find" in line),
                (p.stdout + p.stderr).strip().splitlines()[-1] if (p.stdout + p.stderr).strip() else "",
            )
            raise BuildFailed(
                f"era fix {fix.name}: configs/era/{fix.patch} does not apply to {ctx.src.version or 'the tree'} "
                f"({why.strip()}); log: {_rel(ctx.recdir / 'build-failed.log')}"
            )


def _prepare_tree(ctx: Ctx) -> Path:
    """Where make runs.  The source itself for an out-of-tree build without patches
    (make writes only to O=); otherwise a private copy: the 2.4 recipe's in the build
    directory, or, for patched out-of-tree builds, one copy per (source, patches)
    in the cache, made once, patched, and then only read (builds use O=)."""
    k, src = ctx.kernel, ctx.src
    patches = [f for f in ctx.fixes if f.patch]
    if not k.era.out_of_tree:
        tree = _private_copy(src.path, ctx.builddir / "tree", ctx.say)
        _apply_patches(ctx, tree, patches)
        return tree
    if not patches:
        return src.path
    shas = [[f.name, fix_sha256(k, f)] for f in patches]
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
    board: Board, k: Kernel, logs: Path, cache: Path, force: bool = False, jobs: int | None = None, say=print
) -> Built:
    recdir = record_dir(logs, board.name, k.id)
    tc = toolchain.find(k.cross_compile, k.arch, use_ccache=env_switch("BRINGUP_CCACHE"))
    if board.image.uimage and not shutil.which("mkimage"):
        raise BringupError(
            f"board {board.name}: image.uimage needs mkimage: install Debian package u-boot-tools (make deps does)"
        )
    src = sources.prepare(k.source, cache, log=lambda m: say(f"  {m}"))
    fixes = select_fixes(k, src, tc)
    key = build_key(board, k, src, tc, fixes=fixes)
    good = recdir / "build.json"
    kept = _up_to_date(good, key) if key and not force else None
    if kept is not None:
        say(f"  up to date ({kept.kernelrelease}); {_rel(good)} kept (use FORCE=1 to rebuild)")
        return Built(kept, good, reused=True)
    stored = _stored(Path(cache), board.name, k.id, key) if key and not force else None
    if stored is not None:
        rec = _restore(stored, recdir)
        say(
            f"  built before with the same sources, config and toolchain ({rec.kernelrelease}, "
            f"{rec.time.real:.0f}s on {rec.started[:10]}): copied from {_rel(stored)} "
            f"to {_rel(good)} (use FORCE=1 to rebuild)"
        )
        return Built(rec, good, reused=True)

    # Builds share the cache: one build of a board's kernel at a time, across checkouts.
    with lock.exclusive(Path(cache) / "build" / board.name / f"{k.id}.lock", f"{board.name}/{k.id}", say):
        return _build(board, k, src, tc, fixes, key, recdir, good, Path(cache), jobs, say)


def _build(board, k, src, tc, fixes, key, recdir: Path, good: Path, cache: Path, jobs, say) -> Built:
    # Every build that runs starts from an empty build tree, so that recorded times are
    # whole builds, comparable between kernels (ccache still helps; its hit rate is recorded).
    builddir = Path(cache) / "build" / board.name / k.id
    if builddir.exists():
        shutil.rmtree(builddir)
    builddir.mkdir(parents=True)
    recdir.mkdir(parents=True, exist_ok=True)
    log_path = recdir / "build.log.partial"
    ctx = Ctx(
        board=board,
        kernel=k,
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
    log_path.write_text(f"# bringup build of {board.name}/{k.id}, started {started}\n")
    ctx.progress = Progress(f"  {k.id}", total=_last_kbuild_commands(good), unit="commands", say=say)
    try:
        dropped = _recipe(ctx)
        rec, artifact_sources = _collect(ctx, key, started, dropped)
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
        _store(cache, board.name, k.id, key, recdir)
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
    k = ctx.kernel
    from bringup.util import paths

    dot = _dot_config(ctx)
    if k.config_file:
        shutil.copyfile(k.config_inputs(paths.CONFIGS)[0], dot)
        _log(ctx, f"# copied {k.config_file} to .config")
    else:
        _make(ctx, [k.defconfig], f"make {k.defconfig}")
    if not dot.exists():
        hint = ' (a tree that ignores O= is 2.4-era: set era = "2.4" for this kernel)' if k.era.out_of_tree else ""
        raise BuildFailed(f"build of {ctx.board.name}/{k.id}: 'make {k.defconfig}' wrote no {dot}{hint}")
    wanted_by_file = []
    frags = k.config_inputs(paths.CONFIGS)[1 if k.config_file else 0 :]
    frags += [k.era.fragment_path(f) for f in ctx.fixes if f.fragment]
    text = dot.read_text()
    for f in frags:
        frag = parse_config(f.read_text())
        wanted_by_file.append((f.name, frag))
        text = merge_fragment(text, frag)
        _log(ctx, f"# merged fragment {f} ({len(frag)} symbols)")
    dot.write_text(text)
    target, feed = k.era.config_target, False
    if k.era.config_fallback and not _tree_has_target(ctx.tree, target):
        target, feed = k.era.config_fallback, True
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


def make_argv(ctx: Ctx, targets: list[str]) -> list[str]:
    k = ctx.kernel
    argv = [
        "make",
        "-C",
        str(ctx.tree),
        f"-j{ctx.jobs}",
        f"ARCH={k.arch.kernel_arch}",
        f"CROSS_COMPILE={k.cross_compile}",
    ]
    cc_flags = [flag for f in ctx.fixes for flag in f.cc_flags]
    if ctx.tc.ccache or cc_flags:
        argv.append(f"CC={ctx.tc.cc(cc_flags)}")
    if k.era.out_of_tree:
        argv.append(f"O={ctx.builddir}")
    tail = make_vars(ctx.fixes, k.make_args)
    return argv + hostcc(ctx.tc.ccache, tail) + tail + targets


HOSTCC_SETTERS = ("HOSTCC", "HOSTCXX", "LLVM")  # make variables that choose the host compiler


def hostcc(ccache: str | None, make_vars: list[str]) -> list[str]:
    """HOSTCC through ccache: kbuild compiles its host programs (fixdep, kconfig's conf,
    kallsyms, dtc...) in every fresh build directory, which through ccache costs a warm
    build nothing.  Left alone without ccache, or when a fix or the kernel's make_args
    choose the host compiler."""
    if ccache is None or any(v.split("=", 1)[0] in HOSTCC_SETTERS for v in make_vars):
        return []
    return [f"HOSTCC={ccache} gcc"]


def make_vars(fixes: list[EraFix], make_args: list[str]) -> list[str]:
    """VAR=value arguments: the fixes' make variables (several fixes' values of one
    variable joined by a space), then the kernel's make_args; a make_arg naming a
    variable a fix sets is added to the fix's value, so neither is lost."""
    merged: dict[str, str] = {}
    for f in fixes:
        for var, val in f.make_vars.items():
            merged[var] = f"{merged[var]} {val}".strip() if var in merged else val
    rest = []
    for arg in make_args:
        var, _, val = arg.partition("=")
        if var in merged:
            merged[var] = f"{merged[var]} {val}".strip()
        else:
            rest.append(arg)
    return [f"{var}={val}" for var, val in merged.items()] + rest


def _env(ctx: Ctx) -> dict:
    env = dict(os.environ)
    env.update(FIXED_ENV)
    if ctx.tc.ccache:
        env["CCACHE_DIR"] = str(ctx.cache / "ccache")
        env.setdefault("CCACHE_MAXSIZE", "5G")
        for var, val in CCACHE_SETTINGS.items():  # CCACHE_X=1 unless the user set CCACHE_X or CCACHE_NOX
            if var not in env and "CCACHE_NO" + var.removeprefix("CCACHE_") not in env:
                env[var] = val
        env["CCACHE_STATSLOG"] = str(_stats_log(ctx))
    return env


def _make(ctx: Ctx, targets: list[str], name: str, feed_defaults: bool = False) -> Step:
    argv = make_argv(ctx, targets)
    step = Step(name=name, argv=argv)
    ctx.steps.append(step)
    _log(ctx, f"$ {shlex.join(argv)}")
    t0 = time.monotonic()
    with open(ctx.log_path, "ab") as logf:
        proc = subprocess.Popen(  # make and all it starts die with bringup, even by SIGKILL
            procutil.group_argv(argv),
            stdout=logf,
            stderr=subprocess.STDOUT,
            env=_env(ctx),
            stdin=subprocess.PIPE if feed_defaults else subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=procutil.term_with_parent,
        )
        stop = threading.Event()
        ticker = threading.Thread(target=_heartbeat, args=(ctx, name, t0, stop), daemon=True)
        ticker.start()
        feeder = None
        if feed_defaults:  # answer every question with its default (what `yes "" |` does)
            feeder = threading.Thread(target=_feed_newlines, args=(proc,), daemon=True)
            feeder.start()
        try:
            _, status, ru = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
        except BaseException:
            _kill_group(proc)
            raise
        finally:
            step.real = time.monotonic() - t0  # an interrupted make's record says how long it ran
            stop.set()
            ticker.join()
    step.user, step.sys = ru.ru_utime, ru.ru_stime
    step.exit = proc.returncode
    _log(ctx, f"# exit {step.exit}, real {step.real:.2f}s user {step.user:.2f}s sys {step.sys:.2f}s")
    if step.exit != 0:
        raise BuildFailed(
            f"build of {ctx.board.name}/{ctx.kernel.id} failed at '{name}' (exit "
            f"{step.exit}); log: {_rel(ctx.recdir / 'build-failed.log')}"
        )
    return step


def _feed_newlines(proc):
    try:
        for _ in range(20000):
            proc.stdin.write(b"\n")
            proc.stdin.flush()
    except (BrokenPipeError, OSError, ValueError):
        pass
    finally:
        with contextlib.suppress(OSError):
            proc.stdin.close()


def _kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    with contextlib.suppress(ChildProcessError):
        os.waitpid(proc.pid, 0)


def _heartbeat(ctx: Ctx, name: str, t0: float, stop: threading.Event, every: float = 1.0):
    """The build's progress while make runs: kbuild commands in the log so far against
    the last build's count (a plain line every 20 s when stdout is not a terminal)."""
    prog = ctx.progress
    if prog is None:
        prog = ctx.progress = Progress(f"  {ctx.kernel.id}", unit="commands", say=ctx.say)
    prog.set_label(f"  {ctx.kernel.id}: {name}")
    while not stop.wait(every):
        prog.update(_count_kbuild(ctx), _last_line(ctx.log_path))
    prog.update(_count_kbuild(ctx))


# kbuild's short command lines, "  CC      kernel/fork.o", "  CC [M]  fs/x.o", "  OBJCOPY arch/...":
# what a build's progress is counted in (2.4-era builds print whole commands: no count)
KBUILD_LINE = re.compile(rb"^  [A-Z][A-Z0-9_]*(?: \[M\])? +\S", re.M)


def kbuild_commands(text: bytes) -> int:
    """The kbuild command lines in (a part of) a build log."""
    return len(KBUILD_LINE.findall(text))


def _count_kbuild(ctx: Ctx) -> int:
    """kbuild command lines in the log so far, reading only what is new and complete."""
    try:
        with open(ctx.log_path, "rb") as f:
            f.seek(ctx.log_read)
            chunk = f.read()
    except OSError:
        return ctx.kbuild_done
    end = chunk.rfind(b"\n") + 1
    ctx.kbuild_done += kbuild_commands(chunk[:end])
    ctx.log_read += end
    return ctx.kbuild_done


def _last_kbuild_commands(good: Path) -> int | None:
    """How many kbuild commands the last good build of this kernel ran: the total the
    progress counts against (None: no earlier build, or one that did not count)."""
    if not good.exists():
        return None
    try:
        return records.read(good, records.Build).kbuild_commands
    except BringupError:
        return None


def _last_line(p: Path) -> str:
    try:
        with open(p, "rb") as f:
            f.seek(max(0, f.seek(0, 2) - 400))
            lines = f.read().decode(errors="replace").strip().splitlines()
            return lines[-1].strip() if lines else ""
    except OSError:
        return ""


def _mkimage(ctx: Ctx) -> None:
    img = ctx.board.image
    arch = ctx.kernel.arch
    src = _out(ctx) / arch.images[arch.compressed_image]
    dst = _out(ctx) / "uImage.bringup"
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
        f"Linux-{_kernelrelease(ctx)}"[:31],
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


# --- collecting the results -------------------------------------------------


def _out(ctx: Ctx) -> Path:
    return ctx.builddir if ctx.kernel.era.out_of_tree else ctx.tree


def _dot_config(ctx: Ctx) -> Path:
    return _out(ctx) / ".config"


def _kernelrelease(ctx: Ctx) -> str:
    f = _out(ctx) / "include" / "config" / "kernel.release"
    if f.exists():
        return f.read_text().strip()
    p = subprocess.run(make_argv(ctx, ["-s", "kernelrelease"]), capture_output=True, text=True, env=_env(ctx))
    lines = [line for line in p.stdout.splitlines() if line.strip() and not line.startswith("make")]
    return lines[-1].strip() if lines else ctx.src.version


def _collect(ctx: Ctx, key, started, dropped) -> tuple[records.Build, dict[str, Path]]:
    """The build record, and the build tree's file behind each artifact (published by _publish)."""
    k, b, out = ctx.kernel, ctx.board, _out(ctx)
    vmlinux = out / "vmlinux"
    if not vmlinux.exists():
        raise BuildFailed(f"build of {b.name}/{k.id}: make succeeded but {vmlinux} is missing")
    comp_target = b.image.target if b.image.target in k.arch.images else k.arch.compressed_image
    artifacts = {"vmlinux": vmlinux, "config": _dot_config(ctx)}
    smap = out / "System.map"
    if smap.exists():
        artifacts["System.map"] = smap
    comp = out / k.arch.images[k.arch.compressed_image]
    boot = out / k.arch.images[comp_target]
    for f, what in ((comp, "compressed image"), (boot, "boot image")):
        if not f.exists():
            raise BuildFailed(f"build of {b.name}/{k.id}: the {what} {f} is missing after make")
    artifacts[comp.name] = comp
    artifacts[boot.name] = boot
    raw = out / k.arch.uncompressed_image if k.arch.uncompressed_image else None
    if raw is not None and raw.exists():
        artifacts[raw.name] = raw
    if b.image.uimage:
        artifacts["uImage"] = out / "uImage.bringup"
    if k.dtb:
        found = sorted(out.glob(f"arch/{k.arch.srcarch}/boot/dts/**/{k.dtb}"))
        if not found:
            raise BuildFailed(f"build of {b.name}/{k.id}: dtb {k.dtb} was not built")
        artifacts["dtb"] = found[0]
    try:
        elf = elfsize.section_sizes(vmlinux)
    except ValueError as e:
        raise BuildFailed(f"build of {b.name}/{k.id}: {e}") from None
    sizes = {
        "sections": elf["sections"],
        "groups": elf["groups"],
        "berkeley": elf["berkeley"],
        "vmlinux_bytes": vmlinux.stat().st_size,
        "compressed_image": {"file": comp.name, "bytes": comp.stat().st_size},
        "boot_image": {"file": boot.name, "bytes": boot.stat().st_size},
        "uncompressed_image": (
            {"file": raw.name, "bytes": raw.stat().st_size} if raw is not None and raw.exists() else None
        ),
        "uimage": (
            {"file": "uImage", "bytes": artifacts["uImage"].stat().st_size}
            if "uImage" in artifacts
            else {"file": boot.name, "bytes": boot.stat().st_size}
            if boot.name == "uImage"
            else None
        ),
    }
    text = ctx.log_path.read_text(errors="replace")
    warnings = len(re.findall(r": warning:", text))
    errors = len(re.findall(r": error:", text))
    real = sum(s.real for s in ctx.steps)
    user = sum(s.user for s in ctx.steps)
    sys_ = sum(s.sys for s in ctx.steps)
    from bringup.util import paths

    data = {
        "status": "ok",
        "board": b.name,
        "kernel": k.id,
        "description": k.description,
        "key": key,
        "started": started,
        "finished": clock.now(),
        "kernelrelease": _kernelrelease(ctx),
        "version": ctx.src.version,
        "era": k.era.name,
        "arch": k.arch.name,
        "kernel_arch": k.arch.kernel_arch,
        "source": ctx.src.detail
        | {"tree": str(ctx.src.path)}
        | ({"private_copy": str(ctx.private_copy)} if ctx.private_copy else {}),
        "fixes": [fix_record(k, f) for f in ctx.fixes],
        "toolchain": {
            "cross_compile": k.cross_compile,
            "gcc": ctx.tc.gcc,
            "version": ctx.tc.version,
            "ccache": bool(ctx.tc.ccache),
        },
        "config": {
            "defconfig": k.defconfig,
            "config_file": k.config_file,
            "fragments": list(k.fragments),
            "sha256": hashlib.sha256(_dot_config(ctx).read_bytes()).hexdigest(),
            "dropped": dropped,
        },
        "time": {
            "real": round(real, 3),
            "user": round(user, 3),
            "sys": round(sys_, 3),
            "clock": "monotonic; user/sys from wait4() rusage of each make process tree",
            "steps": [
                {"name": s.name, "real": round(s.real, 3), "user": round(s.user, 3), "sys": round(s.sys, 3)}
                for s in ctx.steps
                if s.name != "mkimage"
            ],
        },
        "jobs": ctx.jobs,
        "ccache": _ccache_stats(ctx),
        "kbuild_commands": kbuild_commands(text.encode()) or None,
        "sizes": sizes,
        "warnings": warnings,
        "errors": errors,
        "artifacts": {
            name: f"images/{Path(p).name if name != 'config' else 'config'}" for name, p in artifacts.items()
        },
        "commands": [shlex.join(s.argv) for s in ctx.steps],
        "reproduce": f"scripts/bringup build-all --board {b.name} --kernel {k.id} --force",
        "build_dir": str(ctx.builddir),
        "log": "build.log",
        "host": {"nproc": os.cpu_count(), "bringup_root": str(paths.ROOT)},
    }
    try:
        return records.validate(data, records.Build, str(ctx.recdir / "build.json")), artifacts
    except records.RecordError as e:
        raise BuildFailed(f"build of {b.name}/{k.id}: {e}") from None


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


def _write_good(recdir: Path, rec: records.Build) -> None:
    """The good record, last (its images and log are in place), and no stale failure beside it."""
    records.write(recdir / "build.json", rec)
    for stale in ("build-failed.json", "build-failed.log"):
        (recdir / stale).unlink(missing_ok=True)


def _swap_images(recdir: Path) -> None:
    """images.new/ becomes images/; the old images are gone only once the new are in place."""
    new, old, trash = recdir / "images.new", recdir / "images", recdir / "images.old"
    if trash.exists():
        shutil.rmtree(trash)
    if old.exists():
        old.rename(trash)
    new.rename(old)
    if trash.exists():
        shutil.rmtree(trash)


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


def _up_to_date(good: Path, key: str) -> records.Build | None:
    """The good build's record when it was made from this key and its images are there."""
    if not good.exists():
        return None
    try:
        rec = records.read(good, records.Build)
    except BringupError:
        return None
    if rec.key != key or not all((good.parent / p).exists() for p in rec.artifacts.values()):
        return None
    return rec


STORE_KEEP = 3  # builds kept per board and kernel in the cache's result store


def _store_dir(cache: Path, board: str, kernel: str) -> Path:
    return Path(cache) / "results" / board / kernel


def _stored(cache: Path, board: str, kernel: str, key: str) -> Path | None:
    """The stored good build of this key, when it is whole (record, log and images)."""
    d = _store_dir(cache, board, kernel) / key
    rec = _up_to_date(d / "build.json", key)
    if rec is None or not (d / "build.log").exists():
        return None
    return d


def _copy_tree(src: Path, dest: Path) -> None:
    """Files hard-linked where the file system allows it (images are never written in
    place: a new build publishes new files), copied otherwise."""

    def link_or_copy(a: str, b: str) -> None:
        try:
            os.link(a, b)
        except OSError:
            shutil.copy2(a, b)

    shutil.copytree(src, dest, copy_function=link_or_copy)


def _store(cache: Path, board: str, kernel: str, key: str, recdir: Path) -> None:
    """Keep this good build under its key: written beside, renamed into place, so a
    reader sees a whole build or none; the oldest beyond STORE_KEEP are dropped."""
    base = _store_dir(cache, board, kernel)
    base.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".new-", dir=base))
    try:
        _copy_tree(recdir / "images", tmp / "images")
        shutil.copy2(recdir / "build.log", tmp / "build.log")
        shutil.copy2(recdir / "build.json", tmp / "build.json")
        final = base / key
        if final.exists():
            shutil.rmtree(final)
        tmp.rename(final)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)  # the store is a convenience: the build itself is published
        return
    kept = sorted(
        (d for d in base.iterdir() if d.is_dir() and not d.name.startswith(".")), key=lambda d: d.stat().st_mtime
    )
    for old in kept[:-STORE_KEEP]:
        shutil.rmtree(old, ignore_errors=True)


def _restore(stored: Path, recdir: Path) -> records.Build:
    """The stored build copied into recdir, images first and the record last (as _publish)."""
    recdir.mkdir(parents=True, exist_ok=True)
    new = recdir / "images.new"
    if new.exists():
        shutil.rmtree(new)
    _copy_tree(stored / "images", new)
    _swap_images(recdir)
    shutil.copy2(stored / "build.log", recdir / "build.log.new")
    os.replace(recdir / "build.log.new", recdir / "build.log")
    rec = records.read(stored / "build.json", records.Build)
    _write_good(recdir, rec)
    return rec


def _private_copy(src: Path, dest: Path, say, why: str = "2.4-era kernels build in place") -> Path:
    """A private copy of a tree (rsync keeps it incremental): 2.4-era trees cannot build
    out of tree, and era fixes are applied to a copy, never to the source."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    say(f"  copying the tree to {dest} ({why})")
    if shutil.which("rsync"):
        p = subprocess.run(["rsync", "-a", "--exclude", ".git", f"{src}/", f"{dest}/"], capture_output=True, text=True)
        if p.returncode != 0:
            raise BringupError(f"copying {src} to {dest} failed: {p.stderr.strip()}")
    else:
        shutil.copytree(src, dest, dirs_exist_ok=True, symlinks=True)
    return dest


# --- ccache -------------------------------------------------------------------
#
# Each build counts its own hits in a stats log of its own (CCACHE_STATSLOG: one
# line per counter per compiler call), never by zeroing or reading the shared cache's
# counters, which other builds (another checkout, CI beside a user) change meanwhile.
# Depend mode: kbuild passes -Wp,-MMD, so on a miss ccache takes the headers from the
# compiler's dependency file instead of running the preprocessor first; measured with
# bench/ccache_bench.py (docs/building.md), it is what brings a cold build to the
# compiler's own cost.
CCACHE_SETTINGS = {"CCACHE_DEPEND": "1"}  # bringup's defaults; the user's environment wins
CCACHE_CONFIG_KEYS = ("depend_mode", "direct_mode", "compression", "compression_level", "compiler_check")


def _stats_log(ctx: Ctx) -> Path:
    return ctx.builddir / "ccache-stats.log"


def ccache_log_counts(text: str) -> dict:
    """Hits and misses from a ccache stats log (`# <input>` lines, then one counter name a
    line per call).  Counted by counter, not by block, so interleaved blocks count alike."""
    names = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]
    hits = names.count("direct_cache_hit") + names.count("preprocessed_cache_hit")
    misses = names.count("cache_miss")
    total = hits + misses
    return {"hits": hits, "misses": misses, "hit_rate": round(hits / total, 4) if total else None}


def _ccache_stats(ctx: Ctx) -> dict | None:
    """This build's hits and misses (its own stats log), and the ccache settings it ran with."""
    if not ctx.tc.ccache:
        return None
    try:
        text = _stats_log(ctx).read_text(errors="replace")
    except OSError:
        text = ""  # no call was cacheable or reached ccache
    return ccache_log_counts(text) | {"settings": _ccache_settings(ctx)}


def _ccache_settings(ctx: Ctx) -> dict | None:
    """The settings that decide ccache's cost and hits, as `ccache --show-config` reports
    them for this build's environment, with its version and the cache's file system."""
    assert ctx.tc.ccache
    env = _env(ctx)
    try:
        ver = subprocess.run([ctx.tc.ccache, "--version"], capture_output=True, text=True, env=env, timeout=30)
        conf = subprocess.run([ctx.tc.ccache, "--show-config"], capture_output=True, text=True, env=env, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    values = parse_ccache_config(conf.stdout)
    if not all(key in values for key in (*CCACHE_CONFIG_KEYS, "cache_dir")):
        return None
    m = re.search(r"ccache version (\S+)", ver.stdout)
    cache_dir = Path(values["cache_dir"])
    return {
        "version": m.group(1) if m else "unknown",
        "depend_mode": values["depend_mode"] == "true",
        "direct_mode": values["direct_mode"] == "true",
        "compression": values["compression"] == "true",
        "compression_level": int(values["compression_level"]),
        "compiler_check": values["compiler_check"],
        "cache_dir": str(cache_dir),
        "filesystem": filesystem_type(cache_dir),
        "same_filesystem_as_build": _same_device(cache_dir, ctx.builddir),
    }


def parse_ccache_config(text: str) -> dict[str, str]:
    """`ccache --show-config` lines, '(origin) key = value', as key -> value."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"\([^)]*\)\s+(\w+)\s+=\s?(.*)$", line.strip())
        if m:
            out[m.group(1)] = m.group(2).strip()
    return out


def filesystem_type(p: Path, mounts: str | None = None) -> str | None:
    """The type of the file system `p` is on: the longest mount point of /proc/mounts above it."""
    if mounts is None:
        try:
            mounts = Path("/proc/mounts").read_text()
        except OSError:
            return None
    p = Path(os.path.realpath(p))
    best, kind = -1, None
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        mnt = Path(fields[1].replace("\\040", " "))
        if (p == mnt or mnt in p.parents) and len(mnt.parts) > best:
            best, kind = len(mnt.parts), fields[2]
    return kind


def _same_device(a: Path, b: Path) -> bool | None:
    try:
        return os.stat(a).st_dev == os.stat(b).st_dev
    except OSError:
        return None


def _log(ctx: Ctx, text: str) -> None:
    with open(ctx.log_path, "a") as f:
        f.write(text.rstrip("\n") + "\n")


def _tail(p: Path, n: int) -> list[str]:
    try:
        return p.read_text(errors="replace").splitlines()[-n:]
    except OSError:
        return []


def _rel(p: Path) -> str:
    from bringup.util import paths

    return paths.rel(p)
