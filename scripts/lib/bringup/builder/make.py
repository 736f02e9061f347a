"""Driving make for a kernel build: its argument list (ARCH, CROSS_COMPILE, the
host compiler, the era's make variables), running one step with its log, timing
and progress (kbuild's command lines counted against the last build's), and
stopping it with its process group."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
import threading
import time
from pathlib import Path

from bringup import records
from bringup.builder.context import Ctx, Step, _env, _log, _rel
from bringup.errors import BringupError, BuildFailed
from bringup.model.board import EraFix
from bringup.util import procutil
from bringup.util.progress import Progress


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
