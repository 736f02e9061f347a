"""One model of a boot log, for every era: what `bringup parse bootlog` reports.

`BootLog` is fed a log's lines in order (the same lines, with the same rules, as
the milestone scanner of a live boot) and keeps, in bounded memory:

  - the kernel release of the `Linux version` line (or, without one, of an Oops
    or WARNING header: `Not tainted 2.6.26-rc9 #89`, or of U-Boot's `Image Name:
    Linux-3.0.8`, or of GRUB's `Loading Linux 5.5.0-2-arm64 ...`, or of the
    getty's /etc/issue: `Kernel 3.9.2-200.fc18.x86_64 on an x86_64 (console)`);
  - the bootloader (banner, prompt or load command; configs/milestones.toml);
  - the `Memory:` line(s) as kB fields (parse/meminfo.py: every wording since 2.2)
    and the sizes of the `Freeing ... memory` lines;
  - the milestones with their host and printk times, and the first fault quoted
    with its line number (faults after it are listed too, a few; the log is read
    on after a fault, up to an unexpected reset);
  - WARNINGs (not faults) and initcall_debug timings.

`parse_bootlog` reads a file or bytes through parse/logtext.py (quoting, CRLF,
escapes, syslog and other prefixes taken off; the result says which format was
assumed) and raises ParseError for what is not a boot log at all.
"""

from __future__ import annotations

import heapq
import io
import re
from typing import BinaryIO

from bringup.parse import meminfo
from bringup.parse.errors import ParseError, checked, numbers
from bringup.parse.initcalls import InitcallScan
from bringup.parse.logtext import DESCRIBE, LogText
from bringup.parse.milestones import PRINTK_RE, Rules, Scan

VERSION_RE = re.compile(r"Linux version (\d+\.\d+[^\s(]*)")
IMAGE_RE = re.compile(r"^\s*Image Name:\s+Linux-(\d+\.\d+\S*)")  # U-Boot's header of a uImage
ISSUE_RE = re.compile(r"^\s*Kernel (\d+\.\d+\S*) on an? \S+")  # /etc/issue's "Kernel \r on an \m" (agetty)
GRUB_LOADING_RE = re.compile(r"^\s*Loading Linux (\d+\.\d+\S*) \.\.\.")  # GRUB 2's echo (the vmlinuz-<release> loaded)
# the release before the build number, or at the end of a line a mailer cut before "#77"
# "Not tainted 2.6.26-rc9 #89" (an Oops header); a register dump's "Not tainted  (2.6.12)"
# (i386 show_regs) or "TRAP: 0300   Tainted: G      D  (2.6.21-rc7-mm1)" (PowerPC)
TAINT_RE = re.compile(
    r"(?:Not tainted|Tainted: [A-Z ]{1,40}?) +(?:\((\d+\.\d+[^\s()]*)(?: #\d+)?\)|(\d+\.\d+[^\s]*)(?: #\d+|\s*$))"
)
WARNING_RE = re.compile(r"^WARNING: ")
# lines only a kernel prints (a dmesg excerpt without its Linux version line, printk times or
# milestones is still a boot log when several of them are there)
KERNEL_LINE_RE = re.compile(
    r"^\s*(?:ide\d+ at 0x|hd[a-z]: |sd[a-z]: |NET: Registered protocol family|TCP: Hash tables configured|"
    r"IP: routing cache|md: |serio: |input: |EISA: |PCI: |ACPI: |RAMDISK|loop: loaded|Floppy drive|"
    r"Serial driver|Real Time Clock Driver|VFS: |Calibrating delay|Dentry cache hash|Inode.cache hash|"
    r"Console: colour|Uniform Multi-Platform E-IDE|scsi\d* ?: |usbcore: |Freeing |"
    # and init's: systemd's status lines (a container's console has no kernel line)
    r"\[\s*OK\s*\] (?:Reached target|Started|Listening on|Mounted|Created slice|Finished) )"
)
KERNEL_LINES_NEEDED = 3

MAX_FREEING = 32
MAX_LATER_FAULTS = 10
MAX_WARNINGS = 10
MAX_INITCALLS = 5000
SLOWEST = 10


# the trailer 3.x and later kernels print after a panic's stack dump: the same panic
END_PANIC_RE = re.compile(r"---\[ end Kernel panic\b")


