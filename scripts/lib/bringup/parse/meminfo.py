"""Memory numbers from text: the kernel's `Memory:` boot lines (every wording
since 2.2), its `Freeing ... memory` lines, `free`, /proc/meminfo and mem_eat.
Pure functions.

Kernel code + data (seed 002's row): code + data on 2.4/2.6, where "data" ran
from the end of the text to _edata (rodata included); on current kernels
code + rwdata + rodata, which covers the same ground."""

from __future__ import annotations

import re

from bringup.parse.errors import integer

MEMORY_RE = re.compile(
    r"Memory(?: available)?: *(\d+) ?([kKM])B?(?:/(\d+) ?([kKM])B?)? (?:available|usable|RAM)\b(.*)$"
)
CUT_NUMBER_RE = re.compile(r"\d|[kKM]B?\b")  # the rest of a number a terminal's wrap cut
MEMORY_HEAD_RE = re.compile(r"Memory: *\d+ ?[kKM]B?(?:/(?:\d+ ?[kKM]?B?)?)?\s*$")  # wrapped before "available"
TOTAL_RE = re.compile(r"Memory: *((?:\d+MB\s*)+)= *(\d+)MB total")  # ARM: "Memory: 64MB = 64MB total"
PART_RE = re.compile(r"(\d+) ?([kKM])B? ([a-z][a-z-]*(?: code)?)")
SECTION_RE = re.compile(r"^\s*\.(text|init|data|bss) *: 0x[0-9a-f]+ - 0x[0-9a-f]+ +\( *(\d+) kB\)")
CONTINUATION_RE = re.compile(r"[\s\w,()/+-]*")
FREEING_RE = re.compile(r"Freeing (?P<what>[^:]{1,60}?)(?: memory)?: ?(?P<n>\d+) ?(?P<u>[kKM])")
INIT_FREED = re.compile(r"^(?:unused kernel(?: image \(initmem\))?|init)$")
MEM_EAT_RE = re.compile(r"(?:mem_eat: total|Got total) = (\d+) = (\d+)kB")

# a part's name as printed -> the field it fills
PART_FIELDS = {
    "kernel code": "kernel_code_kb",
    "code": "kernel_code_kb",
    "init code": "init_kb",
    "data": "data_kb",
    "rwdata": "rwdata_kb",
    "rodata": "rodata_kb",
    "init": "init_kb",
    "bss": "bss_kb",
    "reserved": "reserved_kb",
    "highmem": "highmem_kb",
    "cma-reserved": "cma_reserved_kb",
    "absent": "absent_kb",
}


def _kb(value: str, unit: str) -> int:
    return integer(value) * (1024 if unit == "M" else 1)


def memory_parts(line: str) -> dict | None:
    """One (joined) `Memory: ... available ...` line -> its numbers in kB, or None.

    Wordings, as mem_init() printed them over the years:
      2.2-3.14    "Memory: 126204k/131072k available (1495k kernel code, 4476k reserved,
                  441k data, 232k init, 0k highmem)" (the total, highmem, reserved, bss
                  or absent may be missing: 2.4 PowerPC has no total, x86_64 "absent")
      ARM 2.4-2.6 "Memory: 63228KB available (1198K code, 290K data, 76K init)" with a
                  separate "Memory: 64MB = 64MB total" line (see TOTAL_RE)
      ARM 2.6.3x-3.x "Memory: 36132k/36132k available, 4828k reserved, 0K highmem"
      3.15-6.x    "Memory: 449408K/622592K available (18432K kernel code, 2459K rwdata,
                  6288K rodata, 1024K init, 6735K bss, 42112K reserved, 131072K
                  cma-reserved[, 0K highmem])" (mem_init_print_info)
      others      s390's "usable" for "available"; m68knommu/blackfin's "Memory available:
                  7032k/8192k RAM, (1164k kernel code, 222k data)"
    """
    m = MEMORY_RE.search(line)
    if not m:
        return None
    parts = {name: _kb(v, u) for v, u, name in PART_RE.findall(m.group(5))}
    out: dict = {"available_kb": _kb(m.group(1), m.group(2))}
    out["total_kb"] = _kb(m.group(3), m.group(4) or m.group(2)) if m.group(3) else None
    for name, key in PART_FIELDS.items():
        if name in parts:
            out[key] = parts[name]
    found = list(PART_RE.finditer(m.group(5)))
    for name, kb in parts.items():
        # a screen marks a line it cut with "$" over its last character ("1432K i$" then
        # "it, 213K bss"); minicom's screen writes the line's last character there instead
        # ("2512k reserv)" at column 80): a name cut there is the one known name it begins
        last = found[-1].group(3) == name and not m.group(5)[found[-1].end() :].strip(" )$")
        cut = f" {name}$" in m.group(5) or last
        known = {f for k, f in PART_FIELDS.items() if k.startswith(name)} if cut else set()
        if name not in PART_FIELDS and len(known) == 1:
            out.setdefault(known.pop(), kb)
    if "rwdata" in parts:
        fmt = "rwdata-rodata"
    elif "kernel code" in parts:
        fmt = "kernel-code-data"
    elif "code" in parts:
        fmt = "arm-code-data"
    elif parts:
        fmt = "arm-reserved"
    else:
        fmt = "available-only"
    out["format"] = fmt
    out["parts_kb"] = parts
    return out


