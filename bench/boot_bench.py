#!/usr/bin/env python3
"""Boot benchmark: prints, side by side from one run,
- host-versus-printk lag per line (median and p95, ms) of bringup's console,
- bringup's time to the login prompt against bare QEMU reaching the same
  marker (QEMU with -serial stdio, read with plain os.read: no pyserial, no
  pexpect, no stamping), alternated boot by boot, same kernel, ramdisk and
  command line.

  .venv/bin/python bench/boot_bench.py --board qemu-arm --kernel 6.12 -n 5
"""

import argparse
import os
import select
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bringup import records, targets
from bringup.boot import session
from bringup.builder import rootfs
from bringup.model.board import load_board
from bringup.model.milestones import load_rules
from bringup.util import paths

ROOT = Path(__file__).resolve().parents[1]


def bare_qemu(board, files, cmdline, marker=b" login: ", timeout=120.0):
    argv = targets.qemu.qemu_argv(board, 0, "direct", files, cmdline)
    i = argv.index("-serial")
    argv[i + 1] = "stdio"
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    buf = b""
    try:
        while time.monotonic() - t0 < timeout:
            r, _, _ = select.select([p.stdout], [], [], 0.5)
            if r:
                chunk = os.read(p.stdout.fileno(), 65536)
                if not chunk:
                    break
                buf += chunk
                if marker in buf:
                    return time.monotonic() - t0
        raise SystemExit("bench: bare QEMU never reached the login prompt")
    finally:
        p.kill()
        p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--board", default="qemu-arm")
    ap.add_argument("--kernel")
    ap.add_argument("-n", type=int, default=5)
    a = ap.parse_args()
    board = load_board(a.board)
    k = board.kernel(a.kernel) if a.kernel else board.kernels[-1]
    logs = paths.logs_dir()
    recdir = logs / board.name / k.id
    build = records.read(recdir / "build.json", records.Build)
    rootfs_record = rootfs.build(board, logs, paths.cache_dir(), say=lambda m: None)
    initrd = logs / board.name / "rootfs" / rootfs_record.file
    files = session.boot_files(board, build, recdir, "direct")
    files["initrd"] = initrd
    cmdline = session.kernel_cmdline(board, k.cmdline)
    rules = load_rules(board.milestones)
    scratch = Path(tempfile.mkdtemp(prefix="bringup-bootbench-"))
    ours, bare, lag_med, lag_p95 = [], [], [], []
    for i in range(a.n):
        run_dir = scratch / f"r{i}"
        r = session.boot_once(
            board,
            k.id,
            build,
            recdir,
            initrd,
            run_dir,
            targets.for_board(board, run_dir),
            rules,
            session.BootOptions(path="direct"),
        )
        if r["status"] != "ok":
            raise SystemExit(f"bench: boot failed: {r['error']}")
        ours.append(r["milestones"]["login"]["host_s"])
        lag_med.append(r["printk_lag_ms"]["median"])
        lag_p95.append(r["printk_lag_ms"]["p95"])
        bare.append(bare_qemu(board, files, cmdline))
    mo, mb = statistics.median(ours), statistics.median(bare)
    print(f"Boot benchmark: {board.name}/{k.id}, direct boot, n={a.n} alternated")
    print(f"  bare QEMU, spawn to 'login:'      median {mb:.3f} s  (min {min(bare):.3f}, max {max(bare):.3f})")
    print(f"  bringup,   spawn to 'login:'      median {mo:.3f} s  (min {min(ours):.3f}, max {max(ours):.3f})")
    print(f"  bringup / bare                    {mo / mb:.3f}  ({(mo - mb) * 1000:+.0f} ms per boot)")
    print(
        f"  host-vs-printk lag per line       median {statistics.median(lag_med):.2f} ms, "
        f"p95 {statistics.median(lag_p95):.2f} ms (medians over boots)"
    )


if __name__ == "__main__":
    main()