class BootLog:
    """Everything `parse bootlog` reports, fed one line at a time."""

    def __init__(self, rules: Rules):
        self.rules = rules
        self.scan = Scan(rules)
        self.memory = meminfo.MemoryLines()
        self.version: dict | None = None
        self.taint_version: dict | None = None
        self._taint_cut: tuple[int, str] | None = None  # a header line cut before its release
        self.image_version: dict | None = None
        self.freeing: list[dict] = []
        self.later_faults: list[dict] = []
        self.warnings: list[dict] = []
        self.warning_count = 0
        self.initcalls = InitcallScan()  # parse/initcalls.py: every era's wording
        self.lines = 0
        self.printk_lines = 0
        self.kernel_lines = 0

    def feed(self, n: int, host: float | None, text: str) -> None:
        """One line.  After the first fault the log is still read (a boot often goes on
        after a BUG or an Oops; faults after the first are listed in later_faults);
        after an unexpected reset only faults are: the lines are another boot's."""
        self.lines = n
        if self.scan.reset is not None:
            self._later_fault(n, text)
            return
        had_fault = self.scan.fault is not None
        self.scan.feed(n, host, text)
        if self.scan.reset is not None:
            if had_fault and len(self.later_faults) < MAX_LATER_FAULTS:
                self.later_faults.append(self.scan.reset)
            return  # the line begins another boot
        if had_fault:
            self._later_fault(n, text)
        m = PRINTK_RE.match(text)
        self.printk_lines += m is not None
        self._values(n, text[m.end() :] if m else text, text)

    def _values(self, n: int, body: str, text: str) -> None:
        """What a line (its body: the text after the printk time) tells besides milestones."""
        self.memory.feed(n, body)
        if self.kernel_lines < KERNEL_LINES_NEEDED and KERNEL_LINE_RE.match(body):
            self.kernel_lines += 1
        if (self.version is None or self.version["from"] == "prom_init") and "Linux version" in body:
            self._version(n, body)
        if self.image_version is None and ("Image Name:" in body or "Loading Linux" in body or "Kernel " in body):
            self._image_version(n, body)
        if self.taint_version is None and ("ainted" in body or self._taint_cut is not None):
            self._taint(n, body, body is text)
        if "Freeing" in body and len(self.freeing) < MAX_FREEING:
            f = meminfo.freeing_line(body)
            if f:
                self.freeing.append({**f, "line": n, "text": body.strip()})
        if body.startswith("WARNING: "):
            self.warning_count += 1
            if len(self.warnings) < MAX_WARNINGS:
                self.warnings.append({"line": n, "text": text})
        self.initcalls.feed(n, None, text)

    def _taint(self, n: int, body: str, no_printk: bool) -> None:
        """The release of an Oops or WARNING header ("... Not tainted 2.6.26-rc9 #89"), also
        of one a mailer cut inside its taint flags (the rest on the next line, no printk time)."""
        cut, self._taint_cut = self._taint_cut, None
        if cut is not None and no_printk:
            t = TAINT_RE.search(f"{cut[1]} {body.strip()}")
            if t:
                self.taint_version = {
                    "release": t.group(1) or t.group(2),
                    "line": cut[0],
                    "from": "Oops/WARNING header",
                }
                return
        t = TAINT_RE.search(body)
        if t:
            self.taint_version = {"release": t.group(1) or t.group(2), "line": n, "from": "Oops/WARNING header"}
        elif "ainted" in body:
            self._taint_cut = (n, body)

    def _image_version(self, n: int, body: str) -> None:
        """The release of the image a bootloader loads: U-Boot's uImage name, GRUB's message."""
        for rx, source in (
            (IMAGE_RE, "U-Boot image name"),
            (GRUB_LOADING_RE, "GRUB's Loading Linux"),
            (ISSUE_RE, "/etc/issue"),
        ):
            i = rx.match(body)
            if i:
                self.image_version = {"release": i.group(1), "line": n, "from": source}
                return

    def _version(self, n: int, body: str) -> None:
        """The release of a `Linux version` line.  PowerPC prom_init's "Preparing to boot
        Linux version ..." comes first; the kernel's own line, when the log reaches it, wins."""
        v = VERSION_RE.search(body)
        if v:
            own = "Preparing to boot Linux version" not in body
            if self.version is None or own:
                self.version = {"release": v.group(1), "line": n, "from": "Linux version" if own else "prom_init"}

    def _later_fault(self, n: int, text: str) -> None:
        if len(self.later_faults) >= MAX_LATER_FAULTS:
            return
        m = PRINTK_RE.match(text)
        body = text[m.end() :] if m else text
        if END_PANIC_RE.search(body) and self._panicked():
            return  # "---[ end Kernel panic - not syncing: <why> ]---" closes the panic already listed
        for kind, rx in self.rules.faults.items():
            if rx.search(text) or rx.search(body):
                self.later_faults.append({"kind": kind, "line": n, "text": text})
                return

    def _panicked(self) -> bool:
        first = self.scan.fault
        return (first is not None and first.get("kind") == "panic") or any(
            f.get("kind") == "panic" for f in self.later_faults
        )

    def _initcall_result(self) -> dict | None:
        """initcall_debug timings (parse/initcalls.py), in bootlog's words: the line counts,
        and every call with a time as {line, fn (as printed), us, printed, rc}."""
        ic = self.initcalls.result()
        counts = {k: ic[k] for k in ("calling", "returned", "ran_for")}
        if not sum(counts.values()):
            return None
        entries = [
            {"line": e["line"], "fn": e["symbol"], "us": e["us"], "printed": e["printed"], "rc": e["rc"]}
            for e in ic["initcalls"]
            if e["us"] is not None
        ][:MAX_INITCALLS]
        slowest = heapq.nlargest(SLOWEST, entries, key=lambda e: (e["us"], -e["line"]))
        return {**counts, "timed": len(entries), "total_us": ic["total_us"], "slowest": slowest, "entries": entries}

    def recognised(self) -> bool:
        """Whether anything of a boot was seen (else the input is not a boot log)."""
        s = self.scan
        return bool(
            s.found
            or s.fault
            or s.prompt
            or self.printk_lines
            or self.kernel_lines >= KERNEL_LINES_NEEDED
            or self.version
            or self.memory.avail
            or self.memory.total
            or self.freeing
            or self.initcalls.counts["calling"]
            or self.initcalls.counts["returned"]
        )

    def result(self) -> dict:
        res = self.scan.result()
        version = self.version or self.taint_version or self.image_version
        init = next((f for f in self.freeing if f["kind"] == "init"), None)
        res.update(
            kernel_version=version["release"] if version else None,
            kernel_version_line=version["line"] if version else None,
            kernel_version_from=version["from"] if version else None,
            bootloader=self.scan.bootloader(),
            memory=self.memory.result(),
            freeing=self.freeing,
            init_freed_kb=init["kb"] if init else None,
            later_faults=self.later_faults,
            warnings={"count": self.warning_count, "first": self.warnings},
            initcalls=self._initcall_result(),
            lines=self.lines,
            complete=self.scan.done() or any(m.prompt and m.name in self.scan.found for m in self.rules.milestones),
        )
        return res


