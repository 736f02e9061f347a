"""The state one kernel build carries through its steps (Ctx), a make step's
timing (Step), what build_kernel returns (Built), the environment make runs in
(reproducible values, ccache's settings and statistics log) and the build log."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bringup import records
from bringup.builder import sources, toolchain
from bringup.model.board import Board, EraFix, Kernel
from bringup.util.progress import Progress

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


def _stats_log(ctx: Ctx) -> Path:
    return ctx.builddir / "ccache-stats.log"


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
