"""initcall_debug lines of every era, as values.  Pure, streaming.

With `initcall_debug` on its command line a kernel prints a line before and after
each initcall (init/main.c, do_one_initcall and its helpers).  The wording changed:

  2.6.0 - 2.6.25   "Calling initcall 0xc0123456: ipc_init+0x0/0x28()"
                   "initcall 0xc0123456: ipc_init+0x0/0x28() returned 0."         (no time)
                   "initcall at 0xc0123456: ipc_init+0x0/0x28(): returned with error code -19"
  2.6.25           also "initcall 0xc0123456 ran for 3 msecs: ipc_init+0x0/0x28()"
                   (without CONFIG_KALLSYMS the name is left out: "... ran for 3 msecs: ")
  -mm, vendor      "initcall 0xc0123456: ipc_init+0x0/0x28() returned 0 after 3 msecs" (an
  2.6.2x trees     address and a name, with the time)
  2.6.26 - 2.6.27  "calling  ipc_init+0x0/0x28"
                   "initcall ipc_init+0x0/0x28 returned 0 after 3 msecs"
  2.6.28 - today   "calling  ipc_init+0x0/0x28 @ 1"                                 (@ pid)
                   "initcall ipc_init+0x0/0x28 returned 0 after 1872 usecs"
                   a module's: "initcall azx_driver_init+0x0/0xfca [snd_hda_intel] returned 0 after 4811 usecs"
  any era          an initcall that left preemption or interrupts wrong, printed with or without
                   initcall_debug: "error in initcall at 0xc038da00: returned with preemption
                   imbalance" (2.5-2.6.1x), "initcall at 0x...: fn(): returned with preemption
                   imbalance", since 2.6.28 "initcall fn+0x0/0x10 returned with disabled
                   interrupts" (a WARNING's first line; counted as `error`, listed in `problems`)

Since 2.6.28 the lines are KERN_DEBUG: the console shows them only with `loglevel=8`
(or `debug`, `ignore_loglevel`).  A kernel built without CONFIG_KALLSYMS prints the
function as an address (`calling  0xc0a0b1c4 @ 1`); `resolve()` names it, and gives
each initcall its level (early, pure, core, postcore, arch, subsys, fs, rootfs,
device, late), from the kernel's System.map: the log itself does not say the level.

`InitcallScan` is fed a log's lines (n, host time, text with its printk time in
front), the same lines the milestone scanner is fed; `parse_initcalls` reads a file
through parse/logtext.py (mail quotes, CRLF, escapes, syslog and other prefixes taken
off) and also joins an initcall line a mailer wrapped in two.

Per initcall: `fn` (the function, or its address), `module` (`[mod]` when printed),
`symbol` as printed, `address` when printed, `us` (the duration the kernel printed, in
microseconds; None when the era printed none) and `printed` (as printed: "3 msecs"), `rc`, `start_s` (printk time of the
`calling` line, else the end minus the duration), `end_s`, `host_start_s` and
`host_end_s` (a capture's host times, when it has them), `pid`, `line` (of the result),
`call_line`, and `level` and `object` (None until resolved).
"""

from __future__ import annotations

import io
import re
from typing import BinaryIO

from bringup.parse.errors import ParseError, checked, integer, numbers
from bringup.parse.logtext import LogText

