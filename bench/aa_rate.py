#!/usr/bin/env python3
"""How often the summary claims a difference that is not there (A/A), and how often it
sees one that is (a known shift), side by side, by number of rounds, on real host-clock
values; each with the printed step (stats.study_test's floor since session 15) and
without it (the caller's resolution only, as before).

The values: the real records of a board measured on the host clock (boot-timing.json:
the summary's milestones; footprint.json: malloc; lmbench.json: every metric).  Each
record's rounds are turned into residual rounds (log deviations from their kernel's mean,
one vector of every metric per round, scaled by sqrt(n/(n-1))), pooled over the kernels
that have the base kernel's metrics.  A synthetic round is a residual round drawn at
random, smoothed (plus h = 0.5 x a Gaussian with the residuals' covariance, rescaled to
their variance: no two draws are the same round twice), applied to the base kernel's
means and rounded to the step its real values show (malloc: mem_eat's chunk).  An A/A
pair is two arms of n such rounds, paired by round; a family is every metric, as one
kernel's family in the summary; it goes through the summary's decision path
(report/findings.py: tested_finding() for each metric, then resolve(): Benjamini-Hochberg
and the verdict).  A known shift multiplies one metric's arm b by 1 + s (a different
metric in each family) before the rounding.  The shift's bootstrap interval is not
computed (it takes no part in the decision).

    .venv/bin/python bench/aa_rate.py [--logs /work/main/logs] [--families 200]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bringup.report import findings
from bringup.stats import effect, study
from bringup.util import paths

BOARDS = ("qemu-i386-eras", "qemu-arm-ab")
MILESTONES = ("freeing_init", "userspace", "login")  # the summary's (configs/milestones.toml: summary = true)
ROUNDS = (2, 3, 5, 8)
SHIFTS = (0.02, 0.05, 0.10)
SMOOTH = 0.5


@dataclass
class Metric:
    key: str
    unit: str
    better: str
    base: float  # the base kernel's mean, log scale
    step: float  # what the synthetic values are rounded to
    resolution: float | None = None  # what the summary passes (malloc: the chunk)


@dataclass
class Source:
    """One record of a board: its metrics and its residual rounds (rows: rounds, columns: metrics)."""

    name: str
    metrics: list[Metric] = field(default_factory=list)
    residuals: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))


def _load(path: Path) -> dict | None:
    return json.loads(path.read_text()) if path.is_file() else None


def _host(record: dict | None) -> bool:
    return bool(record) and (record.get("clock") or {}).get("kind", "host") == "host"


def _source(name: str, per_kernel: dict[str, dict[str, list[float]]], base: str, meta: dict) -> Source | None:
    """per_kernel: kernel -> metric -> values by round; meta: metric -> (unit, better, resolution)."""
    keys = [m for m, v in per_kernel.get(base, {}).items() if len(v) >= 2 and all(x > 0 for x in v)]
    rows = []
    for values in per_kernel.values():
        if not all(len(values.get(m) or []) >= 2 and all(x > 0 for x in values[m]) for m in keys):
            continue
        logs = np.log(np.array([values[m] for m in keys], dtype=float)).T  # rounds x metrics
        n = len(logs)
        rows.append((logs - logs.mean(axis=0)) * math.sqrt(n / (n - 1)))
    if not keys or not rows:
        return None
    src = Source(name, residuals=np.vstack(rows))
    for m in keys:
        unit, better, resolution = meta[m]
        real = [x for values in per_kernel.values() for x in values.get(m) or []]
        step = resolution or study.printed_step(real) or 0.0
        src.metrics.append(Metric(m, unit, better, float(np.mean(np.log(per_kernel[base][m]))), step, resolution))
    return src


def kernels_of(logs: Path, board: str) -> list[str]:
    return list((_load(logs / board / "boot-timing.json") or {}).get("kernels") or [])


def load_board(logs: Path, board: str, base: str) -> list[Source]:
    """The sources of a board's family with kernel `base`'s values as both arms' centre."""
    root = logs / board
    boot = _load(root / "boot-timing.json")
    kernels = kernels_of(logs, board)
    sources = []
    if _host(boot) and boot is not None:
        per = {
            k: {m: (kv["milestones"].get(m) or {}).get("values") or [] for m in MILESTONES}
            for k, kv in boot["kernels"].items()
        }
        sources.append(_source("boot", per, base, {m: ("s", "lower", None) for m in MILESTONES}))
    fps = {k: _load(root / k / "footprint.json") for k in kernels}
    if all(_host(f) for f in fps.values()) and fps:
        chunk = max(((f or {}).get("mem_eat") or {}).get("chunk_kb", 1024) for f in fps.values())
        per = {k: {"malloc": (f or {}).get("malloc_kb_values") or []} for k, f in fps.items()}
        sources.append(_source("footprint", per, base, {"malloc": ("kB", "higher", float(chunk))}))
    lms = {k: _load(root / k / "lmbench.json") for k in kernels}
    per, meta = {}, {}
    for k, lm in lms.items():
        if _host(lm) and lm is not None and lm.get("measured"):
            for bench in lm["benchmarks"].values():
                for m in bench["metrics"]:
                    per.setdefault(k, {})[m["name"]] = m.get("values") or []
                    meta[m["name"]] = (m["unit"], m["better"], None)
    if per:
        sources.append(_source("lmbench", per, base, meta))
    return [s for s in sources if s is not None]


