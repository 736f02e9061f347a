"""Statistics for repeated measurements, from scipy.stats (pinned in requirements.txt).

The unit of replication is the boot: each round boots every kernel once, so a
metric has one value per kernel per round.  Comparisons of two kernels use

  - the Wilcoxon signed-rank test on the per-round differences when the runs
    are paired by round (the better test: drift over time cancels out), else
  - the Mann-Whitney U test on the two samples;

every difference carries its Hodges-Lehmann shift estimate (the median of the
paired differences' Walsh averages, or of all pairwise differences) with a
bootstrap 95 % interval; a family of tests is corrected with Benjamini-Hochberg
(false discovery rate).  docs/report.md states the rules.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from itertools import combinations_with_replacement
from typing import Any, Literal

import numpy as np
from scipy import stats as sps

ALPHA = 0.05
BOOTSTRAP_RESAMPLES = 2000
SEED = 20021  # a fixed seed: the same records give the same report
# resamples of a permutation test: at least every split (Mann-Whitney within EXACT_LIMIT splits) or
# sign pattern (signed-rank with up to 16 rounds: 65,536), so scipy enumerates them all: an exact p
EXACT_LIMIT = 200_000


def _clean(values: Sequence[float | None]) -> list[float]:
    return [float(x) for x in values if x is not None and math.isfinite(x)]


def t95(df: int) -> float:
    """Two-sided 95 % quantile of Student's t with df degrees of freedom."""
    return math.inf if df <= 0 else float(sps.t.ppf(0.975, df))


def summarize(values: Sequence[float | None]) -> dict[str, Any] | None:
    """Median, mean, min, max, standard deviation and the 95 % confidence
    interval of the mean (Student's t) of repeated values."""
    v = _clean(values)
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


def mann_whitney(a: Sequence[float | None], b: Sequence[float | None]) -> dict[str, Any] | None:
    """Two-sided Mann-Whitney U test, U of the first sample: exact for small samples
    (with ties, by enumerating every split of the pooled values), else the normal
    approximation with tie correction.  None below 2 values a side."""
    x, y = _clean(a), _clean(b)
    if len(x) < 2 or len(y) < 2:
        return None
    ties = len(set(x + y)) < len(x) + len(y)
    small = math.comb(len(x) + len(y), len(x)) <= EXACT_LIMIT
    if small and ties:
        r = sps.mannwhitneyu(x, y, alternative="two-sided", method=sps.PermutationMethod(n_resamples=EXACT_LIMIT))
        method = "exact, ties"
    else:
        m: Literal["asymptotic", "exact"] = "exact" if small else "asymptotic"
        r = sps.mannwhitneyu(x, y, alternative="two-sided", method=m)
        method = m
    return {
        "test": "Mann-Whitney U",
        "u": float(r.statistic),
        "p": float(r.pvalue),
        "n1": len(x),
        "n2": len(y),
        "method": method,
    }


def wilcoxon_paired(a: Sequence[float | None], b: Sequence[float | None]) -> dict[str, Any] | None:
    """Two-sided Wilcoxon signed-rank test of the per-round differences b - a
    (pairs where either value is missing are dropped; zero differences follow
    Pratt): exact for up to 16 rounds (with ties or zeros, by enumerating every
    sign pattern), else the normal approximation.  None below 2 pairs; p = 1 when
    every difference is zero."""
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    d = [y - x for x, y in pairs if math.isfinite(x) and math.isfinite(y)]
    if len(d) < 2:
        return None
    if all(v == 0 for v in d):
        return {"test": "Wilcoxon signed-rank", "w": 0.0, "p": 1.0, "n": len(d), "method": "all differences zero"}
    clean = len(set(abs(v) for v in d)) == len(d) and 0 not in d
    zeros: Literal["pratt", "wilcox"] = "pratt" if 0 in d else "wilcox"
    if len(d) <= 16 and not clean:
        r = sps.wilcoxon(
            d, alternative="two-sided", method=sps.PermutationMethod(n_resamples=EXACT_LIMIT), zero_method=zeros
        )
        method = "exact, ties"
    else:
        m: Literal["exact", "approx"] = "exact" if clean and len(d) <= 50 else "approx"
        r = sps.wilcoxon(d, alternative="two-sided", method=m, zero_method=zeros)
        method = m
    return {
        "test": "Wilcoxon signed-rank",
        "w": float(r.statistic),
        "p": float(r.pvalue),
        "n": len(d),
        "method": method,
    }


