"""Progress of a long step: a percentage and the time left where the end is known.

Callers pass counts: the total when it can be known (a kernel build: the kbuild
commands its last build ran; boot rounds: the boots planned; None when unknown)
and what is done so far.  On a terminal a tqdm bar on stdout shows percent, count,
elapsed and remaining time; otherwise (CI, `make all >log`) a plain line goes to
`say` at most every `every` seconds:

    5.10: make zImage: 42 % (380/905 commands), 1m20s, about 1m50s left  CC kernel/fork.o

A total that turns out too small (this build does more than the last) is raised
to the count, so the percentage never passes 100 before the end.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import IO, Any

from tqdm import tqdm


def fmt_duration(s: float) -> str:
    s = max(0, int(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


class Progress:
    """One long step.  `update(done)` sets the count, `advance(n)` adds to it,
    `say(msg)` prints a line without breaking the bar, `close()` ends it (also as
    a context manager)."""

    def __init__(
        self,
        label: str,
        total: int | None = None,
        unit: str = "",
        say: Callable[[str], object] = print,
        every: float = 20.0,
        stream: IO[str] | None = None,
        tty: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.total = total if total and total > 0 else None
        self.unit = unit
        self.done = 0
        self.note = ""
        self._say = say
        self._every = every
        self._clock = clock
        self._t0 = clock()
        self._last_line = self._t0
        stream = stream if stream is not None else sys.stdout
        is_tty = tty if tty is not None else _isatty(stream)
        self._bar: Any = None
        if is_tty:
            self._bar = tqdm(
                total=self.total,
                desc=label,
                unit=f" {unit}" if unit else "it",
                file=stream,
                leave=False,
                dynamic_ncols=True,
                mininterval=0.5,
            )

    # --- counts ---------------------------------------------------------------

    def update(self, done: int, note: str = "") -> None:
        """The count done so far (and an optional note: the last thing done)."""
        self.done = max(0, done)
        self.note = note
        if self.total is not None and self.done > self.total:
            self.total = self.done
        if self._bar is not None:
            if self.total is not None and self._bar.total != self.total:
                self._bar.total = self.total
            self._bar.n = self.done
            if note:
                self._bar.set_postfix_str(" ".join(note.split())[:40], refresh=False)
            self._bar.refresh()
        elif self._clock() - self._last_line >= self._every:
            self._last_line = self._clock()
            self._say(self.line())

    def advance(self, n: int = 1, note: str = "") -> None:
        self.update(self.done + n, note)

    def set_label(self, label: str) -> None:
        self.label = label
        if self._bar is not None:
            self._bar.set_description_str(label, refresh=False)

    # --- what is shown ----------------------------------------------------------

    def elapsed(self) -> float:
        return self._clock() - self._t0

    def fraction(self) -> float | None:
        return min(1.0, self.done / self.total) if self.total else None

    def remaining(self) -> float | None:
        """Seconds left at the rate so far; None before the first count or without a total."""
        if not self.total or self.done <= 0:
            return None
        return self.elapsed() * (self.total - self.done) / self.done

    def line(self) -> str:
        """The plain line: label, percent and count, elapsed, time left, note."""
        unit = f" {self.unit}" if self.unit else ""
        parts = [f"{self.label}:"]
        frac = self.fraction()
        if frac is not None:
            parts.append(f"{frac * 100:.0f} % ({self.done}/{self.total}{unit}),")
        elif self.done:
            parts.append(f"{self.done}{unit},")
        parts.append(fmt_duration(self.elapsed()))
        left = self.remaining()
        if left is not None:
            parts[-1] += ","
            parts.append(f"about {fmt_duration(left)} left")
        note = f"  {self.note.strip()[:70]}" if self.note.strip() else ""
        return " ".join(parts) + note

    def say(self, msg: str) -> None:
        """A line of the caller's own, printed above the bar."""
        if self._bar is not None:
            with tqdm.external_write_mode(file=self._bar.fp):
                self._say(msg)
        else:
            self._say(msg)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
