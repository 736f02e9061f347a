"""Deferred probes in a boot log, as values.  Pure, streaming.

A driver whose probe needs something not there yet (a clock, a regulator, a GPIO)
returns -EPROBE_DEFER (-517); the driver core tries it again after other probes,
which costs boot time.  What a kernel prints about it (drivers/base/dd.c):

  3.4 - today   "<bus> <dev>: Driver <drv> requests probe deferral"       (dev_dbg: dyndbg or DEBUG)
  4.x - today   "probe of <dev> returned -517 after <n> usecs"            (initcall_debug, KERN_DEBUG;
                 5.x+ may put "bus: '<bus>': " in front)
  5.0 - today   "<bus> <dev>: deferred probe pending"                     (dev_info, when the deferred
                 probe timeout ends or at late_initcall with deferred_probe_timeout)
  6.x           "<bus> <dev>: deferred probe pending: <reason>"           (the reason dev_err_probe
                 recorded, "(reason unknown)" when none)
  5.x - today   "<bus> <dev>: error -EPROBE_DEFER: <reason>"              (dev_err_probe, dev_dbg)
  5.x           "<bus> <dev>: deferred probe timeout, ignoring dependency" (the timeout gave up)

`DeferredScan` is fed a log's lines (n, host time, text with its printk time in front)
like the other scanners; `parse_deferred` reads a file through parse/logtext.py.
Per event: `device`, `bus` (None when the line names none), `driver` (None unless the
line names it), `kind` (requested, returned, pending, reason, timeout), `reason` (None
unless printed), `us` (the failed probe's duration, for `returned`), `printk_s`
(None without printk times), `line`.
"""

from __future__ import annotations

import io
import re
from typing import BinaryIO

from bringup.parse.errors import integer
from bringup.parse.logtext import LogText

# a printk time, after grep -n's line number when a log was pasted from `dmesg | grep -n`
# (and after a console's garbage, U+FFFD, as parse/milestones.py takes it)
PRINTK_RE = re.compile(
    r"^(?:\d+[:-](?=[\s\ufffd]*(?:<\d+>)?\[))?[\s\ufffd]*(?:<\d+>)?\[\s*(\d+\.\d+)\](?:\[\s*[TC]\d+\])?\s?"
)
# "<bus> <device>: " as dev_printk prints it; a device name has no spaces
_DEV = r"(?:(?P<bus>[\w.-]+) )?(?P<dev>[^\s:][^\s]*?):\s+"
PATTERNS = [
    ("requested", re.compile(rf"^{_DEV}Driver (?P<drv>\S+) requests probe deferral\b")),
    (
        "returned",
        re.compile(
            r"^(?:bus: '(?P<bus>[\w.-]+)': (?:\S+: )?)?probe of (?P<dev>\S+) returned -517 after (?P<us>\d+) usecs\b"
        ),
    ),
    ("pending", re.compile(rf"^{_DEV}deferred probe pending(?::\s*(?P<reason>.*\S))?\s*$")),
    ("reason", re.compile(rf"^{_DEV}error -EPROBE_DEFER:\s*(?P<reason>.*\S)\s*$")),
    ("timeout", re.compile(rf"^{_DEV}deferred probe timeout, ignoring dependency\b")),
]
KINDS = [k for k, _ in PATTERNS]


class DeferredScan:
    def __init__(self) -> None:
        self.events: list[dict] = []

    def feed(self, n: int, host: float | None, text: str) -> None:
        if "defer" not in text and "-517" not in text and "DEFER" not in text:
            return
        m = PRINTK_RE.match(text)
        printk = float(m.group(1)) if m else None
        body = text[m.end() :] if m else text.lstrip()
        for kind, rx in PATTERNS:
            g = rx.match(body)
            if g is None:
                continue
            d = g.groupdict()
            reason = d.get("reason")
            self.events.append(
                {
                    "device": d["dev"],
                    "bus": d.get("bus"),
                    "driver": d.get("drv"),
                    "kind": kind,
                    "reason": None if reason in (None, "(reason unknown)") else reason,
                    "us": integer(d["us"]) if d.get("us") else None,
                    "printk_s": printk,
                    "line": n,
                }
            )
            return

    def result(self) -> list[dict]:
        return self.events


def summarize(events: list[dict]) -> list[dict]:
    """Per device (in order of first mention): its bus, driver and reason where any
    line gave them, how many deferral lines it had, and of which kinds."""
    out: dict[str, dict] = {}
    for e in events:
        d = out.setdefault(
            e["device"], {"device": e["device"], "bus": None, "driver": None, "reason": None, "events": 0, "kinds": []}
        )
        for f in ("bus", "driver", "reason"):
            d[f] = d[f] or e[f]
        d["events"] += 1
        if e["kind"] not in d["kinds"]:
            d["kinds"].append(e["kind"])
    return list(out.values())


def parse_deferred(data: bytes | BinaryIO, name: str = "input") -> dict:
    """The deferred-probe lines of a log (bytes or a binary stream, read once):
    {events, devices, lines}.  A log without any is not an error: most boots defer
    nothing.  ParseError (one line naming the input) when it is not text."""
    text = LogText(io.BytesIO(data) if isinstance(data, bytes) else data, name, what="a log")
    scan = DeferredScan()
    lines = 0
    for n, host, line in text.lines():
        scan.feed(n, host, line)
        lines = n
    ev = scan.result()
    return {"events": ev, "devices": summarize(ev), "lines": lines}