def hodges_lehmann(a: list[float | None], b: list[float | None], paired: bool = False) -> float | None:
    """The Hodges-Lehmann estimate of the shift from a to b: the median of the
    Walsh averages of the per-round differences (paired), or the median of all
    pairwise differences b_j - a_i."""
    if paired:
        d = [y - x for x, y in zip(a, b, strict=True) if x is not None and y is not None]
        if not d:
            return None
        walsh = [(d[i] + d[j]) / 2 for i, j in combinations_with_replacement(range(len(d)), 2)]
        return float(statistics.median(walsh))
    x, y = _clean(a), _clean(b)
    if not x or not y:
        return None
    return float(statistics.median(yj - xi for xi in x for yj in y))


def shift_interval(a: list[float | None], b: list[float | None], paired: bool = False) -> tuple[float, float] | None:
    """A bootstrap 95 % interval (percentile) of the Hodges-Lehmann shift, resampling
    rounds (paired) or each arm (unpaired), with a fixed seed."""
    rng = np.random.default_rng(SEED)
    if paired:
        d = np.array([y - x for x, y in zip(a, b, strict=True) if x is not None and y is not None], dtype=float)
        if len(d) < 2:
            return None
        if np.all(d == d[0]):
            return float(d[0]), float(d[0])
        r = sps.bootstrap(
            (d,),
            lambda s, axis: np.apply_along_axis(lambda v: hodges_lehmann([0.0] * len(v), list(v), True), axis, s),
            n_resamples=BOOTSTRAP_RESAMPLES,
            method="percentile",
            rng=rng,
            vectorized=True,
        )
    else:
        x, y = np.array(_clean(a)), np.array(_clean(b))
        if len(x) < 2 or len(y) < 2:
            return None

        def hl(xs: np.ndarray, ys: np.ndarray, axis: int) -> np.ndarray:
            return np.median(ys[..., None, :] - xs[..., :, None], axis=(-2, -1))

        r = sps.bootstrap(
            (x, y),
            hl,
            n_resamples=BOOTSTRAP_RESAMPLES,
            method="percentile",
            rng=rng,
            vectorized=True,
        )
    lo, hi = r.confidence_interval
    return float(lo), float(hi)


def fdr(pvalues: list[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (q-values) of a family of tests."""
    if not pvalues:
        return []
    return [float(q) for q in sps.false_discovery_control(np.array(pvalues, dtype=float), method="bh")]


def smallest_p(n: int, paired: bool, n2: int | None = None) -> float:
    """The smallest two-sided p an exact rank test can give with n rounds (paired)
    or n and n2 values: 2/2^n for the signed-rank test, 2/C(n+n2, n) for Mann-Whitney."""
    if paired:
        return min(1.0, 2 / 2**n)
    return min(1.0, 2 / math.comb(n + (n2 if n2 is not None else n), n))


def rounds_needed(family: int, paired: bool = True, alpha: float = ALPHA) -> int:
    """Rounds needed before the smallest p-value possible can pass the Benjamini-
    Hochberg threshold alpha/family of the most significant test of a family."""
    n = 2
    while smallest_p(n, paired) > alpha / max(1, family) and n < 1000:
        n += 1
    return n


def compare(a: list[float | None], b: list[float | None], paired: bool) -> dict[str, Any] | None:
    """One comparison of kernel b against kernel a: the test (paired signed-rank
    or Mann-Whitney), the Hodges-Lehmann shift, its bootstrap interval, and the
    shift relative to a's median."""
    test = wilcoxon_paired(a, b) if paired else mann_whitney(a, b)
    if test is None:
        return None
    shift = hodges_lehmann(a, b, paired)
    ci = shift_interval(a, b, paired)
    base = statistics.median(_clean(a)) if _clean(a) else None
    rel = None if shift is None or not base else shift / base
    rel_ci = None if ci is None or not base else (ci[0] / base, ci[1] / base)
    return {**test, "paired": paired, "shift": shift, "shift_ci95": ci, "relative": rel, "relative_ci95": rel_ci}
