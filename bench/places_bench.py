#!/usr/bin/env python3
"""Several places against one: the wall time of one boot-timing study (both
kernels of qemu-arm, N rounds: 2N boots) on one labgrid place, and the same
study spread over two identical places (scripts/qemu-lab's lab: coordinator,
exporter, simplerest power switch, two QEMU boards with U-Boot), in alternation.
Prints the wall time of each, their ratio, and the Places rows of the report of
the last two-place run.

  .venv/bin/python bench/places_bench.py -n 4 --repeat 2

Needs logs/qemu-arm/<kernel>/build.json for both kernels (make build-all BOARD=qemu-arm).
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.integration.lab import Lab  # noqa: E402

KERNELS = {"5.10": ("linux-source-5.10", "bullseye"), "6.12": ("linux-source-6.12", "bookworm-backports")}
BOARD = """
name = "placebench"
arch = "arm"
memory_mb = 512
console = "ttyAMA0,115200"
earlycon = "pl011,0x9000000"
boot = "u-boot"
[image]
target = "zImage"
uimage = true
load_address = "0x42000000"
[labgrid]
places = ["pb-1", "pb-2"]
coordinator = "{address}"
[tftp]
serverip = "10.0.2.2"
[uboot]
binary = "(in the board's flash)"
kernel_addr = "0x42000000"
initrd_addr = "0x44000000"
"""


def study(board: Path, logs: Path, places: str, runs: int) -> float:
    env = {**os.environ, "BRINGUP_LOGS": str(logs), "BRINGUP_HOST_GUARD": "0"}
    argv = [sys.executable, "-m", "bringup", "boot-timing", "--board", str(board), "--runs", str(runs)]
    t = time.monotonic()
    p = subprocess.run([*argv, "--places", places], capture_output=True, text=True, env=env)
    wall = time.monotonic() - t
    if p.returncode != 0:
        raise SystemExit(f"boot-timing --places {places} failed: {p.stderr[-1500:]}")
    return wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=4, help="rounds per study (each boots both kernels)")
    ap.add_argument("--repeat", type=int, default=2, help="studies of each kind, alternating")
    a = ap.parse_args()
    src = Path(os.environ.get("BRINGUP_LOGS", ROOT / "logs")) / "qemu-arm"
    for k in KERNELS:
        if not (src / k / "build.json").exists():
            print(f"places_bench: no {src / k / 'build.json'}: make build-all BOARD=qemu-arm", file=sys.stderr)
            return 1
    work = Path(tempfile.mkdtemp(prefix="bringup-places-bench-"))
    logs = work / "logs"
    for k in KERNELS:
        shutil.copytree(src / k, logs / "placebench" / k, ignore=shutil.ignore_patterns("boot", "footprint-runs"))
    lab = Lab(work / "lab")
    try:
        lab.add_board("board1")
        lab.add_board("board2")
        lab.export()
        lab.add_place("pb-1", "board1")
        lab.add_place("pb-2", "board2")
        board = work / "placebench.toml"
        tables = "".join(
            f'[[kernels]]\nid = "{k}"\nsource = {{ debian = "{d}", suite = "{s}" }}\ndefconfig = "tinyconfig"\n'
            'fragments = ["fragments/bringup-base.config", "fragments/arm-virt.config"]\n'
            for k, (d, s) in KERNELS.items()
        )
        board.write_text(BOARD.format(address=lab.address) + tables)
        walls: dict[str, list[float]] = {"pb-1": [], "pb-1,pb-2": []}
        for i in range(a.repeat):
            # alternating, and the last study spread over both places (its report has Places rows)
            for places in ["pb-1", "pb-1,pb-2"] if (a.repeat - 1 - i) % 2 == 0 else ["pb-1,pb-2", "pb-1"]:
                w = study(board, logs, places, a.n)
                walls[places].append(w)
                print(f"  {places:10s} {a.n} rounds x {len(KERNELS)} kernels: {w:6.1f} s", flush=True)
        one, two = statistics.median(walls["pb-1"]), statistics.median(walls["pb-1,pb-2"])
        print(
            f"median wall time, {a.n * len(KERNELS)} boots: 1 place {one:.1f} s, 2 places {two:.1f} s, "
            f"ratio {two / one:.2f}; per boot {one / (a.n * len(KERNELS)):.1f} s and "
            f"{two / (a.n * len(KERNELS)):.1f} s"
        )
        s = json.loads((logs / "placebench" / "boot-timing.json").read_text())
        print(f"last study: {s['places']}, rounds on each: { {p: s['round_places'].count(p) for p in s['places']} }")
        env = {**os.environ, "BRINGUP_LOGS": str(logs)}
        subprocess.run(
            [sys.executable, "-m", "bringup", "report", "--board", str(board)], capture_output=True, env=env, check=True
        )
        md = (logs / "placebench" / "report" / "report.md").read_text()
        if "### Places" in md:
            print("### Places" + md.split("### Places", 1)[1].split("\n## ", 1)[0])
    finally:
        lab.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
