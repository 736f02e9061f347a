"""Statistics for repeated runs: median, min, max, standard deviation, and a
95 % confidence interval of the mean (Student's t)."""

from __future__ import annotations

import math
import statistics

# two-sided 95 % quantiles of Student's t, by degrees of freedom
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
        10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110,
        18: 2.101, 19: 2.093, 20: 2.086, 25: 2.060, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}


def t95(df: int) -> float:
    if df <= 0:
        return math.inf
    if df in _T95:
        return _T95[df]
    keys = sorted(_T95)
    for lo, hi in zip(keys, keys[1:]):
        if lo < df < hi:
            return _T95[lo]     # conservative: the lower df's quantile is the larger one
    return 1.960


def summarize(values: list[float]) -> dict | None:
    v = [x for x in values if x is not None]
    if not v:
        return None
    n = len(v)
    mean = statistics.fmean(v)
    sd = statistics.stdev(v) if n > 1 else 0.0
    half = t95(n - 1) * sd / math.sqrt(n) if n > 1 else None
    return {"n": n, "median": round(statistics.median(v), 6), "mean": round(mean, 6),
            "min": round(min(v), 6), "max": round(max(v), 6), "stdev": round(sd, 6),
            "ci95": [round(mean - half, 6), round(mean + half, 6)] if half is not None else None,
            "ci95_half_pct": round(100 * half / mean, 3) if half is not None and mean else None}