PRINTK_RE = re.compile(r"^[\s\ufffd]*(?:<\d+>)?\[\s*(\d+\.\d+)\](?:\[\s*[TC]\d+\])?\s?")
# a printk time blanked by whoever quoted the log ("[ ] calling  kmemleak_late_init+0x0/0xa0 @ 1"): no time
BLANKED_RE = re.compile(r"^[\s\ufffd]*(?:<\d+>)?\[\s*\](?:\[\s*[TC]\d+\])?\s?")
_SYM = r"(?P<sym>0x[0-9a-fA-F]+|[A-Za-z_.$][\w.$]*(?:\+0x[0-9a-fA-F]+/0x[0-9a-fA-F]+)?)(?:\(\))?"
_MOD = r"(?:\s+\[(?P<mod>[\w.-]+)\])?"
# text after a line's last field (a capture's noise, a message glued on) is allowed, except
# after a bare word: "calling foo ..." is prose, "calling  foo+0x0/0x7d ..." is not
CALL_NEW = re.compile(rf"^calling\s+{_SYM}{_MOD}(?:\s+@=?\s*(?P<pid>\d+)?)?(?P<rest>\s.*)?$")
CALL_OLD = re.compile(rf"^Calling initcall (?P<addr>0x[0-9a-fA-F]+)(?::\s+{_SYM})?(?:\s.*)?$")
RET_NEW = re.compile(
    rf"^initcall\s+{_SYM}{_MOD}\s+returned\s+(?P<rc>-?\d+)\s+after\s+(?P<n>\d+)\s+(?P<unit>usecs|msecs)\b"
)
RET_OLD = re.compile(rf"^initcall (?P<addr>0x[0-9a-fA-F]+)(?::\s+{_SYM})?\s+returned (?P<rc>-?\d+)\.(?:\s.*)?$")
# an address and a name, with the time (-mm and vendor 2.6.2x trees): keyed by the address
RET_ADDR = re.compile(
    rf"^initcall (?P<addr>0x[0-9a-fA-F]+):\s+{_SYM}{_MOD}\s+returned\s+(?P<rc>-?\d+)\s+after\s+(?P<n>\d+)\s+"
    r"(?P<unit>usecs|msecs)\b"
)
# without CONFIG_KALLSYMS the name after "msecs: " is left out
RAN_FOR = re.compile(rf"^initcall (?P<addr>0x[0-9a-fA-F]+) ran for (?P<n>\d+) msecs(?::(?:\s+{_SYM})?)?(?:\s.*)?$")
# an initcall that failed (2.6.0-2.6.27: "initcall at 0x...: fn(): returned with error code -19") or
# left preemption or interrupts wrong (every era, initcall_debug or not: 2.5-2.6.1x "error in initcall
# at 0xc038da00: returned with preemption imbalance", since 2.6.28 "initcall fn+0x0/0x10 returned with ...")
_SYM2 = _SYM.replace("(?P<sym>", "(?P<sym2>")  # the same, a second group of one pattern
ERR_OLD = re.compile(
    rf"^(?:error in )?initcall (?:at (?P<addr>0x[0-9a-fA-F]+)(?::\s+{_SYM})?:?|{_SYM2}{_MOD}):? returned with "
    r"(?:error code (?P<rc>-?\d+)|(?P<why>(?:(?:preemption imbalance|disabled interrupts) ?){1,2}))"
)
# the start of an initcall line that a mailer cut in two: joined with the next line
UNFINISHED = re.compile(r"^(?:initcall\s+\S+(?:\s+\S+){0,4}|calling\s+\S+(?:\s+\[[\w.-]+\])?\s+@=?)\s*$")

FORMATS = {
    "old": "2.6.0-2.6.25: 'Calling initcall 0x...: fn()' / 'initcall 0x...: fn() returned N.' (no times before 2.6.25)",
    "ran_for": "2.6.25: 'initcall 0x... ran for N msecs: fn()'",
    "addr_after": "-mm and vendor 2.6.2x: 'initcall 0x...: fn() returned N after N msecs'",
    "msecs": "2.6.26-2.6.27: 'calling  fn' / 'initcall fn returned N after N msecs'",
    "usecs": "2.6.28 and later: 'calling  fn @ pid' / 'initcall fn returned N after N usecs'",
}
MAX_INITCALLS = 20_000
MAX_OPEN = 10_000
MAX_PROBLEMS = 50

LEVELS = ("early", "pure", "core", "postcore", "arch", "subsys", "fs", "rootfs", "device", "late")
_LEVEL_OF = dict(zip(("early", "0", "1", "2", "3", "4", "5", "rootfs", "6", "7"), LEVELS, strict=True))
# __initcall_<fn><level>, and since 5.13 __initcall__kmod_<object>__<id>_<line>_<fn><level>
INITCALL_SYM = re.compile(r"^__initcall_(?:_kmod_(?P<obj>\w+?)__\d+_\d+_)?(?P<fn>\w+?)(?P<level>early|rootfs|[0-7])s?$")
MAP_LINE = re.compile(r"^([0-9a-fA-F]{4,16})\s+([A-Za-z])\s+(\S+)")


def _fn(sym: str) -> str:
    """The function of a symbol as printed: without its offset, and without the dot of
    a 64-bit PowerPC (ELFv1) entry point (`.tcp_congestion_default+0x0/0x18`)."""
    fn = sym.split("+", 1)[0]
    return fn[1:] if fn.startswith(".") and len(fn) > 1 else fn


