#!/usr/bin/env python3
"""Build benchmark: prints, side by side from one run,
  - bringup's build wall time against bare `make` on the same tree and .config
    (both without ccache, each in a fresh O= directory),
  - ccache cold against warm (bringup, fresh O= directory each time),
  - the no-op rerun of build-all.
Uses a scratch cache that shares the real cache's downloads and sources
(nothing is downloaded again) but has its own build trees and ccache.

    .venv/bin/python bench/build_bench.py --board qemu-arm --kernel 5.10
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bringup.build.kernel import FIXED_ENV
from bringup.model.board import load_board
from bringup.util import paths

ROOT = Path(__file__).resolve().parents[1]


def run(argv, env, log):
    t = time.monotonic()
    with open(log, "ab") as f:
        p = subprocess.run(argv, env=env, stdout=f, stderr=subprocess.STDOUT)
    took = time.monotonic() - t
    if p.returncode != 0:
        sys.exit(f"bench: {' '.join(argv[:4])}... failed (exit {p.returncode}); log {log}")
    return took


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--board", default="qemu-arm")
    ap.add_argument("--kernel", help="kernel id (default: the board's first)")
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
    print(f"bench: {board.name}/{k.id}, scratch {scratch}", file=sys.stderr)

    # 1. bringup without ccache: also yields the .config and the source tree for bare make
    t_bringup = run(build, dict(env, BRINGUP_CCACHE="0"), log)
    import json

    rec = json.loads((logs / board.name / k.id / "build.json").read_text())
    tree = Path(rec["source"]["tree"])

    # 2. bare make on the same tree and .config, no ccache, fresh O=
    bare_o = scratch / "bare"
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
    menv = dict(os.environ, **FIXED_ENV)
    t_bare = run(base + ["olddefconfig"], menv, log) + run(base + [target], menv, log)

    # 3. ccache cold, then warm (fresh build tree each time)
    shutil.rmtree(scratch / "build", ignore_errors=True)
    t_cold = run(build, env, log)
    shutil.rmtree(scratch / "build", ignore_errors=True)
    t_warm = run(build, env, log)
    warm = json.loads((logs / board.name / k.id / "build.json").read_text())["ccache"]

    # 4. no-op rerun
    t_noop = run(cli + ["build-all", "--board", board.name, "--kernel", k.id], env, log)

    rows = [
        ("bare make (no ccache)", t_bare, "1.00"),
        ("bringup build-all (no ccache)", t_bringup, f"{t_bringup / t_bare:.2f} x bare make"),
        ("bringup, ccache cold", t_cold, f"{t_cold / t_bare:.2f} x bare make"),
        ("bringup, ccache warm", t_warm, f"{t_warm / t_cold:.2f} x cold (hit rate {warm['hit_rate']})"),
        ("bringup, no-op rerun", t_noop, f"{t_noop / t_cold:.4f} x cold"),
    ]
    print(f"Build benchmark: {board.name}/{k.id}, make -j{os.cpu_count()}, wall seconds (monotonic)")
    for name, t, ratio in rows:
        print(f"  {name:32s} {t:8.1f} s   {ratio}")
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
