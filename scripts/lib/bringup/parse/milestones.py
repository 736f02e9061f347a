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
from typing import BinaryIO, Literal

MAX_LAGS = 100_000  # printk lag statistics come from the first lines with both times (bounded memory)
# "[    1.234567] ", and "[    1.234567][    T1] " with the caller (CONFIG_PRINTK_CALLER); bytes a
# console garbled as the kernel took the UART over (U+FFFD) before it are no text
PRINTK_RE = re.compile(r"^[\s\ufffd]*(?:<\d+>)?\[\s*(\d+\.\d+)\](?:\[\s*[TC]\d+\])?\s?")


Phase = Literal["before_kernel", "kernel", "any"]
Root = Literal["ramdisk", "nfs"]


@dataclass(frozen=True)
class Roles:
    """What a milestone is for, as configs/milestones.toml says it (docs/boot-timing.md).

    Declared once, here (parsers import nothing else of bringup, so the declaration
    lives with the parser that uses it): model/milestones.py's MilestoneSpec takes these
    fields, their types and defaults for the file's milestone tables, and Milestone
    carries them.  `phase` is "before_kernel" (only before the kernel starts),
    "kernel" (only after) or "any"; `required_for` the roots on which it is required."""

    phase: Phase = "any"
    required: bool = False
    timeout: float = 60.0
    end: bool = False
    reference: bool = False
    reset_if_repeated: bool = False
    match_partial: bool = False
    progress: bool = False
    summary: bool = False
    prompt: bool = False
    required_for: tuple[Root, ...] = ()
    after_initcalls: bool = False
    delayed: bool = False  # the sensitivity check's known cost (make ab) lands just before it


@dataclass(frozen=True, kw_only=True)
class Milestone(Roles):
    """One milestone with its roles (Roles).

    `regex` matches any of its wordings; `variants` are the same wordings one by one,
    each with who prints it (a bootloader's name, or "" for the milestone's own regex),
    when some are a bootloader's; `source` the bootloader field it came from."""

    name: str
    label: str
    regex: re.Pattern[str]
    variants: tuple[tuple[str, re.Pattern[str]], ...] = ()
    source: str | None = None

    def match(self, body: str, text: str) -> str | None:
        """Who prints the wording this line matches ("" when unnamed), or None."""
        if not (self.regex.search(body) or (self.match_partial and self.regex.search(text))):
            return None  # one search of all the wordings first: most lines match none
        for who, rx in self.variants or (("", self.regex),):
            if rx.search(body) or (self.match_partial and rx.search(text)):
                return who
        return None


REPEAT_LINES = 5  # a banner printed again within this many lines is the same boot's, not a reset's


def _same_banner(last: tuple[int, str, int], now: tuple[int, str, int]) -> bool:
    """(line, text, milestone lines matched before it) of a banner and of the same banner again:
    printed again a few lines on with no other milestone between (U-Boot 1.x before and after
    relocation), the same words (one of the two with noise after them)."""
    (n0, t0, k0), (n, t, k) = last, now
    return n - n0 <= REPEAT_LINES and k == k0 + 1 and (t.startswith(t0) or t0.startswith(t))


@dataclass(frozen=True)
class Rules:
    milestones: list[Milestone]
    faults: dict[str, re.Pattern[str]]  # fault kind -> regex
    prompts: tuple[tuple[str, re.Pattern[str]], ...] = ()  # bootloader name -> its prompt
    # bootloader name -> its first stage's words before it loads the next stage, which
    # prints the same banner again (no reset)
    next_stages: tuple[tuple[str, re.Pattern[str]], ...] = ()

    def for_root(self, root: str) -> Rules:
        """The rules of a boot with this root file system: milestones required on it become required."""
        return replace(
            self, milestones=[replace(m, required=True) if root in m.required_for else m for m in self.milestones]
        )

    def optional(self, names: list[str] | tuple[str, ...]) -> Rules:
        """The rules of a boot that is not expected to print these milestones (a boot
        profile's optional_milestones, e.g. a quiet console): they are no longer required."""
        return replace(self, milestones=[replace(m, required=False) if m.name in names else m for m in self.milestones])

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