class MemoryLines:
    """The kernel's `Memory:` lines, fed line by line (printk time taken off): the first
    `available` line (joined with its continuation when a mailer wrapped it), ARM's
    `Memory: NNMB = NNMB total` line, and the `.text/.init/.data/.bss` sizes of the
    "Virtual kernel memory layout" that 2.6.3x-4.x ARM kernels print after it."""

    MAX_CONTINUATION = 3

    def __init__(self) -> None:
        self.avail: tuple[int, list[int], str] | None = None  # (line, lines it spans, text)
        self.total: tuple[int, str, int] | None = None  # (line, text, kB)
        self.sections: dict[str, int] = {}
        self._pending: tuple[int, list[int], str] | None = None

    def feed(self, n: int, body: str) -> None:
        if self._pending is not None and self._continue(n, body):
            return
        if "Memory" in body:
            self._memory(n, body)
        elif "kB)" in body and len(self.sections) < 4:
            s = SECTION_RE.match(body)
            if s and s.group(1) not in self.sections:
                self.sections[s.group(1)] = integer(s.group(2))

    def _continue(self, n: int, body: str) -> bool:
        """Whether body continues the pending (wrapped) Memory: line."""
        assert self._pending is not None
        pn, lines, text = self._pending
        if not (body.strip() and CONTINUATION_RE.fullmatch(body)):
            self._finish()
            return False
        # a terminal wraps at its last column, inside a number ("... 108k data, 7" then
        # "2k init, 0k highmem)"); a mailer wraps at a space, never inside "72k"
        cut = text[-1:].isdigit() and CUT_NUMBER_RE.match(body.strip()) is not None
        text = f"{text}{'' if cut else ' '}{body.strip()}"
        self._pending = (pn, [*lines, n], text)
        closed = ")" in body or ("available" in text and "(" not in text)
        if closed or len(lines) >= self.MAX_CONTINUATION:
            self._finish()
        return True

    def _memory(self, n: int, body: str) -> None:
        if self.avail is None:
            m = MEMORY_RE.search(body)
            if m and "(" in m.group(5) and ")" not in m.group(5):
                self._pending = (n, [n], body.strip())
            elif m:
                self.avail = (n, [n], body.strip())
            elif MEMORY_HEAD_RE.search(body):
                self._pending = (n, [n], body.strip())
        if self.total is None:
            t = TOTAL_RE.search(body)
            if t:
                self.total = (n, body.strip(), integer(t.group(2)) * 1024)

    def _finish(self) -> None:
        if self._pending is not None and self.avail is None and MEMORY_RE.search(self._pending[2]):
            self.avail = self._pending
        self._pending = None

    def result(self) -> dict | None:
        self._finish()
        if self.avail is None and self.total is None:
            return None
        out: dict = {"format": "total-only", "available_kb": None, "total_kb": None, "parts_kb": {}, "line": None}
        if self.avail is not None:
            n, lines, text = self.avail
            out = memory_parts(text) or out
            out.update(line=text, line_no=n, lines=lines)
        slash = out["total_kb"] is not None  # "NNk/NNk available": 2.6's wording (and 2.4 i386's)
        if self.total is not None:
            tn, ttext, tkb = self.total
            out.update(total_line_no=tn, total_line=ttext, mb_total_kb=tkb)
            if out.get("total_kb") is None:
                out["total_kb"] = tkb
        if self.sections:
            out["sections_kb"] = dict(self.sections)
        code = out.get("kernel_code_kb")
        if "rwdata_kb" in out or "rodata_kb" in out:
            data = out.get("rwdata_kb", 0) + out.get("rodata_kb", 0)
            out["wording"] = "modern"
        else:
            data = out.get("data_kb")
            out["wording"] = "2.6" if slash else "2.4"
        out["data_kb"] = data
        out["kernel_code_data_kb"] = code + data if code is not None and data is not None else None
        for key in ("kernel_code_kb", "init_kb", "bss_kb", "reserved_kb"):
            out.setdefault(key, None)
        return out