def parse_bootlog(data: bytes | BinaryIO, rules: Rules, name: str = "input") -> dict:
    """Everything a boot log says (bytes or a binary stream, read once, in bounded
    memory).  ParseError (one line naming the input) when it is not a boot log."""
    text = LogText(io.BytesIO(data) if isinstance(data, bytes) else data, name)
    log = BootLog(rules)
    for n, host, line in text.lines():
        with numbers(name, line, n):
            log.feed(n, host, line)
    log.lines = max(log.lines, text.physical_lines)  # a last line joined to the one before still counts
    if not log.recognised():
        raise ParseError(f"{name}: not a boot log (no kernel, bootloader or init line in its {log.lines} lines)")
    mem = log.memory.avail or log.memory._pending  # the Memory: line's numbers are read at the end
    with numbers(name, mem[2] if mem else "", mem[0] if mem else 0):
        res = log.result()
    info = text.info()
    if log.printk_lines and info["stamps"] in ("raw", "printk"):
        # the head may be all bootloader: what the whole log turned out to be
        info["stamps"] = "printk"
        first, _, rest = info["assumed"].partition("; ")
        first = f"{DESCRIBE['printk']} on {log.printk_lines} of its {log.lines} lines"
        info["assumed"] = f"{first}; {rest}" if rest else first
    info["printk_lines"] = log.printk_lines
    res["format"] = info["stamps"]
    res["text"] = info
    if res["memory"] and len(res["memory"].get("lines", ())) > 1:
        info["assumed"] += "; a wrapped Memory: line joined"
    return checked(res, name)
