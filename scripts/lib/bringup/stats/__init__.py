"""Statistics of repeated measurements (scipy.stats, pinned in requirements.txt).

The unit of replication is the boot: each round boots every kernel once, so a
metric has one value per kernel per round.  The package:

  - `study.py`: the study's one test (study_test(): a Comparison with its p, its
    ratio and Hodges-Lehmann shift with their 95 % intervals) and the correction
    of a family (correct(): Benjamini-Hochberg).  Every place that compares
    kernels calls it; switching the test is a change there.
  - `effect.py`: the Hodges-Lehmann shift and its bootstrap interval.
  - `describe.py`: one kernel's values summarized (median, mean, 95 % interval).
  - `untilci.py`: --until-ci's stopping rule (UntilCI, still_wide), shared by boot
    timing, the footprint and the cold build cost.

docs/report.md states the rules.  `from bringup import stats` gives all of it.
"""

from bringup.stats.describe import summarize, t95
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
    "RULE",
    "UNTIL_CI_MAX_ROUNDS",
    "UNTIL_CI_MIN_ROUNDS",
    "UNTIL_CI_PCT",
    "Comparison",
    "Headline",
    "UntilCI",
    "claimed",
    "correct",
    "detectable",
    "difference_interval",
    "hodges_lehmann",
    "rounds_needed",
    "shift_interval",
    "smallest_p",
    "still_wide",
    "study_test",
    "summarize",
    "t95",
]
