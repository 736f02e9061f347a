"""The order of boots in a round.  Each round boots every kernel once; the
order changes from round to round as the rows of a Williams square, so that
over a full cycle every kernel runs in every position equally often and every
kernel follows every other equally often (A B, B A for two kernels).  Whatever
the first boot of a round warms up (host page cache, QEMU's own pages) then
favours no kernel, and position can be checked as a factor.

Several places (identical boards of a labgrid lab) share a study by rounds: a
place always runs a whole round, so the kernels compared in a round ran on the
same board one after the other and the paired comparison by round stays clean
of any difference between boards.  Dealer hands the rounds out; each place walks
through the Williams rows from its own offset (place_order), so every place runs
every order equally often and, at one time, the places run different orders."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from bringup import stats
from bringup.errors import BringupError


def williams(n: int) -> list[list[int]]:
    """Rows of a Williams design for n treatments (n rows for even n, 2n for odd n)."""
    if n <= 0:
        return []
    first, lo, hi = [0], 1, n - 1
    while len(first) < n:
        first.append(lo)
        lo += 1
        if len(first) < n:
            first.append(hi)
            hi -= 1
    rows = [[(x + i) % n for x in first] for i in range(n)]
    if n % 2:
        rows += [list(reversed(r)) for r in rows]
    return rows


def order(kernels: list[str], round_index: int) -> list[str]:
    """The kernels in the order of round `round_index` (0-based)."""
    rows = williams(len(kernels))
    return [kernels[i] for i in rows[round_index % len(rows)]] if rows else []


def cycle(n: int) -> int:
    """Rounds in one balanced cycle."""
    return len(williams(n))


def rule(runs: int, until_ci: float | None, max_rounds: int) -> stats.UntilCI:
    """How many rounds a measurement runs (stats.UntilCI: `runs`, or with until_ci more
    until every headline interval is that narrow, at most max_rounds); a request that
    cannot work is refused here, before any boot."""
    if until_ci is not None and not (0 < until_ci <= 100):
        raise BringupError(f"--until-ci {until_ci}: give a width in % above 0 and at most 100")
    r = stats.UntilCI(runs, until_ci, max_rounds, "--max-rounds")
    if until_ci is not None and max_rounds < r.first_check:
        raise BringupError(
            f"--max-rounds {max_rounds} is below the {r.first_check} rounds --until-ci runs before it judges "
            f"the intervals (at least {stats.UNTIL_CI_MIN_ROUNDS}, and at least the rounds asked)"
        )
    return r


def place_order(kernels: list[str], place_index: int, place_round: int) -> list[str]:
    """The kernels in the order of the `place_round`-th round (0-based) a place runs,
    for the place_index-th place of a study: the Williams rows from the place's own
    offset.  One place (index 0) runs the rows in order, as order() does."""
    return order(kernels, place_round + place_index)


class Dealer:
    """Hands out the rounds of one study to the workers of its places (one worker per
    place, in parallel; thread-safe).  take() gives a place its next round: the round
    number (1, 2, ... in the order rounds are taken) and the kernel order; None once no
    more rounds are to run: `runs` rounds were taken, or rule.done() said stop after a
    finished round (--until-ci: rounds under way on other places are finished and
    count), or stop() was called (an error on a place, Ctrl-C)."""

    def __init__(self, rule: stats.UntilCI, kernels: list[str], places: Sequence[str | None]):
        self.rule, self.kernels, self.places = rule, kernels, list(places)
        self.order: dict[int, list[str]] = {}  # round -> kernel order
        self.place_of: dict[int, str | None] = {}  # round -> the place that ran it
        self.finished_rounds: list[int] = []
        self.stopped_at: int | None = None  # rounds finished when rule.done() said stop
        self._next = 1
        self._per_place = [0] * len(self.places)
        self._halt = False
        self._lock = threading.Lock()

    def take(self, place_index: int) -> tuple[int, list[str]] | None:
        with self._lock:
            if self._halt or self.stopped_at is not None or self._next > self.rule.limit:
                return None
            rnd = self._next
            self._next += 1
            ks = place_order(self.kernels, place_index, self._per_place[place_index])
            self._per_place[place_index] += 1
            self.order[rnd] = ks
            self.place_of[rnd] = self.places[place_index]
            return rnd, ks

    def finished(self, rnd: int, headline: stats.Headline) -> bool:
        """Round `rnd` is done (headline: the values of every finished boot so far):
        True when the rounds may stop (rule.done over the rounds finished)."""
        with self._lock:
            self.finished_rounds.append(rnd)
            if self.stopped_at is not None:
                return True
            if self.rule.done(len(self.finished_rounds), headline, self.kernels):
                self.stopped_at = len(self.finished_rounds)
                return True
            return False

    def stop(self) -> None:
        with self._lock:
            self._halt = True

    def rounds(self) -> list[int]:
        """The rounds taken, in order."""
        return sorted(self.order)
