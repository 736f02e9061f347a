"""The study's one test: how bringup compares two kernels' repeated values.

Every place that compares kernels calls study_test() and corrects its family with
correct(): the summary (report/findings.py), the marks of the boot, lmbench and
workload tables (report/bootsection.py, report/measuresection.py, report/workloads.py;
the marks they show are the summary's family's), the console cost
(report/bootdetail.py), `compare --boot` (report/bootcompare.py), the initcall
explanation (report/bootexplain.py), the places (report/places.py), the cold build
cost (report/buildcost.py) and the terminal's boot table (boot/timingtable.py).
On the instruction clock no place calls it: values with no spread would give p = 0 for
one icount step; they decide with stats/deterministic.py's rule (the A/A floor).
Switching the study to another test is a change to study_test() here (and to the
Comparison it returns); docs/report.md states the rules.

The test today, Student's t on the ratio scale:

  - paired by round when both kernels' values carry their rounds and two rounds or
    more pair (each round boots every kernel once, so drift over time cancels out):
    the paired t-test of the per-round log ratios log(b/a);
  - else Welch's t-test of log b against log a;
  - on the values themselves (differences, not ratios) when a value is zero or negative.

Every value is tested with its resolution: no sample's standard deviation is taken
as less than the rounding's own (step / sqrt(12)).  The step is the caller's when the
values are counted in whole steps (mem_eat's total, a whole number of 1 MiB chunks),
and never less than the printed step the values show themselves (printed_step(): the
coarsest power of ten, at most 1, at which every non-zero value of both kernels is exact:
0.1043 and 0.1044 → 1e-4; lat_mmap's whole microseconds 43, 44 → 1; boot times rounded
to the microsecond → 1e-6).  Two rounds that happened to give the same 3-chunk
difference (CI's A/B check of one kernel: 497664 → 500736 kB twice) are then a
difference of 0.6 % within its noise (p = 0.06 on one degree of freedom), not one with
no noise at all (p = 0, claimed); so are 43 → 44 µs twice (p = 0.18), which without a
floor had p = 0 however few the digits.

Unlike a rank test it has no smallest p: with few rounds a large, consistent
difference passes a family's correction (the signed-rank test's smallest p with 5
rounds is 2/2^5 = 0.0625, so the default 5 rounds could never claim anything).

The effect size travels with the test: the ratio b/a (the geometric mean ratio,
exp of the mean log difference) with the 95 % interval that matches the test
(exp(mean ± t·se)), and the Hodges-Lehmann shift in the values' unit with its
bootstrap 95 % interval (stats/effect.py; computed when asked).  A family of tests
is corrected with Benjamini-Hochberg (correct()); a difference is claimed when its
q-value is below ALPHA (claimed()).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import numpy as np
from scipy import stats as sps

from bringup.stats import effect

ALPHA = 0.05
# study_test() in words, for the pages' and the terminal's legends (keep it true when the test changes)
RULE = (
    "paired t-test of log ratios over the rounds, else Welch's t-test of the logs (of the values when one is 0 or less)"
)


@dataclass(frozen=True)
class Comparison:
    """One comparison of kernel b against kernel a by the study's test.  `a` and `b`
    are the values compared (paired: a[i] and b[i] are one round's); `mean`, `se` and
    `df` are the test's difference b - a, its standard error and degrees of freedom on
    its scale (log: the log ratio)."""

    test: str  # "paired t-test" or "Welch t-test"
    method: str  # what it tested: "log ratios", "logs" or "values"
    paired: bool
    a: tuple[float, ...]
    b: tuple[float, ...]
    p: float
    mean: float
    se: float
    df: float
    scale: Literal["log", "raw"]
    steps: tuple[float, float] = (0.0, 0.0)  # a's and b's resolution the test took (0: none)

    @property
    def name(self) -> str:
        """The test as the report names it: "paired t-test (log ratios)"."""
        return f"{self.test} ({self.method})"

    @property
    def n(self) -> int:
        """Rounds (paired), else the smaller sample."""
        return min(len(self.a), len(self.b))

    def interval(self, alpha: float = ALPHA) -> tuple[float, float]:
        """The (1 - alpha) interval of the difference on the test's scale (the test's own)."""
        half = float(sps.t.isf(alpha / 2, self.df)) * self.se if self.se else 0.0
        return self.mean - half, self.mean + half

    @property
    def ratio(self) -> float | None:
        """b / a: the geometric mean ratio (None on the raw scale: no ratio without a base)."""
        return math.exp(self.mean) if self.scale == "log" else None

    @property
    def ratio_ci95(self) -> tuple[float, float] | None:
        """The ratio's 95 % interval, the test's: exp(mean ± t·se)."""
        if self.scale != "log":
            return None
        lo, hi = self.interval(ALPHA)
        return _exp(lo), _exp(hi)

    def detectable(self, alpha: float) -> float | None:
        """The smallest difference, in % of a's value, this test could find at level alpha
        (detectable())."""
        return detectable({"se": self.se, "df": self.df, "scale": self.scale}, alpha)

    @cached_property
    def shift(self) -> float | None:
        """The Hodges-Lehmann shift b - a in the values' unit."""
        return effect.hodges_lehmann(list(self.a), list(self.b), self.paired)

    @cached_property
    def shift_ci95(self) -> tuple[float, float] | None:
        """The shift's bootstrap 95 % interval (resampling rounds when paired), never
        narrower than the rounding allows: a difference of values rounded to steps sa and
        sb is known to (sa + sb) / 2 either side (rounds that all gave 28 → 43 µs: 14 … 16,
        not 15 … 15)."""
        ci = effect.shift_interval(list(self.a), list(self.b), self.paired)
        if ci is None or self.shift is None:
            return ci
        half = (self.steps[0] + self.steps[1]) / 2
        return min(ci[0], self.shift - half), max(ci[1], self.shift + half)

    @property
    def relative(self) -> float | None:
        """The shift relative to a's median."""
        base = statistics.median(self.a)
        return None if self.shift is None or not base else self.shift / base

    @property
    def relative_ci95(self) -> tuple[float, float] | None:
        base = statistics.median(self.a)
        ci = self.shift_ci95
        return None if ci is None or not base else (ci[0] / base, ci[1] / base)


