"""The line prefixes a log may carry (`stamps`, listed in parse/logtext.py's
docstring): their patterns, which one a log's head has, and what a line's prefix
says (its host time, the text with a printk time kept in front).  Pure."""

from __future__ import annotations

import re
from datetime import datetime

from bringup.parse.errors import integer

LEVEL_RE = re.compile(r"^<(\d{1,3})>")
# "[    1.234567] ", and "[    1.234567][    T1] " with the caller (CONFIG_PRINTK_CALLER); bytes a
# console garbled as the kernel took the UART over (U+FFFD) before it are no text
PRINTK_RE = re.compile(r"^[\s\ufffd]*(?:<\d+>)?\[\s*(\d+\.\d+)\](?:\[\s*[TC]\d+\])?\s?")

MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
DAYS = "Mon|Tue|Wed|Thu|Fri|Sat|Sun"
# tokens between the time and "prog:" in a syslog line: a host, a facility.level, both
# (a host never begins with '[': "[    1.2] psci: ..." after a stamp is a printk line, no syslog host)
_SYSLOG_TAIL = r"\s+((?:[^\s\[]\S*\s+){0,2}?)([\w./@-]+?)(?:\[\d+\])?:(?:\s|$)(.*)$"

STAMPS: list[tuple[str, re.Pattern[str]]] = [
    ("stamped", re.compile(r"^\[\s*(\d+\.\d+)\s+(-?\d+\.\d+)\]\s?(.*)$")),
    ("kmsg", re.compile(r"^(\d{1,3}),(\d+),(\d+),[^;]{0,20};(.*)$")),
    (
        "dmesg-x",
        re.compile(
            r"^(?:kern|user|mail|daemon|auth|syslog|lpr|news|uucp|cron|authpriv|ftp|local[0-7])\s*:"
            r"\s*(?:emerg|alert|crit|err|warn|notice|info|debug)\s*:\s?(.*)$"
        ),
    ),
    ("journal-monotonic", re.compile(r"^\[\s*(\d+\.\d+)\]\s+(\S+)\s+kernel:\s?(.*)$")),
    (
        "syslog",
        re.compile(
            rf"^(?:(?:{DAYS}) )?({MONTHS}) +(\d{{1,2}}) (\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?: (\d{{4}}))?" + _SYSLOG_TAIL
        ),
    ),
    (
        "syslog-iso",
        re.compile(r"^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d+))?(?:Z|[+-]\d\d:?\d\d)?" + _SYSLOG_TAIL),
    ),
    ("dmesg-T", re.compile(rf"^\[((?:{DAYS}) (?:{MONTHS}) +\d{{1,2}} \d\d:\d\d:\d\d \d{{4}})\]\s?(.*)$")),
    (
        "host-clock",
        re.compile(r"^\[(?:(\d{4})-(\d\d)-(\d\d)[ T])?(\d\d):(\d\d):(\d\d)(?:[.,](\d+))?\]\s?(.*)$"),
    ),
    # moreutils' `ts` by default ("Mar 05 10:11:12 text"): syslog's date without a host and a
    # "prog:" (a syslog file matches both; the prefix most lines have wins, syslog on a tie)
    (
        "ts",
        re.compile(rf"^({MONTHS}) +(\d{{1,2}}) (\d\d):(\d\d):(\d\d)(?:\.(\d+))? (.*)$"),
    ),
    # a syslog daemon that logs the kernel's lines with the host and no "kernel:" (syslog-ng 1.x,
    # sysklogd -S): "Apr 27 01:49:23 polb01 Memory: ..."; told from `ts` by the one host word
    # before the text of (nearly) every line (which_stamps), the host taken off the text
    (
        "syslog-host",
        re.compile(rf"^({MONTHS}) +(\d{{1,2}}) (\d\d):(\d\d):(\d\d)(?:\.(\d+))? ([\w.-]+)(?: (.*))?$"),
    ),
    # without brackets only with a fraction of a second: "12:00:00 text" may be a log's own words
    (
        "host-clock-bare",
        re.compile(
            r"^(?:(\d{4})-(\d\d)-(\d\d)[ T])?(\d\d):(\d\d):(\d\d)[.,](\d{3,9})(?:Z|[+-]\d\d:?\d\d)?(?:\s{1,2}(.*))?$"
        ),
    ),
]
# Renode (renode.io): "[LEVEL] peripheral: text", the time of day before it in its log file, the
# monitor's "(machine) " prompt before the first line printed after it
RENODE_LEVELS = "NOISY|DEBUG|INFO|WARNING|ERROR"
STAMPS.insert(  # before host-clock-bare: a Renode log file's lines begin with the time of day
    [name for name, _ in STAMPS].index("host-clock"),
    (
        "renode",
        re.compile(
            rf"^(?:\([\w.-]+\) )?(?:(\d\d):(\d\d):(\d\d)\.(\d+) )?"
            rf"(?:\[(?:{RENODE_LEVELS})\] ([\w./:-]+?)|(sysbus\.[\w.]+)): ?(.*)$"
        ),
    ),
)
STAMPS.append(("sim-level", re.compile(r"^\[(?:info|warn|error|debug|success)\] ?(.*)$")))
# the UART analyzer's clocks after the peripheral's name: host (since the start) and virtual time,
# and Renode 1.x's "[+0.22s host +0s virt 0s virt from start]" (the host time since the line before)
RENODE_UART_RE = re.compile(r"^\[host:\s*([\d.]+)(ms|s|us|µs)? \(\+[^)]*\)\|virt:\s*[\d.]+\w* \(\+[^)]*\)\] ?(.*)$")
RENODE_OLD_RE = re.compile(
    r"^\[\+([\d.]+)(ms|s|us|µs) host \+[\d.]+\w* virt(?: [\d.]+\w*(?: virt from start)?)?\] ?(.*)$"
)
UNIT_S = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, None: 1.0}
STAMP_RE = dict(STAMPS)

