"""mem_eat, seed 002's malloc-until-failure allocator (scripts/mem_eat/mem_eat.c), built
static for a board's userspace into the shared cache: under a lock per output (two
boards or worktrees may want it at once) and renamed into place whole."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from bringup.builder import rootfs
from bringup.errors import BringupError
from bringup.model.board import Board
from bringup.util import lock, paths


def mem_eat_binary(board: Board, cache: Path, say=print) -> Path:
    """The cached static mem_eat for the board's architecture and libc, built when absent
    or older than its source."""
    cc = f"{rootfs.userspace_prefix(board, cache)}gcc"
    if not shutil.which(cc):
        raise BringupError(f"mem_eat needs {cc} for the {board.arch.debian_arch} userspace (make deps)")
    src = paths.ROOT / "scripts" / "mem_eat" / "mem_eat.c"
    name = "mem_eat" if board.libc == "glibc" else f"mem_eat-{board.libc}"
    out = cache / "userspace" / board.arch.debian_arch / name
    out.parent.mkdir(parents=True, exist_ok=True)
    with lock.exclusive(out.with_name(f"{name}.lock"), f"mem_eat for {board.arch.debian_arch}", say):
        if out.exists() and out.stat().st_mtime >= src.stat().st_mtime:
            return out
        tmp = out.with_name(f".{name}.{os.getpid()}.tmp")
        try:
            p = subprocess.run([cc, "-static", "-O2", "-o", str(tmp), str(src)], capture_output=True, text=True)
            if p.returncode != 0:
                raise BringupError(f"building mem_eat with {cc} failed: {p.stderr.strip()[-300:]}")
            os.replace(tmp, out)
        finally:
            tmp.unlink(missing_ok=True)
    return out