def detectable(t: Mapping[str, Any], alpha: float) -> float | None:
    """The smallest difference, in % of a's value, that a test with this standard error
    `se`, degrees of freedom `df` and `scale` (a Comparison's, as a finding keeps them)
    would find at level alpha (two-sided): t(1 - alpha/2, df) x se on the log scale,
    turned back into a ratio.  None on the raw scale (no % without a base) or when it
    is beyond any number."""
    if t.get("scale") != "log" or t.get("se") is None:
        return None
    half = float(sps.t.isf(alpha / 2, t["df"])) * t["se"]
    if not math.isfinite(half) or half > 20:  # e^20: no difference this run could claim is worth a number
        return None
    return (math.exp(half) - 1) * 100


def _exp(x: float) -> float:
    return math.exp(min(x, 700.0))  # an interval on 2 rounds can be wider than a float's exp


def _clean(values: Sequence[float | None]) -> list[float]:
    return [float(x) for x in values if x is not None and math.isfinite(x)]


def pairs(
    a: Sequence[float | None],
    b: Sequence[float | None],
    rounds_a: Sequence[int] | None,
    rounds_b: Sequence[int] | None,
) -> tuple[list[float], list[float]] | None:
    """The values of both kernels joined by round (a's round order), when both carry
    their rounds (one per value); pairs with a value missing are left out."""
    if not rounds_a or not rounds_b or len(rounds_a) != len(a) or len(rounds_b) != len(b):
        return None
    by_round = dict(zip(rounds_b, b, strict=True))
    joined = [(x, by_round.get(r)) for r, x in zip(rounds_a, a, strict=True)]
    kept = [(x, y) for x, y in joined if x is not None and y is not None and math.isfinite(x) and math.isfinite(y)]
    return [float(x) for x, _ in kept], [float(y) for _, y in kept]


