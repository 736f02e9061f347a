"""The effect size of a difference in the values' own unit: the Hodges-Lehmann shift
and its bootstrap 95 % interval (stats.study.Comparison.shift and shift_ci95)."""

from __future__ import annotations

import math
import statistics
from itertools import combinations_with_replacement

import numpy as np
from scipy import stats as sps

BOOTSTRAP_RESAMPLES = 2000
SEED = 20021  # a fixed seed: the same records give the same report


def _clean(values: list[float | None]) -> list[float]:
    return [float(x) for x in values if x is not None and math.isfinite(x)]


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