def parse_memory(text: str) -> dict | None:
    """Every number of the kernel's `Memory:` line(s) in text (the first `available`
    line, joined when a mailer wrapped it; ARM's separate total line; the virtual
    layout's section sizes) -> kB values, or None.  The model `parse bootlog` reports."""
    mem = MemoryLines()
    for n, line in enumerate(text.replace("\r", "").split("\n"), 1):
        mem.feed(n, line)
    return mem.result()


RECORD_KEYS = (
    "wording",
    "line",
    "available_kb",
    "total_kb",
    "kernel_code_kb",
    "data_kb",
    "init_kb",
    "bss_kb",
    "reserved_kb",
    "parts_kb",
    "kernel_code_data_kb",
)


def parse_memory_line(text: str) -> dict | None:
    """The first `Memory: ... available` line in text -> the fields footprint.json's
    `memory_line` has (docs/records.md), or None.  `total_kb` is the line's own total
    ("NNk/NNk available"); parse_memory has everything else."""
    full = parse_memory(text)
    if full is None or full["line"] is None:
        return None
    out = {k: full.get(k) for k in RECORD_KEYS}
    out["total_kb"] = full["total_kb"] if full.get("mb_total_kb") is None or "/" in _head(full["line"]) else None
    out["line"] = full["line_no"]  # footprint.json: the line's number in the run's console.log, and its text
    out["text"] = full["line"].strip()
    return out


def _head(line: str) -> str:
    m = MEMORY_RE.search(line)
    return line[m.start() : m.start(5)] if m else ""


def freeing_line(body: str) -> dict | None:
    """`Freeing unused kernel memory: 1024K`, `Freeing initrd memory: 3696k freed`,
    `Freeing init memory: 76K`, `Freeing unused kernel image (initmem) memory: 1024K`,
    `Freeing SMP alternatives: 24k freed` -> {what, kind, kb}; kind is "init" for the
    kernel's init sections, "initrd" for the initial ramdisk, else "other"."""
    m = FREEING_RE.search(body)
    if not m:
        return None
    what = m.group("what").strip()
    kind = "init" if INIT_FREED.match(what) else "initrd" if what == "initrd" else "other"
    return {"what": what, "kind": kind, "kb": _kb(m.group("n"), m.group("u").upper())}


def parse_free(text: str) -> dict | None:
    """`free` (busybox, procps, or 2.4-era procps): the Mem: row by its header."""
    lines = [x for x in text.replace("\r", "").split("\n") if x.strip()]
    for i, line in enumerate(lines):
        if line.strip().startswith("Mem:"):
            head = lines[i - 1].split() if i > 0 else []
            vals = [integer(x) for x in line.split()[1:] if x.isascii() and x.isdigit()]  # not "²"
            if len(head) >= len(vals):
                head = head[: len(vals)]
            row = dict(zip(head, vals, strict=False))
            return {
                "total_kb": row.get("total"),
                "used_kb": row.get("used"),
                "free_kb": row.get("free"),
                "available_kb": row.get("available"),
                "columns": row,
            }
    return None


def parse_meminfo(text: str) -> dict:
    out = {}
    for line in text.replace("\r", "").split("\n"):
        m = re.match(r"^(\w+(?:\(\w+\))?):\s+(\d+) kB", line.strip())
        if m:
            out[m.group(1)] = integer(m.group(2))
    return out


def parse_mem_eat(text: str) -> dict | None:
    """The last total mem_eat printed; `completed` when it reached 'Got total'
    (malloc failed) rather than being killed."""
    last = None
    for m in MEM_EAT_RE.finditer(text):
        last = m
    if last is None:
        return None
    return {
        "bytes": integer(last.group(1)),
        "kb": integer(last.group(2)),
        "completed": last.group(0).startswith("Got total"),
    }