class InitcallScan:
    """The initcalls of one log, fed one line at a time (the text with its printk time)."""

    def __init__(self) -> None:
        self.entries: list[dict] = []
        self.dropped = 0  # entries past MAX_INITCALLS (counted in total_us, not kept)
        self.total_us = 0
        self.formats: dict[str, int] = {}
        self.counts = {"calling": 0, "returned": 0, "ran_for": 0, "error": 0}
        self.problems: list[dict] = []  # "returned with preemption imbalance / disabled interrupts"
        self._open: dict[str, dict] = {}  # a 'calling' line waiting for its result, by symbol
        self._pending: dict[str, dict] = {}  # 2.6.2x: 'returned N.' waiting for 'ran for'
        self._held: tuple[int, float | None, str, float | None] | None = None  # a wrapped line's first half

    def feed(self, n: int, host: float | None, text: str) -> None:
        m = PRINTK_RE.match(text)
        pk = float(m.group(1)) if m else None
        blank = None if m else BLANKED_RE.match(text)
        body = text[m.end() :] if m else text[blank.end() :] if blank else text.lstrip()
        if self._held is not None:
            hn, hhost, hbody, hpk = self._held
            self._held = None
            # the second half of a wrapped line has no printk time
            if m is None and body.strip() and self._line(hn, hhost, hpk, f"{hbody.rstrip()} {body.strip()}"):
                return
        if "alling" not in body and "initcall" not in body:
            return
        if not self._line(n, host, pk, body) and UNFINISHED.match(body):
            self._held = (n, host, body, pk)

    def _line(self, n: int, host: float | None, pk: float | None, body: str) -> bool:
        c = CALL_NEW.match(body)
        if c and c.group("pid") is None and "+0x" not in c.group("sym") and not c.group("sym").startswith("0x"):
            c = None  # "calling foo to ...", a program's "calling upnp_main": the kernel prints an offset or a pid
        if c:
            self._call(c.group("sym"), n, host, pk, c.group("pid"))
            return True
        c = CALL_OLD.match(body)
        if c:
            # this era ran initcalls one after another (none in parallel before 2.6.28), and
            # 2.6.12 printed no result unless one failed: a 'Calling' line ends the one before
            for k in [k for k, v in self._open.items() if v.get("old")]:
                self._open.pop(k)
            self._call(c.group("addr"), n, host, pk, None, name=c.group("sym"), old=True)
            self._format("old")
            return True
        return self._result(n, host, pk, body)

    def _result(self, n: int, host: float | None, pk: float | None, body: str) -> bool:
        """A line that ends an initcall (of any era), or says it failed."""
        r = RET_NEW.match(body) or RET_ADDR.match(body)
        if r:  # with its time: by name (2.6.26-), or by address with the name (-mm, vendor 2.6.2x)
            by_addr = r.re is RET_ADDR
            us = integer(r.group("n")) * (1000 if r.group("unit") == "msecs" else 1)
            self._seen("returned", "addr_after" if by_addr else "usecs" if r.group("unit") == "usecs" else "msecs")
            key, name = (r.group("addr"), r.group("sym")) if by_addr else (r.group("sym"), None)
            printed = f"{r.group('n')} {r.group('unit')}"
            self._done(key, r.group("mod"), name, us, integer(r.group("rc")), n, host, pk, printed)
            return True
        r = RET_OLD.match(body)
        if r:
            self._seen("returned", "old")
            addr = r.group("addr")
            self._pending[addr] = {"name": r.group("sym"), "rc": integer(r.group("rc")), "n": n, "host": host, "pk": pk}
            if len(self._pending) > MAX_OPEN:
                self._flush_one(next(iter(self._pending)))
            return True
        r = RAN_FOR.match(body)
        if r:
            self._seen("ran_for", "ran_for")
            addr = r.group("addr")
            p = self._pending.pop(addr, None)
            name = r.group("sym") or (p or {}).get("name")
            ms = r.group("n")
            self._done(addr, None, name, integer(ms) * 1000, p["rc"] if p else None, n, host, pk, f"{ms} msecs")
            return True
        r = ERR_OLD.match(body)
        if r:
            self._seen("error", "old" if r.group("addr") else "usecs")  # an address: 2.6.0-2.6.27; a symbol: 2.6.28-
            if r.group("why"):
                self.problems.append(
                    {
                        "line": n,
                        "symbol": r.group("sym") or r.group("sym2") or r.group("addr"),
                        "why": r.group("why").strip(),
                    }
                )
                del self.problems[:-MAX_PROBLEMS]
            p = self._pending.get(r.group("addr") or "")
            if p is not None and r.group("rc") is not None:
                p["rc"] = integer(r.group("rc"))
            return True
        return False

    def _format(self, kind: str) -> None:
        self.formats[kind] = self.formats.get(kind, 0) + 1

    def _seen(self, counter: str, kind: str) -> None:
        """A line of this counter's kind, in this wording (FORMATS)."""
        self.counts[counter] += 1
        self._format(kind)

    def _call(
        self, key: str, n: int, host: float | None, pk: float | None, pid: str | None, name=None, old: bool = False
    ) -> None:
        self.counts["calling"] += 1
        if len(self._open) >= MAX_OPEN:
            self._open.pop(next(iter(self._open)))
        self._open[key] = {
            "line": n,
            "host": host,
            "pk": pk,
            "pid": integer(pid) if pid else None,
            "name": name,
            "old": old,
        }

    def _done(self, key, mod, name, us, rc, n, host, pk, printed=None) -> None:
        call = self._open.pop(key, None) or {}
        sym = name or call.get("name") or key
        addr = key if key.startswith("0x") else None
        if sym.startswith("0x") and addr is None:
            addr = sym
        start = call.get("pk")
        if start is None and pk is not None and us is not None:
            start = round(max(0.0, pk - us / 1e6), 6)
        entry = {
            "fn": _fn(sym),
            "module": mod,
            "symbol": sym,
            "address": addr,
            "us": us,
            "printed": printed,
            "rc": rc,
            "start_s": start,
            "end_s": pk,
            "host_start_s": call.get("host"),
            "host_end_s": host,
            "pid": call.get("pid"),
            "line": n,
            "call_line": call.get("line"),
            "level": None,
            "object": None,
        }
        self.total_us += us or 0
        if len(self.entries) < MAX_INITCALLS:
            self.entries.append(entry)
        else:
            self.dropped += 1

    def _flush_one(self, addr: str) -> None:
        p = self._pending.pop(addr)
        self._done(addr, None, p["name"], None, p["rc"], p["n"], p["host"], p["pk"])

    def finish(self) -> None:
        """At the end of the log: results that never got a time (2.6.0-2.6.24) become entries."""
        if self._held is not None:
            hn, hhost, hbody, hpk = self._held
            self._held = None
            self._line(hn, hhost, hpk, hbody)
        for addr in list(self._pending):
            self._flush_one(addr)

    def result(self) -> dict:
        self.finish()
        fmt = max(self.formats, key=lambda k: self.formats[k]) if self.formats else None
        for timed in ("addr_after", "ran_for"):  # the wording with times, whatever 'Calling' lines say
            if self.formats.get(timed):
                fmt = timed
        unfinished = [
            {"symbol": k, "fn": _fn(v["name"] or k), "line": v["line"], "start_s": v["pk"]}
            for k, v in self._open.items()
        ]
        return {
            "format": fmt,
            "format_words": FORMATS.get(fmt or "", "no initcall_debug lines"),
            **self.counts,
            "count": len(self.entries) + self.dropped,
            "timed": sum(1 for e in self.entries if e["us"] is not None),
            "total_us": self.total_us,
            "dropped": self.dropped,
            "unfinished": unfinished[:50],
            "problems": self.problems,
            "initcalls": self.entries,
        }