DESCRIBE = {
    "stamped": "grabserial/bringup stamps '[abs delta]' (host times)",
    "kmsg": "/dev/kmsg records (printk times)",
    "dmesg-x": "dmesg -x facility:level prefixes",
    "journal-monotonic": "journalctl -k -o short-monotonic (printk times)",
    "syslog": "syslog / journalctl -k lines (host time of day, relative to the first line)",
    "syslog-iso": "syslog / journalctl with ISO dates (host time, relative to the first line)",
    "dmesg-T": "dmesg -T wall-clock stamps (host time in 1 s steps, relative to the first line)",
    "host-clock": "a terminal program's time-of-day stamps (host time, relative to the first line)",
    "host-clock-bare": "time-of-day stamps without brackets (host time, relative to the first line)",
    "ts": "moreutils ts stamps 'Mar 05 10:11:12' (host time in 1 s steps, relative to the first line)",
    "syslog-host": "syslog lines with a host and no 'kernel:' (host time in 1 s steps, relative to the first line)",
    "renode": "Renode's UART log '[INFO] uart0: [host: ...|virt: ...]' (host time, relative to the first line)",
    "sim-level": "a simulator's '[info] ' prefixes (taken off)",
    "printk": "printk times '[seconds]'",
    "raw": "a raw console log without times",
}


def which_stamps(head: list[str]) -> str:
    lines = [LEVEL_RE.sub("", s, count=1) for s in head if s.strip()]
    if not lines:
        return "raw"
    # the prefix most lines have (of those a quarter of them have at least; the first on a tie):
    # `dmesg --time-format iso` stamps every line, a syslog reading of them only those with "x: y"
    hits = [(sum(1 for s in lines if rx.match(s)), -i, name) for i, (name, rx) in enumerate(STAMPS)]
    best = max(hits)
    if best[0] >= max(1, len(lines) // 4):
        return "syslog-host" if best[2] == "ts" and _one_host(lines) else best[2]
    return "printk" if any(PRINTK_RE.match(s) for s in lines) else "raw"


def _one_host(lines: list[str]) -> bool:
    """`ts` lines whose first word is one host name on 90 % of them (at least 5): a syslog file
    whose kernel lines carry no "kernel:" (a console captured with `ts` begins with the log's
    own words, which differ from line to line)."""
    words = [m.group(7) for s in lines if (m := STAMP_RE["syslog-host"].match(s))]
    if len(words) < 5:
        return False
    top = max(set(words), key=words.count)
    return words.count(top) >= 0.9 * len(words) and not top.isdigit()


def stamp(kind: str, m: re.Match) -> tuple[float | None, str]:
    """(host seconds or None, text with a printk time in front when the stamp was one)."""
    g = m.groups()
    if kind == "stamped":
        return float(g[0]), g[2]
    if kind == "kmsg":
        return None, f"[{integer(g[2]) / 1e6:12.6f}] {g[3]}"
    if kind == "dmesg-x":
        return None, g[0]
    if kind == "journal-monotonic":
        return None, f"[{float(g[0]):12.6f}] {g[2]}"
    if kind in ("syslog", "syslog-iso"):
        if kind == "syslog":
            month = MONTHS.split("|").index(g[0]) + 1
            day, hh, mm, ss, frac, year = int(g[1]), int(g[2]), int(g[3]), int(g[4]), g[5], g[6]
            secs = seconds(int(year) if year else 2000, month, day, hh, mm, ss, frac)
        else:
            secs = seconds(int(g[0]), int(g[1]), int(g[2]), int(g[3]), int(g[4]), int(g[5]), g[6])
        # a kernel line: its text; another program's: "prog[pid]: text", never a kernel line
        return secs, g[-1] if g[-2] == "kernel" else m.string[m.start(len(g) - 1) :]
    if kind in ("ts", "syslog-host"):
        month = MONTHS.split("|").index(g[0]) + 1
        text = g[6] if kind == "ts" else g[7] or ""
        return seconds(2000, month, int(g[1]), int(g[2]), int(g[3]), int(g[4]), g[5]), text
    if kind == "sim-level":
        return None, g[0]
    if kind == "dmesg-T":
        try:
            t = datetime.strptime(" ".join(g[0].split()), "%a %b %d %H:%M:%S %Y")
        except ValueError:
            return None, g[1]
        return t.timestamp(), g[1]
    # host-clock, host-clock-bare
    y, mo, d = (int(g[0]), int(g[1]), int(g[2])) if g[0] else (2000, 1, 1)
    return seconds(y, mo, d, int(g[3]), int(g[4]), int(g[5]), g[6]), g[7] or ""


def seconds(year: int, month: int, day: int, hh: int, mm: int, ss: int, frac: str | None) -> float | None:
    try:
        t = datetime(year, month, day, hh, mm, min(ss, 59)).timestamp()
    except ValueError:
        return None
    return t + (float(f"0.{frac}") if frac else 0.0)