def draw(src: Source, n: int, rng: np.random.Generator) -> np.ndarray:
    """n synthetic residual rounds (rows) of a source: smoothed draws of its real ones."""
    res = src.residuals
    picked = res[rng.integers(0, len(res), n)]
    mixed = rng.normal(0.0, 1.0, (n, len(res))) @ res / math.sqrt(len(res))
    return (picked + SMOOTH * mixed) / math.sqrt(1 + SMOOTH**2)


def values(m: Metric, resid: np.ndarray, factor: float = 1.0) -> list[float]:
    raw = np.exp(m.base + resid) * factor
    return [float(round(v / m.step) * m.step) if m.step else float(v) for v in raw]


def finding(m: Metric, a: list[float], b: list[float]) -> dict:
    rounds = list(range(1, len(a) + 1))
    return findings.tested_finding(
        m.key, a, b, m.unit, m.better, a_rounds=rounds, b_rounds=rounds, key=m.key, resolution=m.resolution
    )


@dataclass
class Tally:
    families: int = 0
    family_claims: int = 0
    tests: int = 0
    test_claims: int = 0
    shifted: dict[float, int] = field(default_factory=dict)


def run(bases: list[list[Source]], n: int, families: int, seed: int) -> Tally:
    """`families` A/A families of n rounds, each kernel of the board the base in turn."""
    rng = np.random.default_rng(seed)
    t = Tally(shifted=dict.fromkeys(SHIFTS, 0))
    for i in range(families):
        sources = bases[i % len(bases)]
        metrics = [(s, j, m) for s in sources for j, m in enumerate(s.metrics)]
        arms = {s.name: (draw(s, n, rng), draw(s, n, rng)) for s in sources}
        pairs = [(m, values(m, arms[s.name][0][:, j]), arms[s.name][1][:, j]) for s, j, m in metrics]
        fs = [finding(m, a, values(m, b)) for m, a, b in pairs]
        findings.resolve(fs)
        claims = sum(bool(f["significant"]) for f in fs)
        t.families, t.family_claims = t.families + 1, t.family_claims + (claims > 0)
        t.tests, t.test_claims = t.tests + len(fs), t.test_claims + claims
        k = (i // len(bases)) % len(pairs)  # one metric carries the known shift, a different one in each family
        m, a, b = pairs[k]
        for s in SHIFTS:
            shifted = [*fs[:k], finding(m, a, values(m, b, 1 + s)), *fs[k + 1 :]]
            findings.resolve(shifted)
            t.shifted[s] += bool(shifted[k]["significant"])
    return t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--logs", type=Path, default=paths.logs_dir(), help="the logs/ holding the boards' records")
    ap.add_argument("--board", action="append", help=f"a board's records (default: {', '.join(BOARDS)})")
    ap.add_argument("--families", type=int, default=200, help="A/A families per board, rounds and rule")
    ap.add_argument("--seed", type=int, default=15)
    args = ap.parse_args()
    effect.shift_interval = lambda *a, **k: None  # the bootstrap interval: not part of the decision
    printed = study.printed_step
    for board in args.board or BOARDS:
        kernels = kernels_of(args.logs, board)
        bases = [srcs for k in kernels if (srcs := load_board(args.logs, board, k))]
        if not bases:
            print(f"{board}: no host-clock records with 2 rounds or more in {args.logs}", file=sys.stderr)
            continue
        shape = ", ".join(f"{s.name} {len(s.metrics)} metric(s) x {len(s.residuals)} rounds" for s in bases[-1])
        print(f"\n{board} (each of {', '.join(kernels)} the base in turn; {kernels[-1]}: {shape}); ", end="")
        print(f"{args.families} families per row")
        print("| rounds | step | tests/family | A/A families claiming | A/A tests claimed |", end="")
        print("".join(f" shift +{s * 100:.0f} % claimed |" for s in SHIFTS))
        print("|---" * (5 + len(SHIFTS)) + "|")
        for n in ROUNDS:
            for label, step in (("caller's only", lambda v: None), ("printed", printed)):
                study.printed_step = step
                t0 = time.monotonic()
                t = run(bases, n, args.families, args.seed + n)
                study.printed_step = printed
                size = t.tests // max(1, t.families)
                cells = "".join(f" {100 * t.shifted[s] / t.families:.0f} % |" for s in SHIFTS)
                print(
                    f"| {n} | {label} | {size} | {100 * t.family_claims / t.families:.1f} % "
                    f"| {100 * t.test_claims / max(1, t.tests):.2f} % |{cells}",
                    f"({time.monotonic() - t0:.0f} s)" if args.families > 500 else "",
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