def system_map(text: str) -> tuple[dict[int, str], dict[str, str], dict[str, str]]:
    """A System.map (or /proc/kallsyms) as (address -> function, function -> level,
    function -> object file) for resolve().  Levels come from the initcall table's
    symbols: `__initcall_ipc_init6`, `__initcall__kmod_shm__349_154_ipc_ns_init0`."""
    names: dict[int, str] = {}
    levels: dict[str, str] = {}
    objects: dict[str, str] = {}
    for line in text.splitlines():
        m = MAP_LINE.match(line)
        if not m:
            continue
        addr, kind, name = m.groups()
        if kind in "tTwW" and not name.startswith("$"):
            names.setdefault(int(addr, 16), name)
        elif name.startswith("__initcall_") and not name.endswith(("_start", "_end")):
            s = INITCALL_SYM.match(name)
            if s:
                levels.setdefault(s.group("fn"), _LEVEL_OF[s.group("level")])
                if s.group("obj"):
                    objects.setdefault(s.group("fn"), s.group("obj"))
    return names, levels, objects


def resolve(entries: list[dict], smap: tuple[dict[int, str], dict[str, str], dict[str, str]]) -> int:
    """Name the initcalls printed as addresses and give each its level (and, for
    5.13+ maps, its object file as `module` when the log named none), in place;
    returns how many stayed unnamed."""
    names, levels, objects = smap
    left = 0
    for e in entries:
        if e["fn"].startswith("0x"):
            a = int(e["fn"], 16)
            name = names.get(a, names.get(a & ~1))  # a Thumb-2 function's address has bit 0 set
            if name is None:
                left += 1
                continue
            e["fn"] = name
        e["level"] = levels.get(e["fn"], e.get("level"))
        if e.get("module") is None and e["fn"] in objects:
            e["object"] = objects[e["fn"]]
    return left


def parse_initcalls(data: bytes | BinaryIO, name: str = "input") -> dict:
    """The initcalls of a log (bytes or a binary stream, read once).  ParseError (one
    line naming the input) when it is not text or has no initcall_debug line."""
    text = LogText(io.BytesIO(data) if isinstance(data, bytes) else data, name, what="a log")
    scan = InitcallScan()
    lines = 0
    for n, host, line in text.lines():
        with numbers(name, line, n):
            scan.feed(n, host, line)
        lines = n
    res = scan.result()
    if not res["count"] and not res["calling"] and not res["error"]:
        raise ParseError(
            f"{name}: no initcall_debug lines in its {lines} lines (boot with 'initcall_debug', "
            "and 'loglevel=8' on 2.6.28 and later kernels)"
        )
    res["lines"] = lines
    res["text"] = text.info()
    return checked(res, name)
