#!/usr/bin/env python3
"""labgrid overhead: the same QEMU board (ARM virt + U-Boot + TFTP, one kernel)
booted N times through a labgrid place (scripts/qemu-lab's lab: coordinator,
exporter, simplerest power switch, serial line) and N times as qemu-arm with
bringup's own QEMU target (QEMU's TCP serial socket as the console), in
alternation.  Prints the medians of each milestone (seconds from the reference,
the start of the TFTP load) and of the per-boot printk lag (median and p95, ms),
and the wall time per boot.

  .venv/bin/python bench/labgrid_bench.py --kernel 6.12 -n 5

Needs logs/qemu-arm/<kernel>/build.json (make build-all BOARD=qemu-arm KERNEL=<kernel>).
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

BOARD = """
name = "lgbench-arm"
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
place = "lgbench"
coordinator = "{address}"
watch_interval = {watch}
[tftp]
serverip = "10.0.2.2"
[uboot]
binary = "(in the board's flash)"
kernel_addr = "0x42000000"
initrd_addr = "0x44000000"
[[kernels]]
id = "{kernel}"
source = {{ debian = "linux-source-6.12", suite = "bookworm-backports" }}
defconfig = "tinyconfig"
fragments = ["fragments/bringup-base.config", "fragments/arm-virt.config"]
"""


def boot_timing(board: str, kernel: str, logs: Path) -> tuple[dict, float]:
    env = {**os.environ, "BRINGUP_LOGS": str(logs), "BRINGUP_HOST_GUARD": "0"}
    t = time.monotonic()
    argv = [sys.executable, "-m", "bringup", "boot-timing", "--board", board, "--kernel", kernel, "--runs", "1"]
    p = subprocess.run([*argv, "--path", "u-boot"], capture_output=True, text=True, env=env)
    wall = time.monotonic() - t
    if p.returncode != 0:
        raise SystemExit(f"boot-timing {board} failed: {p.stderr[-1500:]}")
    name = Path(board).stem
    run = sorted((logs / name / kernel / "boot").glob("*-r01"))[-1]
    return json.loads((run / "boot.json").read_text()), wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernel", default="6.12")
    ap.add_argument("-n", type=int, default=5)
    ap.add_argument("--watch", type=float, default=5.0, help="labgrid.watch_interval of the lab board")
    a = ap.parse_args()
    logs = Path(os.environ.get("BRINGUP_LOGS", ROOT / "logs"))
    src = logs / "qemu-arm" / a.kernel
    if not (src / "build.json").exists():
        raise SystemExit(f"no {src}/build.json: make build-all BOARD=qemu-arm KERNEL={a.kernel}")
    work = Path(tempfile.mkdtemp(prefix="lgbench-"))
    blogs = work / "logs"
    for name in ("qemu-arm", "lgbench-arm"):
        shutil.copytree(src, blogs / name / a.kernel, ignore=shutil.ignore_patterns("boot", "footprint-runs"))
    lab = Lab(work / "lab")
    try:
        lab.add_board("board1")
        lab.export()
        lab.add_place("lgbench", "board1")
        board = work / "lgbench-arm.toml"
        board.write_text(BOARD.format(address=lab.address, kernel=a.kernel, watch=a.watch))
        res: dict[str, list] = {"labgrid": [], "qemu socket": []}
        for i in range(a.n):
            for label, b in (("labgrid", str(board)), ("qemu socket", "qemu-arm"))[:: 1 if i % 2 == 0 else -1]:
                rec, wall = boot_timing(b, a.kernel, blogs)
                res[label].append((rec, wall))
                print(f"  {i + 1}/{a.n} {label}: {rec['status']} wall {wall:.1f}s", file=sys.stderr)
    finally:
        lab.close()
    names = [m for m in res["labgrid"][0][0]["milestones"] if all(m in r["milestones"] for r, _ in res["qemu socket"])]
    ref = "kernel_load"
    print(f"kernel {a.kernel}, {a.n} boots each, U-Boot + TFTP, medians (s from {ref}; lag ms)")
    print(f"{'':24s} {'labgrid':>10s} {'qemu socket':>12s} {'delta':>8s}")

    def row(what: str, value, digits: int) -> None:
        v = {label: statistics.median(value(r, wall) for r, wall in rs) for label, rs in res.items()}
        lg, qs = v["labgrid"], v["qemu socket"]
        print(f"{what:24s} {lg:10.{digits}f} {qs:12.{digits}f} {lg - qs:+8.{digits}f}")

    for m in names:
        row(m, lambda r, _w, m=m: r["milestones"][m]["host_s"] - r["milestones"][ref]["host_s"], 3)
    for key in ("median", "p95"):
        row(f"printk lag {key}", lambda r, _w, key=key: r["printk_lag_ms"][key], 2)
    row("wall per boot-timing", lambda _r, w: w, 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
