"""The one home of deltas between kernels: the percentage, and how a table shows it.

Every table and finding compares a kernel with the first one as
delta = (B - A) / A, in percent; None when either value is missing or A is 0
(a delta against nothing is not a number, and never shows as 0)."""

from __future__ import annotations


def pct(a: float | None, b: float | None) -> float | None:
    """(b - a) / a in percent; None when a or b is missing, or a is 0."""
    if a is None or b is None or a == 0:
        return None
    return (b - a) / a * 100.0


def fmt_delta(d: float | None, minus: str = "-") -> str:
    """A delta as tables show it: '+ 13 %', '- 2 %', 'n/a' (minus: '−' for HTML)."""
    if d is None:
        return "n/a"
    return f"{'+' if d >= 0 else minus} {abs(d):.0f} %"


def delta(a: float | None, b: float | None) -> float | None:
    """pct(a, b) to one decimal, as the tables keep it."""
    d = pct(a, b)
    return None if d is None else round(d, 1)


def line_link(target: str, line: int | None) -> str:
    """A link to a file, at its line when the record says which."""
    return f"{target}#L{line}" if line else target
