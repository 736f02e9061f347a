"""Statistics for repeated measurements, from scipy.stats (pinned in requirements.txt).

The unit of replication is the boot: each round boots every kernel once, so a
metric has one value per kernel per round.  The summary's comparisons of two
kernels (compare()) use Student's t on the ratio scale (t_test()):

  - the paired t-test of the per-round log ratios when the runs are paired by
    round (drift over time cancels out), else
  - Welch's t-test of the logs of the two samples;

a rank test (Wilcoxon signed-rank, Mann-Whitney U; kept for the tables' marks)
cannot pass a family's correction with few rounds (5 rounds: p >= 0.0625);

every difference carries its Hodges-Lehmann shift estimate (the median of the
paired differences' Walsh averages, or of all pairwise differences) with a
bootstrap 95 % interval; a family of tests is corrected with Benjamini-Hochberg
(false discovery rate).  --until-ci's stopping rule (UntilCI, still_wide) is here
too: boot timing and the footprint share it.  docs/report.md states the rules.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
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
    return _result("Mann-Whitney U", "u", r, method, n1=len(x), n2=len(y))


def _result(test: str, statistic: str, r: Any, method: str, **sizes: int) -> dict[str, Any]:
    """A test's result as the records and the report keep it: its name, its statistic
    (named `statistic`), p, the sample sizes and how p was computed."""
    return {"test": test, statistic: float(r.statistic), "p": float(r.pvalue), **sizes, "method": method}


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
    return _result("Wilcoxon signed-rank", "w", r, method, n=len(d))


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


def t_test(a: Sequence[float | None], b: Sequence[float | None], paired: bool) -> dict[str, Any] | None:
    """Student's t-test of b against a on the ratio scale: the paired test of the
    per-round log ratios log(b/a) (paired), else Welch's test of log b against log a,
    when every value is positive (times, sizes, rates); on the values themselves
    otherwise.  Unlike a rank test it has no smallest p: with few rounds a large,
    consistent difference passes a family's correction (5 exact rounds of the
    signed-rank test never reach p < 0.0625).  Also its standard error `se` and
    degrees of freedom `df` on that scale, for the smallest detectable difference
    (detectable()).  None below 2 values a side (2 pairs)."""
    if paired:
        pairs = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
        xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
    else:
        xs, ys = _clean(a), _clean(b)
    if len(xs) < 2 or len(ys) < 2:
        return None
    log = all(v > 0 for v in xs + ys)
    fx, fy = (np.log(xs), np.log(ys)) if log else (np.array(xs, float), np.array(ys, float))
    scale = "log" if log else "raw"
    name = "paired t-test" if paired else "Welch t-test"
    method = ("log ratios" if paired else "logs") if log else "values"
    if paired:
        d = fy - fx
        n = len(d)
        sd = float(np.std(d, ddof=1))
        se, df, mean = sd / math.sqrt(n), float(n - 1), float(np.mean(d))
    else:
        vx, vy = float(np.var(fx, ddof=1)), float(np.var(fy, ddof=1))
        se = math.sqrt(vx / len(fx) + vy / len(fy))
        mean = float(np.mean(fy) - np.mean(fx))
        num = (vx / len(fx) + vy / len(fy)) ** 2
        den = (vx / len(fx)) ** 2 / (len(fx) - 1) + (vy / len(fy)) ** 2 / (len(fy) - 1)
        df = num / den if den > 0 else len(fx) + len(fy) - 2
    # no spread at all: the same difference in every round (p 0), or none (p 1)
    p = (1.0 if mean == 0 else 0.0) if se == 0 else float(2 * sps.t.sf(abs(mean / se), df))
    return {"test": name, "p": p, "n": len(xs), "method": method, "se": se, "df": df, "scale": scale}


def detectable(t: dict[str, Any], alpha: float) -> float | None:
    """The smallest difference, in % of a's value, that a t_test() with this standard
    error would find at level alpha (two-sided): t(1 - alpha/2, df) x se, on the log
    scale turned back into a ratio.  None on the raw scale (no % without a base)."""
    if t.get("scale") != "log" or t.get("se") is None:
        return None
    half = float(sps.t.isf(alpha / 2, t["df"])) * t["se"]
    if not math.isfinite(half) or half > 20:  # e^20: no difference this run could claim is worth a number
        return None
    return (math.exp(half) - 1) * 100


def compare(a: list[float | None], b: list[float | None], paired: bool) -> dict[str, Any] | None:
    """One comparison of kernel b against kernel a: the test (Student's t on the
    ratio scale, paired by round or Welch's: t_test()), the Hodges-Lehmann shift,
    its bootstrap interval, and the shift relative to a's median."""
    test = t_test(a, b, paired)
    if test is None:
        return None
    shift = hodges_lehmann(a, b, paired)
    ci = shift_interval(a, b, paired)
    base = statistics.median(_clean(a)) if _clean(a) else None
    rel = None if shift is None or not base else shift / base
    rel_ci = None if ci is None or not base else (ci[0] / base, ci[1] / base)
    return {**test, "paired": paired, "shift": shift, "shift_ci95": ci, "relative": rel, "relative_ci95": rel_ci}


# --- enough rounds: --until-ci ------------------------------------------------
#
# One rule for every measurement made in rounds (boot timing, footprint): after each
# round from the minimum on, every headline difference's 95 % interval must be narrow
# enough, else another round is run, up to a maximum.  docs/report.md states it.

UNTIL_CI_PCT = 5.0  # the default width: each interval within ± this % of the base kernel's median
UNTIL_CI_MIN_ROUNDS = 3  # no interval is trusted on fewer rounds (Student's t with 2 df: × 4.30)
UNTIL_CI_MAX_ROUNDS = 20  # the default maximum

# the headline values of a measurement: metric -> kernel -> round -> value
Headline = Mapping[str, Mapping[str, Mapping[int, float]]]


def difference_interval(a: Mapping[int, float], b: Mapping[int, float]) -> dict[str, Any] | None:
    """The 95 % interval (Student's t) of the mean per-round difference b - a over the
    rounds both have, in % of a's median: {rounds, shift_pct, half_pct, excludes_zero}.
    None below 2 common rounds; shift_pct and half_pct None when a's median is 0."""
    common = sorted(r for r in set(a) & set(b) if math.isfinite(a[r]) and math.isfinite(b[r]))
    d = [b[r] - a[r] for r in common]
    if len(d) < 2:
        return None
    mean = statistics.fmean(d)
    half = t95(len(d) - 1) * statistics.stdev(d) / math.sqrt(len(d))
    base = abs(statistics.median(_clean(list(a.values()))))
    return {
        "rounds": len(d),
        "shift_pct": 100 * mean / base if base else None,
        "half_pct": 100 * half / base if base else None,
        "excludes_zero": mean - half > 0 or mean + half < 0,
    }


def still_wide(headline: Headline, kernels: Sequence[str], pct: float) -> tuple[list[str], int]:
    """Why another round is needed, one line per headline difference not yet settled
    (empty: the rounds may stop), and how many differences were judged.

    With two kernels or more, for each metric and each kernel after the first (the
    base): the 95 % interval of the per-round difference (difference_interval) must be
    within ±pct % of the base's median, and an interval that excludes zero (a
    difference the rounds see) also needs the rounds a paired test needs to reach
    significance among the headline's tests (rounds_needed): stopping earlier would
    leave a precise-looking difference the report cannot state.  With one kernel, the
    95 % interval of its mean must be within ±pct % of the mean.  A metric no round of
    a kernel measured, or whose base median is 0 (no relative width), is not judged."""
    out: list[str] = []
    judged = 0
    if not kernels:
        return out, judged
    base = kernels[0]
    family = sum(1 for per in headline.values() if any(per.values()))  # the metrics measured at all
    for name, per in headline.items():
        a = per.get(base, {})
        if not a:
            continue
        if len(kernels) == 1:
            judged += 1
            s = summarize(list(a.values()))
            if s is None or s["ci95_half_pct"] is None:
                out.append(f"{name}: fewer than 2 rounds")
            elif abs(s["ci95_half_pct"]) > pct:
                out.append(f"{name}: ±{abs(s['ci95_half_pct']):.1f} % (wider than ±{pct:g} %)")
            continue
        for k in kernels[1:]:
            b = per.get(k, {})
            why = _wide_difference(a, b, pct, family) if b else None
            if why is not None:
                judged += 1
                if why:
                    out.append(f"{name} ({k} against {base}): {why}")
    return out, judged


def _wide_difference(a: Mapping[int, float], b: Mapping[int, float], pct: float, family: int) -> str | None:
    """Why one headline difference is not yet settled ("" when it is); None when it is
    not judged (a base median of 0)."""
    iv = difference_interval(a, b)
    if iv is None:
        return "fewer than 2 paired rounds"
    if iv["half_pct"] is None:
        return None
    if iv["half_pct"] > pct:
        return f"{iv['shift_pct']:+.1f} % ±{iv['half_pct']:.1f} % (wider than ±{pct:g} %)"
    need = rounds_needed(family, paired=True)
    if iv["excludes_zero"] and iv["rounds"] < need:
        return (
            f"{iv['shift_pct']:+.1f} % ±{iv['half_pct']:.1f} % excludes 0, and "
            f"{iv['rounds']} rounds cannot test it among {family} tests: {need} can"
        )
    return ""


@dataclass
class UntilCI:
    """How many rounds a measurement runs.  Without pct: `runs`, as asked.  With pct
    (--until-ci): from max(runs, UNTIL_CI_MIN_ROUNDS) rounds on, until still_wide() is
    empty, at most max_rounds.  After done() returns True, `stopped` says why (the
    records' `stopped` field); `left` holds what was still wide after the last check.
    boot/rounds.py:rule() makes one and refuses a request that cannot work."""

    runs: int
    pct: float | None = None
    max_rounds: int = UNTIL_CI_MAX_ROUNDS
    max_option: str = "--max-rounds"
    stopped: str = ""
    left: list[str] = field(default_factory=list)

    @property
    def first_check(self) -> int:
        return max(self.runs, UNTIL_CI_MIN_ROUNDS)

    @property
    def limit(self) -> int:
        """The most rounds this can run."""
        return self.max_rounds if self.pct is not None else self.runs

    def done(self, rnd: int, headline: Headline, kernels: Sequence[str]) -> bool:
        """After round `rnd` (1-based): may the rounds stop?"""
        if self.pct is None:
            if rnd >= self.runs:
                self.stopped = f"{self.runs} round{'s' if self.runs != 1 else ''}, as asked"
                return True
            return False
        if rnd < self.first_check:
            return False
        self.left, judged = still_wide(headline, kernels, self.pct)
        if not self.left:
            self.stopped = (
                f"95 % confidence intervals of {judged} headline "
                f"{'difference' if len(kernels) > 1 else 'value'}{'s' if judged != 1 else ''} "
                f"within ±{self.pct:g} % after {rnd} rounds"
                if judged
                else f"no headline value measured after {rnd} rounds: nothing to judge"
            )
            return True
        if rnd >= self.max_rounds:
            more = f" (and {len(self.left) - 1} more)" if len(self.left) > 1 else ""
            self.stopped = (
                f"{self.max_option} {self.max_rounds} reached before the intervals were within "
                f"±{self.pct:g} %: {self.left[0]}{more}"
            )
            return True
        return False
