"""Statistics for repeated runs: median, min, max, standard deviation, and a
95 % confidence interval of the mean (Student's t)."""

from __future__ import annotations

import math
import statistics

# two-sided 95 % quantiles of Student's t, by degrees of freedom
_T95 = {
    1: 12.706,
    2: 4.303,
    3: 3.182,
    4: 2.776,
    5: 2.571,
    6: 2.447,
    7: 2.365,
    8: 2.306,
    9: 2.262,
    10: 2.228,
    11: 2.201,
    12: 2.179,
    13: 2.160,
    14: 2.145,
    15: 2.131,
    16: 2.120,
    17: 2.110,
    18: 2.101,
    19: 2.093,
    20: 2.086,
    25: 2.060,
    30: 2.042,
    40: 2.021,
    60: 2.000,
    120: 1.980,
}


def t95(df: int) -> float:
    if df <= 0:
        return math.inf
    if df in _T95:
        return _T95[df]
    keys = sorted(_T95)
    for lo, hi in zip(keys, keys[1:]):
        if lo < df < hi:
            return _T95[lo]  # conservative: the lower df's quantile is the larger one
    return 1.960


def summarize(values: list[float]) -> dict | None:
    v = [x for x in values if x is not None]
    if not v:
        return None
    n = len(v)
    mean = statistics.fmean(v)
    sd = statistics.stdev(v) if n > 1 else 0.0
    half = t95(n - 1) * sd / math.sqrt(n) if n > 1 else None
    return {
        "n": n,
        "median": round(statistics.median(v), 6),
        "mean": round(mean, 6),
        "min": round(min(v), 6),
        "max": round(max(v), 6),
        "stdev": round(sd, 6),
        "ci95": [round(mean - half, 6), round(mean + half, 6)] if half is not None else None,
        "ci95_half_pct": round(100 * half / mean, 3) if half is not None and mean else None,
    }


def mann_whitney(a: list[float], b: list[float]) -> dict | None:
    """Two-sided Mann-Whitney U test.  Exact (permutation of the pooled values,
    ties included) when C(n1+n2, n1) <= 200000, else the normal approximation
    with tie correction.  None when either side has fewer than 2 values."""
    from itertools import combinations

    a = [x for x in a if x is not None]
    b = [x for x in b if x is not None]
    n1, n2 = len(a), len(b)
    if n1 < 2 or n2 < 2:
        return None
    pooled = a + b
    order = sorted(range(n1 + n2), key=lambda i: pooled[i])
    ranks = [0.0] * (n1 + n2)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and pooled[order[j + 1]] == pooled[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1

    def u_of(idx):
        r1 = sum(ranks[k] for k in idx)
        return r1 - n1 * (n1 + 1) / 2

    u = u_of(range(n1))
    mean = n1 * n2 / 2
    if math.comb(n1 + n2, n1) <= 200000:
        dist = [u_of(c) for c in combinations(range(n1 + n2), n1)]
        extreme = sum(1 for x in dist if abs(x - mean) >= abs(u - mean) - 1e-9)
        p = extreme / len(dist)
        method = "exact"
    else:
        n = n1 + n2
        ties = {}
        for r in ranks:
            ties[r] = ties.get(r, 0) + 1
        tie_term = sum(t**3 - t for t in ties.values()) / (n * (n - 1))
        sd = math.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term))
        z = 0.0 if sd == 0 else (abs(u - mean) - 0.5) / sd
        p = math.erfc(max(z, 0.0) / math.sqrt(2))
        method = "normal"
    return {"u": u, "p": min(1.0, p), "n1": n1, "n2": n2, "method": method}
