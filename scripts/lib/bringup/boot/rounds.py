"""The order of boots in a round.  Each round boots every kernel once; the
order changes from round to round as the rows of a Williams square, so that
over a full cycle every kernel runs in every position equally often and every
kernel follows every other equally often (A B, B A for two kernels).  Whatever
the first boot of a round warms up (host page cache, QEMU's own pages) then
favours no kernel, and position can be checked as a factor."""

from __future__ import annotations

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
