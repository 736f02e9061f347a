"""The instruction clock's rule: a difference is claimed when it is beyond the A/A floor.

On the instruction clock (QEMU icount; docs/clock.md) repeated boots of one kernel give
the same values, or values a few icount steps apart (82 us, 0.02 % of a boot).  A
t-test on values with no spread gives p = 0 for any difference however small, so the
study's test (study.py) would claim one icount step.  Every place that compares kernels
measured on the instruction clock decides with beyond_floor() instead (the summary's
findings, the boot explained's initcall rows and its time to the end milestone,
`compare --boot`, the console cost, the places, the tables' marks and the workloads
chart):

  a difference is claimed when it is at least FLOOR_MULTIPLE times the floor, the
  floor being the larger of the A/A floor (the largest spread one kernel showed
  against itself on that clock: the board's `make aa`, else configs/clock.toml) and
  the two kernels' own spread in these runs, and at least SIZE_PCT % of the base
  kernel's value.

The rule works in the values' own unit: a floor in % applies to a base of 100 (the
summary's findings), a floor in µs to values in µs (an initcall row: the end
milestone's A/A floor applied to that milestone's time, so a small initcall does not
claim on one icount step).  The host clock keeps the study's test.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

FLOOR_MULTIPLE = 3.0  # a claimed difference is at least this many times the floor
SIZE_PCT = 1.0  # ... and at least this % of the base kernel's value


@dataclass(frozen=True)
class Decision:
    """One difference judged by the rule, in the values' unit: b - a, the floor it was
    judged against (A/A floor or the kernels' own spread, the larger), the threshold
    (max(SIZE_PCT % of the base, FLOOR_MULTIPLE x floor)) and whether it is claimed."""

    delta: float | None
    floor: float
    threshold: float
    claimed: bool


def beyond_floor(delta: float | None, base: float, floor: float, own_spread: float = 0.0) -> Decision:
    """The rule (see the module): delta = b - a, base = a's value, floor = the A/A floor and
    own_spread = the kernels' own spread, all in one unit."""
    f = max(floor, own_spread, 0.0)
    threshold = max(SIZE_PCT / 100 * abs(base), FLOOR_MULTIPLE * f)
    claimed = delta is not None and delta != 0 and abs(delta) >= threshold
    return Decision(delta=delta, floor=f, threshold=threshold, claimed=claimed)


def _clean(values: Sequence[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None]


def spread(values: Sequence[float | None]) -> float:
    """max - min of the values there are (0 for fewer than two)."""
    v = _clean(values)
    return max(v) - min(v) if len(v) >= 2 else 0.0


def spread_pct(values: Sequence[float | None]) -> float:
    """The relative spread (max - min) / |median| of one kernel's values, in %."""
    v = _clean(values)
    med = statistics.median(v) if v else 0.0
    return spread(v) / abs(med) * 100 if med else 0.0


def judge(a: Sequence[float | None], b: Sequence[float | None], floor: float) -> Decision | None:
    """Kernel b's values against kernel a's by the rule: the difference of the medians,
    judged against `floor` (in the values' unit) and the larger of the two kernels'
    spreads; None when either has no value."""
    xa, xb = _clean(a), _clean(b)
    if not xa or not xb:
        return None
    ma, mb = statistics.median(xa), statistics.median(xb)
    return beyond_floor(mb - ma, ma, floor, max(spread(xa), spread(xb)))


def judge_pct(a: Sequence[float | None], b: Sequence[float | None], floor_pct: float) -> Decision | None:
    """judge() with the floor in % of a's median (a metric's A/A floor as configs/clock.toml
    and aa.json keep it)."""
    xa = _clean(a)
    if not xa:
        return None
    return judge(xa, b, floor_pct / 100 * abs(statistics.median(xa)))
