"""Boot-log milestones: pure text-in, values-out.

The same functions serve live boots (lines as they arrive) and logs made
elsewhere (`bringup parse bootlog FILE`): raw console text, dmesg with printk
times, or grabserial/bringup timestamped logs.

Timing rules, named and explicit:
  - a milestone's host time is the arrival time of the FIRST byte of the
    FIRST line that matches it (grabserial reports the end of the last one);
  - its printk time is the [seconds] prefix of that line, when it has one;
  - intervals are between consecutive milestones that were reached;
  - 'clock zero' is host time minus printk time on the first line whose
    printk time is not zero: the host time at which the kernel's clock read 0;
  - 'hidden at zero' is clock zero minus the host time of the first line with a
    printk time: how long the kernel printed at [0.000000] while its clock
    had not started, time that printk stamps hide.
"""

from __future__ import annotations

import io
import re
import statistics
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from itertools import chain, islice
from typing import BinaryIO

PRINTK_RE = re.compile(r"^\s*(?:<\d+>)?\[\s*(\d+\.\d+)\]\s?")
STAMPED_RE = re.compile(r"^\[\s*(\d+\.\d+)\s+(-?\d+\.\d+)\]\s?(.*)$")  # [abs delta] text


@dataclass(frozen=True)
class Milestone:
    """One milestone with its roles (configs/milestones.toml says what each means)."""

    name: str
    label: str
    regex: re.Pattern[str]
    required: bool = False
    timeout: float = 60.0
    end: bool = False
    reference: bool = False
    reset_if_repeated: bool = False
    match_partial: bool = False
    progress: bool = False
    summary: bool = False
    required_for: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rules:
    milestones: list[Milestone]
    faults: dict[str, re.Pattern[str]]  # fault kind -> regex

    def for_root(self, root: str) -> Rules:
        """The rules of a boot with this root file system: milestones required on it become required."""
        return replace(
            self, milestones=[replace(m, required=True) if root in m.required_for else m for m in self.milestones]
        )

    def reference(self) -> Milestone | None:
        return next((m for m in self.milestones if m.reference), None)

    def shown(self, references: set[str]) -> list[Milestone]:
        """The milestones a table shows: when every run was timed from the reference
        milestone, the ones after it; else all of them."""
        ref = self.reference()
        if ref is None or references != {ref.name}:
            return list(self.milestones)
        names = [m.name for m in self.milestones]
        return self.milestones[names.index(ref.name) + 1 :]

    def flagged(self, role: str) -> list[Milestone]:
        return [m for m in self.milestones if getattr(m, role)]


def printk_time(text: str) -> float | None:
    m = PRINTK_RE.match(text)
    return float(m.group(1)) if m else None


@dataclass
class Found:
    name: str
    host: float | None
    printk: float | None
    line: int
    text: str

    def as_dict(self):
        return {
            "host_s": None if self.host is None else round(self.host, 6),
            "printk_s": self.printk,
            "line": self.line,
            "text": self.text,
        }


