"""Statistics of repeated measurements (scipy.stats, pinned in requirements.txt).

The unit of replication is the boot: each round boots every kernel once, so a
metric has one value per kernel per round.  The package:

  - `study.py`: the study's one test (study_test(): a Comparison with its p, its
    ratio and Hodges-Lehmann shift with their 95 % intervals) and the correction
    of a family (correct(): Benjamini-Hochberg).  Every place that compares
    kernels calls it; switching the test is a change there.  It takes the values'
    resolution there too (steps(): the caller's quantum, else their printed step).
  - `deterministic.py`: the instruction clock's rule instead of the test (beyond_floor():
    a difference is claimed beyond FLOOR_MULTIPLE x the A/A floor and SIZE_PCT %; judge()).
  - `effect.py`: the Hodges-Lehmann shift and its bootstrap interval.
  - `describe.py`: one kernel's values summarized (median, mean, 95 % interval).
  - `untilci.py`: --until-ci's stopping rule (UntilCI, still_wide), shared by boot
    timing, the footprint and the cold build cost.

docs/report.md states the rules.  `from bringup import stats` gives all of it.
"""

from bringup.stats.describe import summarize, t95
from bringup.stats.deterministic import (
    FLOOR_MULTIPLE,
    SIZE_PCT,
    Decision,
    beyond_floor,
    judge,
    judge_pct,
    spread_pct,
)
from bringup.stats.effect import hodges_lehmann, shift_interval
from bringup.stats.study import ALPHA, RULE, Comparison, claimed, correct, detectable, study_test
from bringup.stats.untilci import (
    UNTIL_CI_MAX_ROUNDS,
    UNTIL_CI_MIN_ROUNDS,
    UNTIL_CI_PCT,
    Headline,
    UntilCI,
    difference_interval,
    rounds_needed,
    smallest_p,
    still_wide,
)

__all__ = [
    "ALPHA",
    "FLOOR_MULTIPLE",
    "RULE",
    "SIZE_PCT",
    "UNTIL_CI_MAX_ROUNDS",
    "UNTIL_CI_MIN_ROUNDS",
    "UNTIL_CI_PCT",
    "Comparison",
    "Decision",
    "Headline",
    "UntilCI",
    "beyond_floor",
    "claimed",
    "correct",
    "detectable",
    "difference_interval",
    "hodges_lehmann",
    "judge",
    "judge_pct",
    "rounds_needed",
    "shift_interval",
    "smallest_p",
    "spread_pct",
    "still_wide",
    "study_test",
    "summarize",
    "t95",
]
