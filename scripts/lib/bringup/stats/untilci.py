"""Enough rounds: the --until-ci rule of every measurement made in rounds (boot
timing, the footprint, the cold build cost): after each round from the minimum on,
every headline difference's 95 % interval must be narrow enough, else another round
is run, up to a maximum.  docs/report.md states it.  Not a comparison of kernels
(stats/study.py is): a stopping rule."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bringup.stats.describe import clean, summarize, t95
from bringup.stats.study import ALPHA


def smallest_p(n: int, paired: bool, n2: int | None = None) -> float:
    """The smallest two-sided p an exact rank test can give with n rounds (paired)
    or n and n2 values: 2/2^n for the signed-rank test, 2/C(n+n2, n) for Mann-Whitney.
    The study's test is not a rank test (stats/study.py); this arithmetic stays as
    --until-ci's floor on rounds (rounds_needed)."""
    if paired:
        return min(1.0, 2 / 2**n)
    return min(1.0, 2 / math.comb(n + (n2 if n2 is not None else n), n))


def rounds_needed(family: int, paired: bool = True, alpha: float = ALPHA) -> int:
    """The fewest rounds --until-ci accepts for a difference whose interval excludes 0:
    the rounds a rank test would need before its smallest p passes the Benjamini-
    Hochberg threshold alpha/family (6 for one test, 12 for 56).  The study's t-test
    could state a difference on fewer, but a difference seen on 3 to 5 rounds is as
    often a drift of those rounds (a host busy during one kernel's first boots) as a
    kernel's: the rule goes on until the rounds would outvote such a drift."""
    n = 2
    while smallest_p(n, paired) > alpha / max(1, family) and n < 1000:
        n += 1
    return n


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
    base = abs(statistics.median(clean(list(a.values()))))
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