@dataclass
class Scan:
    """Incremental scanner: feed lines in order; it records milestones and faults."""

    rules: Rules
    found: dict = field(default_factory=dict)
    fault: dict | None = None
    seen: dict = field(default_factory=dict)  # reset_if_repeated milestone -> times seen
    first_clock: tuple | None = None  # (host, printk) of the first line with printk > 0
    first_printk_host: float | None = None  # host time of the first line with a printk time
    lags: list = field(default_factory=list)  # host - printk, per printk line (for lag stats)

    def feed(self, n: int, host: float | None, text: str) -> None:
        pk = printk_time(text)
        if pk is not None and host is not None and self.first_printk_host is None:
            self.first_printk_host = host
        if pk is not None and pk > 0 and host is not None:
            if self.first_clock is None:
                self.first_clock = (host, pk)
            self.lags.append(host - pk)
        body = PRINTK_RE.sub("", text, count=1) if pk is not None else text
        for m in self.rules.milestones:
            if m.regex.search(body) or (m.match_partial and m.regex.search(text)):
                if m.reset_if_repeated and self.fault is None:
                    self.seen[m.name] = self.seen.get(m.name, 0) + 1
                    if self.seen[m.name] > 1:
                        self.fault = {
                            "kind": "reset",
                            "line": n,
                            "text": text,
                            "message": f"unexpected reset: {m.label} seen a second time",
                        }
                        return
                if m.name not in self.found:
                    self.found[m.name] = Found(m.name, host, pk, n, text)
        for kind, rx in self.rules.faults.items():
            if self.fault is None and rx.search(text):
                self.fault = {
                    "kind": kind,
                    "line": n,
                    "text": text,
                    "message": f"kernel {kind}" if kind != "bug" else "kernel BUG",
                }

    def done(self) -> bool:
        return any(m.end and m.name in self.found for m in self.rules.milestones)

    def next_required(self):
        for m in self.rules.milestones:
            if m.required and m.name not in self.found:
                return m
        return None

    def clock_zero(self) -> float | None:
        if self.first_clock is None:
            return None
        host, pk = self.first_clock
        return round(host - pk, 6)

    def hidden_at_zero(self) -> float | None:
        z = self.clock_zero()
        if z is None or self.first_printk_host is None:
            return None
        return round(max(0.0, z - self.first_printk_host), 6)

    def printk_lag_ms(self) -> dict | None:
        """Host arrival against printk time: each line's (host - printk) minus the
        smallest such offset.  Only meaningful with earlycon."""
        if len(self.lags) < 2:
            return None
        base = min(self.lags)
        lag = sorted((x - base) * 1000 for x in self.lags)
        return {
            "n": len(lag),
            "median": round(statistics.median(lag), 3),
            "p95": round(lag[min(len(lag) - 1, int(0.95 * len(lag)))], 3),
        }

    def result(self) -> dict:
        order = [m.name for m in self.rules.milestones if m.name in self.found]
        ms = {name: self.found[name].as_dict() for name in order}
        intervals = []
        prev = None
        for name in order:
            f = self.found[name]
            if prev is not None and f.host is not None and prev.host is not None:
                intervals.append(
                    {
                        "from": prev.name,
                        "to": name,
                        "host_s": round(f.host - prev.host, 6),
                        "printk_s": (
                            round(f.printk - prev.printk, 6)
                            if f.printk is not None and prev.printk is not None
                            else None
                        ),
                    }
                )
            prev = f
        missing = [m.name for m in self.rules.milestones if m.required and m.name not in self.found]
        return {
            "milestones": ms,
            "intervals": intervals,
            "missing": missing,
            "fault": self.fault,
            "clock_zero_host_s": self.clock_zero(),
            "hidden_at_zero_s": self.hidden_at_zero(),
            "printk_lag_ms": self.printk_lag_ms(),
        }


# --- reading logs made elsewhere -----------------------------------------


MAX_LINE = 64 * 1024  # longer lines are cut (the rest of the line is read and dropped)


def iter_lines(f: BinaryIO) -> Iterator[str]:
    """The lines of a binary stream as text (UTF-8, bad bytes replaced, CRs removed),
    in bounded memory whatever the size of the log or of one line."""
    while True:
        chunk = f.readline(MAX_LINE)
        if not chunk:
            return
        if not chunk.endswith(b"\n"):
            rest = chunk
            while rest and not rest.endswith(b"\n"):
                rest = f.readline(MAX_LINE)
        yield chunk.decode("utf-8", errors="replace").replace("\r", "").removesuffix("\n")


def read_log_stream(f: BinaryIO) -> tuple[str, Iterator[tuple[int, float | None, str]]]:
    """A log on a binary stream -> (format, iterator of (line_no, host_time_or_None, text)).

    Formats: 'stamped' (grabserial/bringup: "[abs delta] text"), 'printk'
    (dmesg-style), 'raw'; told from the first 200 lines."""
    lines = iter_lines(f)
    head = list(islice(lines, 200))
    stamped = sum(1 for line in head[:50] if STAMPED_RE.match(line))
    every = chain(head, lines)
    if head and stamped >= max(1, len(head[:50]) // 2):

        def stamped_lines() -> Iterator[tuple[int, float | None, str]]:
            for i, line in enumerate(every, 1):
                m = STAMPED_RE.match(line)
                yield (i, float(m.group(1)), m.group(3)) if m else (i, None, line)

        return "stamped", stamped_lines()
    printk = sum(1 for line in head if PRINTK_RE.match(line))
    fmt = "printk" if printk >= max(1, len(head) // 3) else "raw"
    return fmt, ((i, None, line) for i, line in enumerate(every, 1))


def read_log(data: bytes) -> tuple[str, list[tuple[int, float | None, str]]]:
    """Raw bytes of a log -> (format, [(line_no, host_time_or_None, text)])."""
    fmt, lines = read_log_stream(io.BytesIO(data))
    return fmt, list(lines)


def parse_bootlog(data: bytes | BinaryIO, rules: Rules) -> dict:
    """The milestones, intervals and fault of a log (bytes or a binary stream, read once)."""
    fmt, lines = read_log_stream(io.BytesIO(data) if isinstance(data, bytes) else data)
    scan = Scan(rules)
    n = 0
    for n, host, text in lines:
        if scan.fault is None:
            scan.feed(n, host, text)
    res = scan.result()
    res["format"] = fmt
    res["lines"] = n
    res["complete"] = scan.done()
    return res
