#!/usr/bin/env python3
"""Build benchmark: prints, side by side from one run,
  - bringup's build wall time against bare `make` on the same tree and .config
    (both without ccache, each in a fresh O= directory),
  - bringup with ccache cold (an empty cache) against bare make, and warm against cold
    (fresh O= directory each time), with each build's own hit rate,
  - the no-op rerun of build-all,
  - the ccache settings the builds ran with (from the build record).
With --rounds N the four builds are repeated N times (the ratios of each round, then
their median and range: the machine may be shared).  Uses a scratch cache that shares
the real cache's downloads and sources (nothing is downloaded again) but has its own
build trees and ccache.

    .venv/bin/python bench/build_bench.py --board qemu-arm --kernel 5.10 [--rounds 2]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bringup.targets  # noqa: F401  (the kinds of target register themselves before a board loads)
from bringup.builder.kernel import FIXED_ENV
from bringup.model.board import load_board
from bringup.util import paths

ROOT = Path(__file__).resolve().parents[1]


class Took:
    """Wall and CPU (user+sys of the whole process tree, wait4) seconds, summed over commands."""

    def __init__(self, wall: float = 0.0, cpu: float = 0.0) -> None:
        self.wall, self.cpu = wall, cpu

    def __add__(self, other: "Took") -> "Took":
        return Took(self.wall + other.wall, self.cpu + other.cpu)


def run(argv, env, log) -> Took:
    t = time.monotonic()
    with open(log, "ab") as f:
        p = subprocess.Popen(argv, env=env, stdout=f, stderr=subprocess.STDOUT)
        _, status, ru = os.wait4(p.pid, 0)
    took = Took(time.monotonic() - t, ru.ru_utime + ru.ru_stime)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench: {' '.join(argv[:4])}... failed (exit {os.waitstatus_to_exitcode(status)}); log {log}")
    return took


def settings_line(cc: dict | None) -> str:
    s = (cc or {}).get("settings")
    if not s:
        return "ccache: no settings recorded"
    return (
        f"ccache {s['version']}: depend_mode={str(s['depend_mode']).lower()} "
        f"direct_mode={str(s['direct_mode']).lower()} compression={str(s['compression']).lower()} "
        f"(level {s['compression_level']}) compiler_check={s['compiler_check']}; cache on {s['filesystem']}"
        f"{' (same file system as the build)' if s['same_filesystem_as_build'] else ''}"
    )


def spread(xs: list[float], digits: int = 2) -> str:
    if len(xs) == 1:
        return f"{xs[0]:.{digits}f}"
    return f"{statistics.median(xs):.{digits}f} ({min(xs):.{digits}f}-{max(xs):.{digits}f})"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--board", default="qemu-arm")
    ap.add_argument("--kernel", help="kernel id (default: the board's first)")
    ap.add_argument("--rounds", type=int, default=1, help="repeat the four builds (default 1)")
    a = ap.parse_args()
    board = load_board(a.board)
    k = board.kernel(a.kernel) if a.kernel else board.kernels[0]
    real_cache = paths.cache_dir()
    scratch = Path(tempfile.mkdtemp(prefix="bringup-bench-"))
    for d in ("apt", "src", "downloads"):
        if (real_cache / d).exists():
            (scratch / d).symlink_to(real_cache / d)
    logs = scratch / "logs"
    log = scratch / "bench.log"
    env = dict(os.environ, BRINGUP_CACHE=str(scratch), BRINGUP_LOGS=str(logs))
    cli = [sys.executable, "-m", "bringup"]
    build = cli + ["build-all", "--board", board.name, "--kernel", k.id, "--force"]
    recfile = logs / board.name / k.id / "build.json"
    print(f"bench: {board.name}/{k.id}, scratch {scratch}", file=sys.stderr)
    times: dict[str, list[Took]] = {}
    hits: dict[str, list[float]] = {}
    warm_cc = None
    for r in range(a.rounds):
        # 1. bringup without ccache: also yields the .config and the source tree for bare make
        t_bringup = run(build, dict(env, BRINGUP_CCACHE="0"), log)
        rec = json.loads(recfile.read_text())
        tree = Path(rec["source"]["tree"])

        # 2. bare make on the same tree and .config, no ccache, fresh O=
        bare_o = scratch / "bare"
        shutil.rmtree(bare_o, ignore_errors=True)
        bare_o.mkdir()
        shutil.copyfile(logs / board.name / k.id / "images" / "config", bare_o / ".config")
        target = board.image.target if board.image.target in k.arch.images else k.arch.compressed_image
        base = [
            "make",
            "-C",
            str(tree),
            f"O={bare_o}",
            f"-j{os.cpu_count()}",
            f"ARCH={k.arch.kernel_arch}",
            f"CROSS_COMPILE={k.cross_compile}",
        ]
        menv = {var: val for var, val in dict(os.environ, **FIXED_ENV).items() if not var.startswith("CCACHE_")}
        t_bare = run(base + ["olddefconfig"], menv, log) + run(base + [target], menv, log)

        # 3. ccache cold (an empty cache), then warm (fresh build tree each time)
        shutil.rmtree(scratch / "ccache", ignore_errors=True)
        t_cold = run(build, env, log)
        cold_cc = json.loads(recfile.read_text())["ccache"]
        t_warm = run(build, env, log)
        warm_cc = json.loads(recfile.read_text())["ccache"]
        for name, t in (("bare", t_bare), ("bringup", t_bringup), ("cold", t_cold), ("warm", t_warm)):
            times.setdefault(name, []).append(t)
        hits.setdefault("cold", []).append((cold_cc or {}).get("hit_rate") or 0.0)
        hits.setdefault("warm", []).append((warm_cc or {}).get("hit_rate") or 0.0)
        print(
            f"  round {r + 1}: bare {t_bare.wall:.1f} s, bringup {t_bringup.wall:.1f} s, "
            f"cold {t_cold.wall:.1f} s, warm {t_warm.wall:.1f} s",
            file=sys.stderr,
        )

    # 4. no-op rerun
    t_noop = run(cli + ["build-all", "--board", board.name, "--kernel", k.id], env, log)

    def ratio(a_: str, b_: str, cpu: bool = False) -> list[float]:
        return [(x.cpu / y.cpu) if cpu else (x.wall / y.wall) for x, y in zip(times[a_], times[b_], strict=True)]

    med = {name: statistics.median(t.wall for t in ts) for name, ts in times.items()}
    cpu = {name: statistics.median(t.cpu for t in ts) for name, ts in times.items()}
    rows = [
        ("bare make (no ccache)", med["bare"], "1.00", cpu["bare"], "1.00"),
        (
            "bringup build-all (no ccache)",
            med["bringup"],
            f"{spread(ratio('bringup', 'bare'))} x bare make",
            cpu["bringup"],
            spread(ratio("bringup", "bare", cpu=True)),
        ),
        (
            "bringup, ccache cold",
            med["cold"],
            f"{spread(ratio('cold', 'bare'))} x bare make (hit rate {spread(hits['cold'], 4)})",
            cpu["cold"],
            spread(ratio("cold", "bare", cpu=True)),
        ),
        (
            "bringup, ccache warm",
            med["warm"],
            f"{spread(ratio('warm', 'cold'))} x cold (hit rate {spread(hits['warm'], 4)})",
            cpu["warm"],
            f"{spread(ratio('warm', 'cold', cpu=True))} x cold",
        ),
        ("bringup, no-op rerun", t_noop.wall, f"{t_noop.wall / med['cold']:.4f} x cold", t_noop.cpu, ""),
    ]
    n = f", median of {a.rounds} rounds (range)" if a.rounds > 1 else ", one round"
    print(f"Build benchmark: {board.name}/{k.id}, make -j{os.cpu_count()}, wall seconds (monotonic){n}")
    print("  (cpu: user+sys seconds of the whole process tree, less disturbed by other load than wall time)")
    for name, t, rat, c, crat in rows:
        print(f"  {name:32s} {t:8.1f} s   {rat:50s} cpu {c:7.1f} s {crat}")
    print(f"  {settings_line(warm_cc)}")
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
