#!/usr/bin/env python3
"""Where a cold ccache's cost goes: a small, repeatable comparison on part of a kernel.

Builds a few directories of one kernel (default: kernel/ and mm/) with the kernel's
recorded .config, bare (no ccache) and under each ccache setting cold (an empty cache
under /tmp) and then warm (the same cache, the objects removed), interleaved and
repeated so that a shared machine's load falls on every variant alike.  Prints, per
variant, the wall and CPU (user+sys of make's tree) seconds of every round and the
ratios to the bare build of the same round, with their spread.

    .venv/bin/python bench/ccache_bench.py --board qemu-arm --kernel 5.10 [--rounds 3]
        [--dirs kernel mm] [--variants default depend depend-nocompress]

The shared cache (~/.cache/bringup) is only read: its extracted source and the
kernel's last .config (its build record's images/config, else its build tree's).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bringup.targets  # noqa: F401  (the kinds of target register themselves before a board loads)
from bringup.builder import sources
from bringup.builder.kernel import FIXED_ENV
from bringup.model.board import load_board
from bringup.util import paths

# ccache settings compared; "bare" runs the compiler without ccache.  ccache reads a boolean
# variable as true when it is set at all: CCACHE_NOCOMPRESS=1, never CCACHE_COMPRESS=0.
VARIANTS: dict[str, dict[str, str]] = {
    "bare": {},
    "default": {},  # ccache's defaults: direct mode, preprocessor run on a miss, zstd
    "nocompress": {"CCACHE_NOCOMPRESS": "1"},
    "depend": {"CCACHE_DEPEND": "1"},
    "depend-nocompress": {"CCACHE_DEPEND": "1", "CCACHE_NOCOMPRESS": "1"},
    "depend-inode": {"CCACHE_DEPEND": "1", "CCACHE_INODECACHE": "1"},
    "content": {"CCACHE_COMPILERCHECK": "content"},
}


def timed(argv: list[str], env: dict, log: Path) -> tuple[float, float]:
    """Wall and CPU (user+sys of the whole process tree) seconds of one command."""
    t0 = time.monotonic()
    with open(log, "ab") as f:
        p = subprocess.Popen(argv, env=env, stdout=f, stderr=subprocess.STDOUT)
        _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"ccache-bench: {' '.join(argv[:6])} ... failed; log {log}")
    return wall, ru.ru_utime + ru.ru_stime


def remove_objects(out: Path, dirs: list[str]) -> None:
    for d in dirs:
        for f in (out / d).rglob("*"):
            if f.suffix in (".o", ".a") and f.is_file():
                f.unlink()


def find_config(board, k, given: Path | None) -> Path:
    """The kernel's .config: the one given, its record's images/config, its build tree's."""
    cands = [given] if given else []
    cands += [
        paths.logs_dir() / board.name / k.id / "images" / "config",
        paths.cache_dir() / "build" / board.name / k.id / ".config",
    ]
    for c in cands:
        if c is not None and c.is_file():
            return c
    sys.exit(f"ccache-bench: no .config of {board.name}/{k.id}: build it once (make build-all KERNEL={k.id})")


def report(wall: dict[str, list[float]], cpu: dict[str, list[float]]) -> None:
    def spread(xs: list[float]) -> str:
        return f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})"

    print(f"  {'variant':24s} {'wall s (median)':>15s} {'cpu s':>8s}   x bare wall, median (range)   x bare cpu")
    bare_w, bare_c = wall["bare"], cpu["bare"]
    for name in wall:
        rw = [w / b for w, b in zip(wall[name], bare_w, strict=True)]
        rc = [c / b for c, b in zip(cpu[name], bare_c, strict=True)]
        print(
            f"  {name:24s} {statistics.median(wall[name]):15.1f} {statistics.median(cpu[name]):8.1f}   "
            f"{spread(rw):28s}   {spread(rc)}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--board", default="qemu-arm")
    ap.add_argument("--kernel", help="kernel id (default: the board's first)")
    ap.add_argument("--config", type=Path, help="the .config to build with (default: the kernel's last build's)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dirs", nargs="+", default=["kernel", "mm"], help="kernel directories built (default kernel mm)")
    ap.add_argument("--variants", nargs="+", default=["default", "depend", "depend-nocompress"], choices=VARIANTS)
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    board = load_board(a.board)
    k = board.kernel(a.kernel) if a.kernel else board.kernels[0]
    ccache = shutil.which("ccache")
    if ccache is None:
        sys.exit("ccache-bench: ccache is not installed (Debian package ccache)")
    config = find_config(board, k, a.config)
    tree = sources.prepare(k.source, paths.cache_dir(), log=lambda m: print(f"  {m}", file=sys.stderr)).path
    scratch = Path(tempfile.mkdtemp(prefix="bringup-ccache-bench-"))
    shutil.copyfile(config, scratch / "config")
    log = scratch / "bench.log"
    variants = ["bare", *a.variants]
    targets = [d.rstrip("/") + "/" for d in a.dirs]
    print(f"ccache-bench: {board.name}/{k.id} {' '.join(targets)}, scratch {scratch}", file=sys.stderr)
    base_env = {var: val for var, val in dict(os.environ, **FIXED_ENV).items() if not var.startswith("CCACHE_")}

    def make(v: str, goals: list[str]) -> list[str]:
        cc = f"{k.cross_compile}gcc" if v == "bare" else f"{ccache} {k.cross_compile}gcc"
        arch = [f"ARCH={k.arch.kernel_arch}", f"CROSS_COMPILE={k.cross_compile}", f"CC={cc}"]
        return ["make", "-C", str(tree), f"O={scratch / v}", f"-j{a.jobs}", *arch, *k.make_args, *goals]

    def env(v: str, ccdir: Path) -> dict:
        return base_env | {"CCACHE_DIR": str(ccdir), "CCACHE_STATSLOG": f"{ccdir}.stats"} | VARIANTS[v]

    # untimed: one configured, prepared O= tree per variant (the CC differs)
    for v in variants:
        (scratch / v).mkdir()
        shutil.copyfile(scratch / "config", scratch / v / ".config")
        timed(make(v, ["olddefconfig", "prepare"]), env(v, scratch / f"prep-{v}"), log)
    wall: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    for r in range(a.rounds):
        for v in variants[r % len(variants) :] + variants[: r % len(variants)]:  # interleaved, rotated
            ccdir = scratch / f"cc-{v}-{r}"
            for ph in ["bare"] if v == "bare" else ["cold", "warm"]:
                remove_objects(scratch / v, a.dirs)
                w, c = timed(make(v, targets), env(v, ccdir), log)
                name = v if v == "bare" else f"{v} {ph}"
                wall.setdefault(name, []).append(w)
                cpu.setdefault(name, []).append(c)
                print(f"  round {r + 1} {name:24s} wall {w:6.1f} s  cpu {c:6.1f} s", file=sys.stderr)
            shutil.rmtree(ccdir, ignore_errors=True)
    print(f"ccache bench: {board.name}/{k.id} {' '.join(targets)}, make -j{a.jobs}, {a.rounds} rounds, {ccache}")
    for v in a.variants:
        print(f"  {v}: {' '.join(f'{var}={val}' for var, val in VARIANTS[v].items()) or 'ccache defaults'}")
    report(wall, cpu)
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
