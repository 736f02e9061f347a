#!/usr/bin/env python3
"""Every metric's relative spread between runs of the same kernel, largest first: how
deterministic the instruction clock (QEMU icount) makes bringup's numbers.

    .venv/bin/python bench/icount_spread.py logs/qemu-arm-ic-aa
    .venv/bin/python bench/icount_spread.py a/lmbench.json b/lmbench.json
    .venv/bin/python bench/icount_spread.py run1/console.log run2/console.log --all-printk

Each argument is a source of values; the sources are the "arms" of the comparison:
- a directory: every lmbench.json and every boot/*/boot.json under it; an A/A run
  directory (logs/<board>-aa/) gives one arm per kernel directory (a/, b/);
- lmbench.json: every metric's per-round values;
- boot.json (one boot): every milestone's printk time;
- boot-timing.json: every milestone's printk min/max over its runs (no per-run values,
  so only the spread, not the arms' difference);
- any other file (a console log, an lmbench.txt, a QEMU run's serial output): the
  lmbench runner's blocks in it (one pass per `@@@ BEGIN` block), and with
  --all-printk every kernel line with a printk time (keyed by its text without the
  time, and its occurrence number).

A metric's spread is (max - min) / |median| over all its values; "arms" is the relative
difference between the medians of the first two arms that have it.  Boot milestones
before "Linux version" are left out unless --all-milestones is given: the kernel's
printk clock starts with the kernel, and what comes before (firmware, U-Boot's TFTP
load) is measured on the bootloader's side.  docs/instruction-clock.md has the figures.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

# milestones the kernel's printk clock cannot time (before the kernel runs), and the
# banner itself (its printk time is 0 on most boards): left out by default
BEFORE_KERNEL = ("first_stage", "bootloader", "kernel_load", "starting_kernel", "linux_version")
PRINTK = re.compile(r"^\[\s*(\d+\.\d+)\]\s?(.*)$")
# bringup's console.log puts the host's time and its delta before each line
HOST_PREFIX = re.compile(r"^\[\s*\d+\.\d+\s+\d+\.\d+\]\s?")


@dataclass
class Metric:
    name: str
    unit: str
    arms: dict[str, list[float]] = field(default_factory=dict)
    bounds_only: bool = False  # values are a record's min and max, not runs

    def add(self, arm: str, value: float) -> None:
        self.arms.setdefault(arm, []).append(value)

    @property
    def values(self) -> list[float]:
        return [v for vs in self.arms.values() for v in vs]

    def spread(self) -> float | None:
        vs = self.values
        if len(vs) < 2:
            return None
        mid = statistics.median(vs)
        if mid == 0:
            return 0.0 if max(vs) == min(vs) else float("inf")
        return (max(vs) - min(vs)) / abs(mid)

    def arms_diff(self) -> float | None:
        if self.bounds_only:
            return None
        meds = [statistics.median(v) for v in self.arms.values() if v][:2]
        if len(meds) < 2 or meds[0] == 0:
            return None
        return (meds[1] - meds[0]) / abs(meds[0])


class Table:
    def __init__(self) -> None:
        self.metrics: dict[str, Metric] = {}

    def add(self, name: str, unit: str, arm: str, value: float) -> None:
        self.metrics.setdefault(name, Metric(name, unit)).add(arm, value)


def _lmbench_json(d: dict, arm: str, t: Table) -> None:
    for b in (d.get("benchmarks") or {}).values():
        for m in b.get("metrics", []):
            for v in m.get("values") or [m["value"]]:
                t.add(f"lmbench {m['name']}", m["unit"], arm, float(v))


def _boot_json(d: dict, arm: str, t: Table, all_milestones: bool) -> None:
    if d.get("status") != "ok":
        return
    for name, hit in (d.get("milestones") or {}).items():
        if hit.get("printk_s") is None or (name in BEFORE_KERNEL and not all_milestones):
            continue
        t.add(f"boot {name} ({d.get('path', '?')}, {d.get('root', 'ramdisk')})", "s", arm, float(hit["printk_s"]))


def _boot_timing_json(d: dict, arm: str, t: Table, all_milestones: bool) -> None:
    for kernel_id, k in (d.get("kernels") or {}).items():
        for name, ms in (k.get("milestones") or {}).items():
            p = ms.get("printk")
            if not p or (name in BEFORE_KERNEL and not all_milestones):
                continue
            key = f"boot {name} ({d.get('path', '?')}, {d.get('root', 'ramdisk')})"
            m = t.metrics.setdefault(key, Metric(key, "s", bounds_only=True))
            m.add(f"{arm}:{kernel_id}", float(p["min"]))
            m.add(f"{arm}:{kernel_id}", float(p["max"]))


def _text(text: str, arm: str, t: Table, all_printk: bool) -> None:
    from bringup.parse import lmbench as lp

    if "@@@ BEGIN " in text:
        # one pass per block: a file holding several passes gives several values
        blocks = re.split(r"(?=@@@ BEGIN )", text)
        for blk in blocks:
            if not blk.startswith("@@@ BEGIN "):
                continue
            for b in lp.parse_runner(blk).values():
                for m in b["metrics"]:
                    t.add(f"lmbench {m['name']}", m["unit"], arm, float(m["value"]))
    if all_printk:
        seen: dict[str, int] = {}
        for line in text.replace("\r", "").splitlines():
            m = PRINTK.match(HOST_PREFIX.sub("", line.strip()))
            if not m:
                continue
            key = re.sub(r"\s+", " ", m.group(2)).strip()
            seen[key] = seen.get(key, 0) + 1
            t.add(f"printk #{seen[key]} {key[:70]}", "s", arm, float(m.group(1)))


def load(path: Path, arm: str, t: Table, all_milestones: bool, all_printk: bool) -> None:
    if path.is_dir():
        files = sorted(path.rglob("lmbench.json")) + sorted(path.rglob("boot/*/boot.json"))
        if not files:
            raise SystemExit(f"{path}: no lmbench.json and no boot/*/boot.json under it")
        for f in files:
            rel = f.relative_to(path).parts
            # an A/A directory: the arm is the kernel directory (a/, b/); else the source's name
            sub = rel[0] if len(rel) > 1 else ""
            load(f, f"{arm}/{sub}" if sub else arm, t, all_milestones, all_printk)
        return
    text = path.read_text(errors="replace")
    if path.suffix == ".json":
        d = json.loads(text)
        kind = d.get("kind", "")
        if kind == "bringup.lmbench" or "benchmarks" in d:
            _lmbench_json(d, arm, t)
        elif kind == "bringup.boot" or "milestones" in d:
            _boot_json(d, arm, t, all_milestones)
        elif kind == "bringup.boot-timing" or "kernels" in d:
            _boot_timing_json(d, arm, t, all_milestones)
        else:
            raise SystemExit(f"{path}: not an lmbench, boot or boot-timing record")
        return
    _text(text, arm, t, all_printk)


def rows(t: Table) -> list[tuple[Metric, float]]:
    out = [(m, s) for m in t.metrics.values() if (s := m.spread()) is not None]
    return sorted(out, key=lambda x: (-x[1], x[0].name))


def _pct(x: float | None) -> str:
    if x is None:
        return "-"
    if x == float("inf"):
        return "inf"
    return f"{x * 100:.4f} %" if abs(x) < 0.001 else f"{x * 100:.2f} %"


def render(t: Table, sources: Iterable[str]) -> str:
    rs = rows(t)
    lines = [f"sources: {', '.join(sources)}", ""]
    if not rs:
        return "\n".join([*lines, "no metric has two values"])
    w = max(len(m.name) for m, _ in rs)
    lines.append(
        f"{'metric':<{w}}  {'unit':>4}  {'n':>3}  {'min':>12}  {'median':>12}  {'max':>12}  {'spread':>10}  arms"
    )
    for m, s in rs:
        vs = m.values
        lines.append(
            f"{m.name:<{w}}  {m.unit:>4}  {len(vs):>3}  {min(vs):>12.6g}  {statistics.median(vs):>12.6g}  "
            f"{max(vs):>12.6g}  {_pct(s):>10}  {_pct(m.arms_diff())}"
        )
    for kind in ("lmbench", "boot", "printk"):
        sel = [s for m, s in rs if m.name.startswith(kind)]
        if not sel:
            continue
        same = sum(1 for s in sel if s == 0)
        tenth = sum(1 for s in sel if s <= 0.001)
        one = sum(1 for s in sel if s <= 0.01)
        lines.append(
            f"{kind}: {len(sel)} metrics, {same} identical, {tenth} within 0.1 %, {one} within 1 %, "
            f"largest {_pct(max(sel))}, median {_pct(statistics.median(sel))}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("sources", nargs="+", type=Path, help="A/A directories, records or console logs")
    ap.add_argument("--all-milestones", action="store_true", help="also the milestones before the kernel")
    ap.add_argument("--all-printk", action="store_true", help="every printk line of text sources")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    a = ap.parse_args(argv)
    t = Table()
    names = []
    for i, src in enumerate(a.sources):
        if not src.exists():
            ap.error(f"{src}: no such file or directory")
        arm = src.name if len(a.sources) == 1 else f"{i + 1}:{src.name}"
        names.append(arm)
        load(src, arm, t, a.all_milestones, a.all_printk)
    if a.json:
        print(
            json.dumps(
                [
                    {"metric": m.name, "unit": m.unit, "values": m.values, "spread": s, "arms": m.arms_diff()}
                    for m, s in rows(t)
                ],
                indent=1,
            )
        )
    else:
        print(render(t, names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
