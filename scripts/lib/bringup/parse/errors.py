"""The one exception the parsers raise, and the guards that keep numbers no log holds
out of their results.

parse/ stands alone (it imports nothing else of bringup), so it does not raise
BringupError: callers that turn input into results (the build, the report, the
CLI) turn a ParseError into their own one-line error.  integer() refuses a number of
more digits than any log value (int() would refuse thousands with a ValueError),
numbers() names the input and line of such a number, and checked() refuses a result
holding an infinity, NaN or a value beyond 64 bits (JSON has no Infinity)."""

import contextlib
import math
import re
from collections.abc import Iterator
from typing import TypeVar

T = TypeVar("T")


class ParseError(ValueError):
    """Input a parser cannot read; the message is one line naming the input."""


# the largest magnitude a parser hands on: no log, lmbench result or meminfo line holds more,
# and JSON readers (and records' 64-bit fields) take it as it is
MAX_VALUE = 2**63 - 1
MAX_DIGITS = 30
LONG_DIGITS = re.compile(r"\d{20,}")


def _show(v: object, limit: int = 60) -> str:
    s = repr(v)
    return s if len(s) <= limit else s[: limit - 3] + "..."


class LongNumber(ParseError):
    """A number of more digits than any value a log holds (int() refuses thousands)."""


def integer(digits: str) -> int:
    """int(digits) of a number a parser found; LongNumber (a ParseError, one line) when it
    has more digits than any count, size or time in a log (numbers() adds the input and line)."""
    d = digits.strip().lstrip("+-")
    if len(d) > MAX_DIGITS:
        raise LongNumber(f"a {len(d)}-digit number {_show(d, 30)}: beyond any value a log holds")
    return int(digits)


@contextlib.contextmanager
def numbers(name: str, text: str, line: int | None = None) -> Iterator[None]:
    """Around the code that reads the numbers of one line (or, without line, of a whole text):
    a number too long to convert (int() of thousands of digits, a float beyond any range)
    becomes a ParseError naming the input, the line and the number, not a crash."""
    try:
        yield
    except LongNumber as e:
        raise ParseError(f"{name}: line {line}: {e}" if line else f"{name}: {_located(e, text)}") from None
    except ParseError:
        raise
    except (ValueError, OverflowError):
        m = LONG_DIGITS.search(text)
        if m is None:  # not a long number: a bug, shown as one
            raise
        where = f"{name}: line {line}" if line else name
        raise ParseError(
            f"{where}: a {len(m.group(0))}-digit number {_show(m.group(0), 30)}: beyond any value a log holds"
        ) from None


def _located(e: LongNumber, text: str) -> str:
    """e's message, after the line of text that holds a long number."""
    for i, ln in enumerate(text.split("\n"), 1):
        if LONG_DIGITS.search(ln):
            return f"line {i}: {e}"
    return str(e)


def checked(data: T, name: str) -> T:
    """data (a parser's result) with every number finite and within MAX_VALUE; else a
    ParseError naming the input, the line (when the entry says) and the field."""
    bad = _first_bad(data, "", None)
    if bad is not None:
        path, value, line = bad
        where = f"{name}: line {line}" if line else name
        finite = not isinstance(value, float) or math.isfinite(value)
        why = "beyond any value a log holds" if finite else "not a finite number"
        raise ParseError(f"{where}: field '{path or '<top>'}': {_show(value)}: {why}")
    return data


def _first_bad(v: object, path: str, line: int | None) -> tuple[str, object, int | None] | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, float):
        return (path, v, line) if not math.isfinite(v) or abs(v) > MAX_VALUE else None
    if isinstance(v, int):
        return (path, v, line) if abs(v) > MAX_VALUE else None
    if isinstance(v, dict):
        ln = v.get("line") if isinstance(v.get("line"), int) else v.get("line_no")
        line = ln if isinstance(ln, int) and not isinstance(ln, bool) and 0 < ln <= MAX_VALUE else line
        # the entries first: a total is made of them, and an entry names its line
        for k, x in sorted(v.items(), key=lambda kx: not isinstance(kx[1], dict | list | tuple)):
            bad = _first_bad(x, f"{path}.{k}" if path else str(k), line)
            if bad is not None:
                return bad
    elif isinstance(v, list | tuple):
        for i, x in enumerate(v):
            bad = _first_bad(x, f"{path}[{i}]", line)
            if bad is not None:
                return bad
    return None