def _tidy(text: str) -> str:
    """A line as quoted: without the spaces a terminal padded it with (a capture of a
    118-column screen), but with the one space after a prompt (`login: `, `# `)."""
    t = text.rstrip()
    if t != text and t[-1:] in (":", "#", "$", ">", "%") and text[len(t)] == " ":
        return t + " "
    return t


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
    """Incremental scanner: feed lines in order; it records milestones and faults.

    Order-aware: the kernel has started at its first line with a printk time or at the
    first milestone found that is not a bootloader's; after that, bootloader-phase
    milestones no longer match (a module loading late is not the kernel load), and a
    bootloader banner is an unexpected reset.  Kernel-phase milestones (a shell prompt)
    match only after it."""

    rules: Rules
    found: dict = field(default_factory=dict)
    fault: dict | None = None
    seen: dict = field(default_factory=dict)  # (reset_if_repeated milestone, who) -> times seen
    first_clock: tuple | None = None  # (host, printk) of the first line with printk > 0
    first_printk_host: float | None = None  # host time of the first line with a printk time
    lags: list = field(default_factory=list)  # host - printk, per printk line (for lag stats)
    kernel_started: bool = False
    variants: dict = field(default_factory=dict)  # milestone -> who printed the wording found
    prompt: tuple | None = None  # (bootloader, line, text) of the first bootloader prompt
    reset: dict | None = None  # the first unexpected reset, also when another fault came first
    handoff: set = field(default_factory=set)  # bootloaders whose first stage said it loads the next
    banners: dict = field(default_factory=dict)  # (reset_if_repeated milestone, who) -> its last (line, text, matched)
    matched: int = 0  # milestone lines matched so far

    def feed(self, n: int, host: float | None, text: str) -> None:
        pk = printk_time(text)
        self._clock(host, pk)
        body = PRINTK_RE.sub("", text, count=1) if pk is not None else text
        if not self.kernel_started and self.prompt is None:
            who = next((w for w, rx in self.rules.prompts if rx.search(body)), None)
            if who is not None:
                self.prompt = (who, n, _tidy(text))
        started = self.kernel_started
        if not started:
            self.handoff.update(w for w, rx in self.rules.next_stages if rx.search(body))
        for m in self.rules.milestones:
            if not m.reset_if_repeated and (
                m.name in self.found or (m.phase == "before_kernel" and started)
            ):  # nothing more to learn from it (a milestone's time is its first line)
                continue
            if m.phase == "kernel" and not started:
                continue
            who = m.match(body, text)
            if who is not None and not self._milestone(m, who, n, host, pk, text):
                return
        for kind, rx in self.rules.faults.items():
            if self.fault is None and (rx.search(body) or (body is not text and rx.search(text))):
                self.fault = {
                    "kind": kind,
                    "line": n,
                    "text": _tidy(text),
                    "message": f"kernel {kind}" if kind != "bug" else "kernel BUG",
                }

    def _clock(self, host: float | None, pk: float | None) -> None:
        if pk is None:
            return
        self.kernel_started = True
        if host is not None and self.first_printk_host is None:
            self.first_printk_host = host
        if pk > 0 and host is not None:
            if self.first_clock is None:
                self.first_clock = (host, pk)
            if len(self.lags) < MAX_LAGS:
                self.lags.append(host - pk)

    def _milestone(self, m: Milestone, who: str, n: int, host: float | None, pk: float | None, text: str) -> bool:
        """Record a line that matched m; False when it is an unexpected reset (the line
        begins another boot: nothing more of it counts)."""
        late = m.phase == "before_kernel" and self.kernel_started
        self.matched += 1
        if m.reset_if_repeated and self.reset is None:
            # counted per bootloader: another one's banner before the kernel is the next
            # stage of a chain (U-Boot -> GRUB, coreboot -> SeaBIOS), the same one's a reset
            key = (m.name, who)
            self.seen[key] = self.seen.get(key, 0) + 1
            if self.seen[key] > 1 and not late and who in self.handoff:
                self.handoff.discard(who)  # its first stage loaded this one: the same boot
                self.seen[key] = 1
                return True
            last, self.banners[key] = self.banners.get(key), (n, _tidy(text), self.matched)
            if self.seen[key] > 1 and not late and last and _same_banner(last, self.banners[key]):
                self.seen[key] = 1  # the same banner again a few lines on (U-Boot 1.x before and after relocation)
                return True
            if self.seen[key] > 1 or late:
                again = "seen a second time" if self.seen[key] > 1 else "after the kernel started"
                self.reset = {
                    "kind": "reset",
                    "line": n,
                    "text": _tidy(text),
                    "message": f"unexpected reset: {m.label} {again}",
                }
                if self.fault is None:
                    self.fault = self.reset
                return False
        if late:
            return True
        if m.phase != "before_kernel":
            self.kernel_started = True
        if m.name not in self.found:
            self.found[m.name] = Found(m.name, host, pk, n, _tidy(text))
            if who:
                self.variants[m.name] = who
        return True

    def bootloader(self) -> dict | None:
        """The bootloader a log shows, by its first sign: its banner, else its prompt,
        its load command, its first stage, its last words before the kernel."""
        for source in ("banner", "prompt", "kernel_load", "first_stage", "starting"):
            if source == "prompt":
                if self.prompt is not None:
                    who, n, text = self.prompt
                    return {"name": who, "from": source, "line": n, "text": text}
                continue
            for m in self.rules.milestones:
                if m.source == source and m.name in self.variants:
                    f = self.found[m.name]
                    return {"name": self.variants[m.name], "from": source, "line": f.line, "text": f.text}
        return None

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


def read_log_stream(f: BinaryIO) -> tuple[str, Iterator[tuple[int, float | None, str]]]:
    """A log on a binary stream -> (format, iterator of (line_no, host_time_or_None, text)).

    The text is made plain first (parse/logtext.py: quoting, CRLF, escapes and line
    prefixes taken off); the format is told from the first lines: 'stamped'
    (grabserial/bringup "[abs delta] text"), 'printk' (dmesg-style), 'raw', or one of
    logtext's others (syslog, dmesg-T, ...).  ParseError when it is not text."""
    from bringup.parse.logtext import LogText

    text = LogText(f)
    return text.stamps, text.lines()


def read_log(data: bytes) -> tuple[str, list[tuple[int, float | None, str]]]:
    """Raw bytes of a log -> (format, [(line_no, host_time_or_None, text)])."""
    fmt, lines = read_log_stream(io.BytesIO(data))
    return fmt, list(lines)


def parse_bootlog(data: bytes | BinaryIO, rules: Rules, name: str = "input") -> dict:
    """The milestones, intervals, fault, memory and the rest of a log (parse/bootlog.py)."""
    from bringup.parse.bootlog import parse_bootlog as parse

    return parse(data, rules, name)
