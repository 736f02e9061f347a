#!/usr/bin/env python3
"""The A/A check twice, side by side: on a quiet host, and with two CPU hogs started
halfway through (a build in another terminal, a shared CI machine).  Prints what the
summary claims (must be nothing both times) and the false-positive rates.

    .venv/bin/python bench/aa_bench.py --board qemu-arm --kernel 6.12 [--runs 6] [--lmbench-runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time

from bringup.util import paths

HOG = "import time\nt=time.time()\nwhile time.time()-t<{secs}: pass\n"


def run_aa(args, load_after: float | None) -> tuple[dict, float]:
    hogs: list[subprocess.Popen] = []
    stop = threading.Event()

    def start_hogs() -> None:
        if not stop.wait(load_after or 0):
            hogs.extend(subprocess.Popen([sys.executable, "-c", HOG.format(secs=3600)]) for _ in range(2))

    t = threading.Thread(target=start_hogs, daemon=True)
    if load_after is not None:
        t.start()
    t0 = time.monotonic()
    argv = [
        sys.executable,
        "-m",
        "bringup",
        "aa",
        "--board",
        args.board,
        "--runs",
        str(args.runs),
        "--lmbench",
        args.lmbench,
        "--lmbench-runs",
        str(args.lmbench_runs),
    ]
    if args.kernel:
        argv += ["--kernel", args.kernel]
    try:
        p = subprocess.run(argv, capture_output=True, text=True)
    finally:
        stop.set()
        for h in hogs:
            h.kill()
            h.wait()
    wall = time.monotonic() - t0
    if p.returncode not in (0, 1):
        sys.exit(f"aa failed ({p.returncode}): {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ''}")
    result = json.loads((paths.logs_dir() / f"{args.board}-aa" / "aa.json").read_text())
    return result, wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--board", default="qemu-arm")
    ap.add_argument("--kernel")
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--lmbench", default="quick", choices=("quick", "full", "none"))
    ap.add_argument("--lmbench-runs", type=int, default=5)
    ap.add_argument(
        "--load-after",
        type=float,
        default=None,
        help="seconds before the hogs start in the loaded run (default: half the quiet run's time)",
    )
    args = ap.parse_args()
    os.environ.setdefault("BRINGUP_HOST_GUARD", "1")
    quiet, quiet_wall = run_aa(args, None)
    loaded, loaded_wall = run_aa(args, args.load_after if args.load_after is not None else quiet_wall / 2)
    print(
        f"A/A check of {args.board}/{args.kernel or '(last kernel)'}: {args.runs} boot rounds, "
        f"{args.lmbench_runs} footprint rounds, lmbench {args.lmbench}"
    )
    print("| host | wall | tested | p < 0.05 raw | significant after BH | summary claims |")
    print("|---|---|---|---|---|---|")
    for name, r, wall in (("quiet", quiet, quiet_wall), ("2 CPU hogs from halfway", loaded, loaded_wall)):
        raw = f"{r['raw_false_positives']} ({100 * (r['raw_rate'] or 0):.1f} %)"
        print(
            f"| {name} | {wall:.0f} s | {r['tested']} | {raw} | {r['corrected_false_positives']} | {len(r['claims'])} |"
        )
    return 1 if quiet["claims"] or loaded["claims"] else 0


if __name__ == "__main__":
    sys.exit(main())
