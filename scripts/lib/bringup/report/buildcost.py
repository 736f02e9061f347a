"""The cold build cost compared: build-cost.json (records/buildcost.py) read into
each kernel's CPU and wall times per round, every kernel after the first compared with
the first, paired by round.

A comparison is the study's test paired by round (stats.study_test: today Student's
paired t-test of the per-round log ratios), stated as the ratio b/a in % with its 95 %
interval (the test's: exp(mean ± t·se) - 1).  The tests of a record (CPU and wall of
every kernel against the base) are one family, corrected with Benjamini-Hochberg
(stats.correct): a difference is claimed only when its q-value < stats.ALPHA.  One round
cannot be tested.
The summary line reads, in seed 002's voice:

    2.6.32 → 6.12: build +208 % CPU (95 % interval +204 … +212 %), +196 % wall (+180 … +213 %); 3 rounds
"""

from __future__ import annotations

import statistics
from typing import Any

from bringup import stats
from bringup.records.buildcost import BuildCost

METRICS = ("cpu", "real")  # CPU time (user + sys) first: the primary figure
WORDS = {"cpu": "CPU", "real": "wall"}


def values(rec: BuildCost, kernel: str, metric: str) -> dict[int, float]:
    """round -> value of the runs that count (not redone) of one kernel."""
    return {r.round: getattr(r, metric) for r in rec.kernels[kernel].runs if not r.redone}


def _ratio(a: dict[int, float], b: dict[int, float]) -> dict[str, Any] | None:
    common = sorted(set(a) & set(b))
    xs, ys = [a[r] for r in common], [b[r] for r in common]
    if not common or not all(v > 0 for v in xs + ys):
        return None
    t = stats.study_test(xs, ys, common, common)  # None on one round: its one ratio, untested
    ratio = t.ratio if t is not None and t.ratio is not None else ys[0] / xs[0]
    ci = None if t is None else t.ratio_ci95
    return {
        "rounds": len(common),
        "a": statistics.median(xs),
        "b": statistics.median(ys),
        "pct": (ratio - 1) * 100,
        "ci_pct": None if ci is None else ((ci[0] - 1) * 100, (ci[1] - 1) * 100),
        "p": None if t is None else t.p,
    }


def ratio_pct(a: dict[int, float], b: dict[int, float]) -> float | None:
    """b against a paired by round: the geometric mean ratio in % (None without common rounds)."""
    r = _ratio(a, b)
    return None if r is None else r["pct"]


def compare(rec: BuildCost) -> list[dict[str, Any]]:
    """Every kernel after the first against the first: {base, kernel, rounds, cpu, real},
    each metric {a, b (medians, s), pct, ci_pct, p, q, claimed}; q over the record's family."""
    ks = list(rec.kernels)
    out = []
    for k in ks[1:]:
        c: dict[str, Any] = {"base": ks[0], "kernel": k}
        for m in METRICS:
            c[m] = _ratio(values(rec, ks[0], m), values(rec, k, m))
        c["rounds"] = max((c[m]["rounds"] for m in METRICS if c[m]), default=0)
        out.append(c)
    family = [c[m] for c in out for m in METRICS if c[m]]
    for f, q in zip(family, stats.correct([f["p"] for f in family]), strict=True):
        f["q"] = q
        f["claimed"] = stats.claimed(q)
    return out


def _pct(x: float) -> str:
    return f"{x:+.1f} %" if abs(x) < 10 else f"{x:+.0f} %"


def _iv(ci: tuple[float, float]) -> str:
    f = (lambda x: f"{x:+.1f}") if max(abs(ci[0]), abs(ci[1])) < 10 else (lambda x: f"{x:+.0f}")
    return f"{f(ci[0])} … {f(ci[1])} %"


def line(c: dict[str, Any]) -> str:
    """One comparison as the summary's line."""
    head = f"{c['base']} → {c['kernel']}: build"
    cpu, wall = c["cpu"], c["real"]
    if cpu is None:
        return f"{head} cost not comparable (no rounds of both)"
    n = c["rounds"]
    rounds = f"{n} round{'s' if n != 1 else ''}"
    if cpu["p"] is None:
        w = f", {_pct(wall['pct'])} wall" if wall else ""
        return f"{head} {_pct(cpu['pct'])} CPU{w} ({rounds}: not tested)"
    parts = []
    for m, f in (("cpu", cpu), ("real", wall)):
        if f is None or f["ci_pct"] is None:
            continue
        if f["claimed"]:
            parts.append(f"{_pct(f['pct'])} {WORDS[m]} (95 % interval {_iv(f['ci_pct'])})")
        else:
            parts.append(
                f"{WORDS[m]} no significant difference ({_pct(f['pct'])}, 95 % interval {_iv(f['ci_pct'])}, "
                f"q={f['q']:.2f})"
            )
    return f"{head} {', '.join(parts)}; {rounds}"


def claims(rec: BuildCost) -> list[str]:
    """The differences the record claims (the A/A check wants none)."""
    return [
        f"{c['base']} → {c['kernel']} {WORDS[m]}: {_pct(c[m]['pct'])} (q={c[m]['q']:.3f})"
        for c in compare(rec)
        for m in METRICS
        if c[m] and c[m]["claimed"]
    ]


def kernel_rows(rec: BuildCost) -> dict[str, dict[str, Any]]:
    """Per kernel: the cold CPU and wall medians with their 95 % intervals of the mean
    (stats.summarize) and the rounds, for the build table."""
    out = {}
    for k in rec.kernels:
        row: dict[str, Any] = {}
        for m in METRICS:
            vals = list(values(rec, k, m).values())
            s = stats.summarize(vals)
            row[m] = None if s is None else {"median": s["median"], "n": s["n"], "ci95": s.get("ci95")}
        out[k] = row
    return out


def render(rec: BuildCost) -> str:
    """The text the build-cost command prints: per kernel, then the comparisons."""
    lines = [
        f"Build cost of {rec.board}: cold make of the image, no ccache, -j{rec.jobs}, {rec.rounds} round(s) "
        f"interleaved ({rec.stopped})",
        "",
        "| kernel | cold CPU (user+sys) | cold wall | study build (ccache) | ccache hits |",
        "|---|---:|---:|---:|---:|",
    ]
    rows = kernel_rows(rec)
    for k, kc in rec.kernels.items():
        cpu, wall = rows[k]["cpu"], rows[k]["real"]
        sb = kc.study_build
        lines.append(
            f"| {k} | {_s(cpu)} | {_s(wall)} | "
            f"{'-' if sb is None else f'{sb.real:.0f} s wall, {sb.user + sb.sys:.0f} s CPU'} | "
            f"{'-' if sb is None or sb.ccache_hit_rate is None else f'{sb.ccache_hit_rate * 100:.0f} %'} |"
        )
    lines.append("")
    lines += [line(c) for c in compare(rec)]
    lines.append(
        "cold: medians of the rounds (± the 95 % interval of the mean); study build: the one build the "
        "study uses, through ccache at its hit rate: not comparable between kernels."
    )
    return "\n".join(lines) + "\n"


def _s(v: dict[str, Any] | None) -> str:
    if v is None:
        return "-"
    ci = v.get("ci95")
    half = f" ± {(ci[1] - ci[0]) / 2:.1f}" if ci else ""
    return f"{v['median']:.1f}{half} s"
