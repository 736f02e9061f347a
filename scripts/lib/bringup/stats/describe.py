"""Summaries of one kernel's repeated values: median, mean, spread and the 95 %
interval of the mean (Student's t)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from scipy import stats as sps


def clean(values: Sequence[float | None]) -> list[float]:
    """The values that are there and finite."""
    return [float(x) for x in values if x is not None and math.isfinite(x)]


def t95(df: int) -> float:
    """Two-sided 95 % quantile of Student's t with df degrees of freedom."""
    return math.inf if df <= 0 else float(sps.t.ppf(0.975, df))


def summarize(values: Sequence[float | None]) -> dict[str, Any] | None:
    """Median, mean, min, max, standard deviation and the 95 % confidence
    interval of the mean (Student's t) of repeated values."""
    v = clean(values)
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
