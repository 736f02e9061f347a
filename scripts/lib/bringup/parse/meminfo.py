"""Memory numbers from text: the kernel's `Memory:` boot line (2.4, 2.6 and
current wording), `free`, /proc/meminfo and mem_eat.  Pure functions.

Kernel code + data (seed 002's row): code + data on 2.4/2.6, where "data" ran
from the end of the text to _edata (rodata included); on current kernels
code + rwdata + rodata, which covers the same ground."""

from __future__ import annotations

import re

MEMORY_RE = re.compile(r"Memory: (\d+)[kK](?:/(\d+)[kK])? available \(([^)]*)\)")
PART_RE = re.compile(r"(\d+)[kK] ([a-z-]+(?: [a-z]+)?)")
MEM_EAT_RE = re.compile(r"(?:mem_eat: total|Got total) = (\d+) = (\d+)kB")


def parse_memory_line(text: str) -> dict | None:
    """The first `Memory:` line in text -> kB values, its line number in text (1-based)
    and the line itself; None when there is none."""
    for n, line in enumerate(text.replace("\r", "").split("\n"), 1):
        m = MEMORY_RE.search(line)
        if not m:
            continue
        parts = {name: int(v) for v, name in PART_RE.findall(m.group(3))}
        code = parts.get("kernel code")
        if "rwdata" in parts:
            data = parts.get("rwdata", 0) + parts.get("rodata", 0)
            wording = "modern"
        else:
            data = parts.get("data")
            wording = "2.6" if m.group(2) else "2.4"
        return {
            "wording": wording,
            "line": n,
            "text": line.strip(),
            "available_kb": int(m.group(1)),
            "total_kb": int(m.group(2)) if m.group(2) else None,
            "kernel_code_kb": code,
            "data_kb": data,
            "init_kb": parts.get("init"),
            "bss_kb": parts.get("bss"),
            "reserved_kb": parts.get("reserved"),
            "parts_kb": parts,
            "kernel_code_data_kb": code + data if code is not None and data is not None else None,
        }
    return None


def parse_free(text: str) -> dict | None:
    """`free` (busybox, procps, or 2.4-era procps): the Mem: row by its header."""
    lines = [x for x in text.replace("\r", "").split("\n") if x.strip()]
    for i, line in enumerate(lines):
        if line.strip().startswith("Mem:"):
            head = lines[i - 1].split() if i > 0 else []
            vals = [int(x) for x in line.split()[1:] if x.isdigit()]
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
            out[m.group(1)] = int(m.group(2))
    return out


def parse_mem_eat(text: str) -> dict | None:
    """The last total mem_eat printed; `completed` when it reached 'Got total'
    (malloc failed) rather than being killed."""
    last = None
    for m in MEM_EAT_RE.finditer(text):
        last = m
    if last is None:
        return None
    return {"bytes": int(last.group(1)), "kb": int(last.group(2)), "completed": last.group(0).startswith("Got total")}