def study_test(
    a: Sequence[float | None],
    b: Sequence[float | None],
    rounds_a: Sequence[int] | None = None,
    rounds_b: Sequence[int] | None = None,
    resolution: float | None = None,
) -> Comparison | None:
    """Kernel b's values against kernel a's by the study's test (see the module): paired
    by round when both carry their rounds and two rounds or more pair, else unpaired.
    None below 2 values a side.  `resolution`: the values' quantum, when they are counted
    in whole steps (mem_eat's total is a whole number of chunks); without it (and never
    below it) the values' printed step (steps()).  Each value carries a rounding
    error of up to half a step, so no sample's spread is taken as less than that error's
    (rounding_sd()); without a floor, rounds that all give the same difference would be a
    difference with no noise at all (p = 0 on two rounds)."""
    joined = pairs(a, b, rounds_a, rounds_b)
    paired = joined is not None and len(joined[0]) >= 2
    xs, ys = joined if paired and joined is not None else (_clean(a), _clean(b))
    if len(xs) < 2 or len(ys) < 2:
        return None
    log = all(v > 0 for v in xs + ys)
    fx, fy = (np.log(xs), np.log(ys)) if log else (np.array(xs, float), np.array(ys, float))
    step_x, step_y = steps(xs, ys, resolution)
    floor_x, floor_y = rounding_sd(xs, step_x, log), rounding_sd(ys, step_y, log)
    if paired:
        d = fy - fx
        sd = max(float(np.std(d, ddof=1)), math.hypot(floor_x, floor_y))
        se, df, mean = sd / math.sqrt(len(d)), float(len(d) - 1), float(np.mean(d))
    else:
        mean, se, df = _welch(fx, fy, floor_x, floor_y)
    # no spread at all: the same difference in every round (p 0), or none (p 1)
    p = (1.0 if mean == 0 else 0.0) if se == 0 else float(2 * sps.t.sf(abs(mean / se), df))
    return Comparison(
        test="paired t-test" if paired else "Welch t-test",
        method=("log ratios" if paired else "logs") if log else "values",
        paired=paired,
        a=tuple(xs),
        b=tuple(ys),
        p=p,
        mean=mean,
        se=se,
        df=df,
        scale="log" if log else "raw",
        steps=(step_x, step_y),
    )


MAX_DECIMALS = 9  # a value exact only with more decimals was computed, not printed: no step


def printed_step(values: Sequence[float]) -> float | None:
    """The step of values read from printed decimals: the coarsest power of ten, at most 1,
    at which every non-zero value is exact (0.1043, 0.1044 → 1e-4; 43.0, 44.0 → 1), up to
    the float arithmetic of a change of unit (0.377736 s x 1e6 → 1 µs); 0 when one needs
    more than MAX_DECIMALS decimals (computed, not printed: no step); None when no value
    is non-zero (a zero shows no step)."""
    shown = [v for v in values if v != 0]
    if not shown:
        return None
    for k in range(MAX_DECIMALS + 1):
        if all(math.isclose(round(v, k), v, rel_tol=1e-12) for v in shown):
            return 10.0**-k
    return 0.0


def steps(xs: Sequence[float], ys: Sequence[float], resolution: float | None) -> tuple[float, float]:
    """Both samples' resolution: the printed step of both kernels' values together (one
    metric, one printer: a kernel whose values happen to be round, 1.0 and 1.0 beside
    1.001, is not printed coarser), never less than the caller's `resolution`."""
    step = max(resolution or 0.0, printed_step([*xs, *ys]) or 0.0)
    return step, step


def rounding_sd(values: Sequence[float], resolution: float | None, log: bool) -> float:
    """The standard deviation the rounding to `resolution` alone gives a sample's values
    (a uniform error of up to half a step: resolution / sqrt(12)), on the test's scale
    (log: relative to the sample's median); 0 without a resolution."""
    if not resolution or not values:
        return 0.0
    sd = resolution / math.sqrt(12)
    return sd / statistics.median(values) if log else sd


def _welch(fx: np.ndarray, fy: np.ndarray, floor_x: float = 0.0, floor_y: float = 0.0) -> tuple[float, float, float]:
    """Welch's difference of means, its standard error and the Welch-Satterthwaite df
    (each sample's standard deviation at least its floor: rounding_sd())."""
    sx, sy = max(float(np.std(fx, ddof=1)), floor_x), max(float(np.std(fy, ddof=1)), floor_y)
    vx, vy = sx**2 / len(fx), sy**2 / len(fy)
    den = vx**2 / (len(fx) - 1) + vy**2 / (len(fy) - 1)
    df = (vx + vy) ** 2 / den if den > 0 else float(len(fx) + len(fy) - 2)
    return float(np.mean(fy) - np.mean(fx)), math.sqrt(vx + vy), df


def correct(pvalues: Sequence[float | None]) -> list[float | None]:
    """Benjamini-Hochberg adjusted p-values (q-values) of a family of tests; None (a
    value that was not tested) stays None and is not counted in the family."""
    tested = [p for p in pvalues if p is not None]
    if not tested:
        return [None] * len(pvalues)
    qs = iter(float(q) for q in sps.false_discovery_control(np.array(tested, dtype=float), method="bh"))
    return [None if p is None else next(qs) for p in pvalues]


def claimed(q: float | None, alpha: float = ALPHA) -> bool:
    """Whether a corrected test claims its difference: q < alpha."""
    return q is not None and q < alpha
