"""The host-load guard: how busy the host was while a measurement ran.

Before and after each run bringup takes a `Snapshot`: /proc/loadavg, the CPU
time of the whole host from /proc/stat (busy, idle, steal), the CPU time of
bringup's own process tree (bringup, QEMU, NFS server: the work being measured),
and the speed of a short calibration loop.  `judge()` turns two snapshots into
the record's `host` entry:

  other_cpu_pct   CPU time used by processes that are not bringup's, as a
                  percentage of one CPU over the run (100 = one core busy all along)
  steal_pct       time the hypervisor gave to other guests, same unit
  load1           the 1-minute load average at the end
  calibration     loop speed after the run / the run's baseline (1.0 = as fast)
  disturbed       the reason the run was disturbed, or None

A run is disturbed when other processes used more than OTHER_CPU_PCT of one CPU,
steal exceeded STEAL_PCT, or the calibration loop ran slower than CALIBRATION_MIN
of its baseline.  docs/boot-timing.md states the same thresholds.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

OTHER_CPU_PCT = 25.0  # % of one CPU used by others during the run
STEAL_PCT = 10.0
CALIBRATION_MIN = 0.80
CALIBRATION_SECONDS = 0.05

PROC = Path("/proc")
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True)
class CpuTimes:
    busy: int  # jiffies: user + nice + system + irq + softirq
    idle: int  # idle + iowait
    steal: int


@dataclass(frozen=True)
class Snapshot:
    t: float
    load1: float
    cpu: CpuTimes
    ours: int  # jiffies used so far by bringup's process tree
    calibration: float  # loop iterations per second
    ncpu: int = field(default_factory=lambda: os.cpu_count() or 1)


def parse_stat(text: str) -> CpuTimes:
    """The aggregate `cpu` line of /proc/stat."""
    for line in text.splitlines():
        if line.startswith("cpu "):
            f = [int(x) for x in line.split()[1:]]
            f += [0] * (8 - len(f))
            user, nice, system, idle, iowait, irq, softirq, steal = f[:8]
            return CpuTimes(busy=user + nice + system + irq + softirq, idle=idle + iowait, steal=steal)
    raise ValueError("no aggregate cpu line in /proc/stat")


def parse_loadavg(text: str) -> float:
    return float(text.split()[0])


def parse_pid_stat(text: str) -> tuple[int, int]:
    """(ppid, utime + stime + cutime + cstime) of a /proc/<pid>/stat line."""
    rest = text[text.rindex(")") + 2 :].split()
    ppid = int(rest[1])
    utime, stime, cutime, cstime = (int(x) for x in rest[11:15])
    return ppid, utime + stime + cutime + cstime


def tree_jiffies(root: int, proc: Path = PROC) -> int:
    """CPU jiffies of a process and all its living descendants (children that
    ended and were reaped count in their parent's cutime/cstime)."""
    info: dict[int, tuple[int, int]] = {}
    for d in proc.iterdir():
        if not d.name.isdigit():
            continue
        try:
            info[int(d.name)] = parse_pid_stat((d / "stat").read_text())
        except (OSError, ValueError, IndexError):
            continue  # the process ended while we looked
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in info.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        if pid in info:
            total += info[pid][1]
        todo += children.get(pid, [])
    return total


def calibrate(seconds: float = CALIBRATION_SECONDS) -> float:
    """Iterations per second of a fixed hashing loop (single-threaded CPU speed now)."""
    block = b"bringup" * 512
    n = 0
    t0 = time.perf_counter()
    end = t0 + seconds
    while True:
        hashlib.sha256(block).digest()
        n += 1
        if n % 64 == 0 and time.perf_counter() >= end:
            break
    return n / (time.perf_counter() - t0)


def snapshot(root: int | None = None) -> Snapshot:
    return Snapshot(
        t=time.monotonic(),
        load1=parse_loadavg((PROC / "loadavg").read_text()),
        cpu=parse_stat((PROC / "stat").read_text()),
        ours=tree_jiffies(root if root is not None else os.getpid()),
        calibration=calibrate(),
    )


def baseline(samples: int = 3) -> float:
    """The calibration loop's speed at the start of a measurement (best of a few)."""
    return max(calibrate() for _ in range(samples))


def judge(before: Snapshot, after: Snapshot, baseline: float | None = None) -> dict[str, object]:
    """The record's `host` entry for a run between two snapshots."""
    secs = max(after.t - before.t, 1e-6)
    busy = after.cpu.busy - before.cpu.busy
    ours = max(0, after.ours - before.ours)
    others = max(0, busy - ours)
    other_pct = 100.0 * others / TICK / secs
    steal_pct = 100.0 * (after.cpu.steal - before.cpu.steal) / TICK / secs
    base = baseline or before.calibration
    ratio = after.calibration / base if base else 1.0
    why = []
    if other_pct > OTHER_CPU_PCT:
        why.append(f"other processes used {other_pct:.0f} % of a CPU (limit {OTHER_CPU_PCT:.0f} %)")
    if steal_pct > STEAL_PCT:
        why.append(f"steal time {steal_pct:.0f} % (limit {STEAL_PCT:.0f} %)")
    if ratio < CALIBRATION_MIN:
        why.append(f"the calibration loop ran at {ratio:.2f} of its baseline (limit {CALIBRATION_MIN:.2f})")
    return {
        "seconds": round(secs, 3),
        "other_cpu_pct": round(other_pct, 1),
        "steal_pct": round(steal_pct, 1),
        "load1": after.load1,
        "calibration": round(ratio, 3),
        "ncpu": after.ncpu,
        "disturbed": "; ".join(why) or None,
    }


MAX_REDO = 2  # a run on a disturbed host is done again at most this many times (the round engine: boot/rounds.py)
