"""lmbench output -> values with units.  Pure functions.

Reads the runner's blocks (`@@@ BEGIN name @@@ ... @@@ END name rc=N @@@`),
bare tool output, and lmbench's own results files
(`[lmbench3.0 results for ...]`), which are the tools' outputs one after the
other with quoted block titles.

Formats handled:
  "Simple syscall: 0.1241 microseconds"          labeled value (also MB/sec, nanoseconds)
  "size=16k ovr=0.58 / "2 0.66" / "8 28.43"      lat_ctx block: processes, microseconds
  "0k  1107  75143  368409"                      lat_fs: size, files, creates/s, removes/s
  "0.065536 106103.67" or "... MB/sec"           bw_* / lat_mmap pairs: MB, value
  "stride=64 / "0.00049 1.275"                   lat_mem_rd: MB, nanoseconds
"""

from __future__ import annotations

import re

LABELED = re.compile(
    r"^([A-Za-z][^:]{1,80}):\s+(-?[0-9.]+(?:[eE][-+]?\d+)?)\s+(microseconds|nanoseconds|"
    r"MB/sec|MB/s|seconds)\s*$"
)
CTX_HEAD = re.compile(r'^"?size=(\d+)k\s+ovr=([0-9.]+)')
STRIDE_HEAD = re.compile(r'^"?stride=(\d+)')
QUOTED = re.compile(r'^"(.+)$')
PAIR = re.compile(r"^(-?[0-9.]+)\s+(-?[0-9.]+)(?:\s+(MB/sec))?\s*$")
FS_ROW = re.compile(r"^(\d+k)\s+(\d+)\s+(\d+)\s+(\d+)\s*$")
BEGIN = re.compile(r"^@@@ BEGIN (\S+) @@@\s*$")
END = re.compile(r"^@@@ END (\S+) rc=(-?\d+) @@@\s*$")
RESULTS_HEAD = re.compile(r"^\[lmbench[0-9.]+ results for (.*)\]$")

UNITS = {"microseconds": "us", "nanoseconds": "ns", "MB/sec": "MB/s", "MB/s": "MB/s", "seconds": "s"}


def better(unit: str) -> str:
    return "higher" if unit == "MB/s" else "lower"


def _m(name, value, unit, source):
    return {"name": name, "value": value, "unit": unit, "better": better(unit), "source": source}


def parse_text(text: str, source: str = "") -> list[dict]:
    """Every value in a tool's (or a results file's) output."""
    out = []
    block = source  # title of the current pair block
    ctx_size = None
    stride = None
    for raw in text.replace("\r", "").split("\n"):
        line = raw.strip()
        if not line:
            ctx_size = None
            stride = None
            continue
        m = LABELED.match(line)
        if m:
            unit = UNITS[m.group(3)]
            out.append(_m(m.group(1).strip(), float(m.group(2)), unit, source or m.group(1).strip()))
            ctx_size = stride = None
            continue
        m = CTX_HEAD.match(line)
        if m:
            ctx_size, stride = int(m.group(1)), None
            continue
        m = STRIDE_HEAD.match(line)
        if m:
            stride, ctx_size = int(m.group(1)), None
            continue
        m = FS_ROW.match(line)
        if m:
            out.extend(_fs_row(m, source))
            continue
        m = PAIR.match(line)
        if m:
            x, y = float(m.group(1)), float(m.group(2))
            if ctx_size is not None:
                out.append(_m(f"ctx {int(x)}p/{ctx_size}K", y, "us", source or "lat_ctx"))
            elif stride is not None:
                out.append(_m(f"mem read stride={stride} {_size_mib(x)}", y, "ns", source or "lat_mem_rd"))
            else:
                name = block or "pairs"
                unit = "us" if name.startswith(("lat_mmap", "mappings", "Mmap")) else "MB/s"
                out.append(_m(f"{name} {_size(x)}", y, unit, source or name))
            continue
        m = QUOTED.match(line)
        if m:
            block = m.group(1).strip().strip('"')
            ctx_size = stride = None
            continue
    return out


def _fs_row(m: re.Match, source: str) -> list[dict]:
    """lat_fs: size, files, creations/s, removals/s -> microseconds per file."""
    size, creates, removes = m.group(1).upper(), int(m.group(3)), int(m.group(4))
    out = []
    if creates:
        out.append(_m(f"{size} file create", round(1e6 / creates, 3), "us", source or "lat_fs"))
    if removes:
        out.append(_m(f"{size} file delete", round(1e6 / removes, 3), "us", source or "lat_fs"))
    return out


def _size(mb: float) -> str:
    """0.065536 -> 64K, 1.05 -> 1M, 8.39 -> 8M (lmbench prints MB, 2^20 or 10^6)."""
    b = mb * 1e6 if mb < 1 or abs(mb * 1e6 - round(mb * 1e6)) < 1e-6 else mb * 2**20
    kib = b / 1024
    if kib < 1:
        return f"{int(round(b))}B"
    if kib < 1024 * 0.99:
        return f"{kib:.0f}K" if abs(kib - round(kib)) < 0.05 else f"{kib:.2f}K"
    mib = kib / 1024
    return f"{mib:.0f}M" if abs(mib - round(mib)) < 0.06 else f"{mib:.2f}M"


def _size_mib(mb: float) -> str:
    """lat_mem_rd prints MiB with 5 decimals (0.00049 = 512 bytes): round to 512 bytes."""
    b = max(512, round(mb * 2**20 / 512) * 512)
    if b < 1024:
        return f"{b}B"
    if b < 2**20:
        k = b / 1024
        return f"{k:.0f}K" if k == int(k) else f"{k:.1f}K"
    m = b / 2**20
    return f"{m:.0f}M" if abs(m - round(m)) < 0.01 else f"{m:.2f}M"


def parse_runner(text: str) -> dict:
    """The runner's output: {benchmark: {rc, metrics, text}}; unfinished blocks have rc None."""
    res = {}
    cur, buf = None, []
    for line in text.replace("\r", "").split("\n"):
        b = BEGIN.match(line.strip())
        if b:
            cur, buf = b.group(1), []
            continue
        e = END.match(line.strip())
        if e and cur == e.group(1):
            body = "\n".join(buf)
            res[cur] = {"rc": int(e.group(2)), "metrics": parse_text(body, cur), "text": body}
            cur = None
            continue
        if cur is not None:
            buf.append(line)
    if cur is not None:
        body = "\n".join(buf)
        res[cur] = {"rc": None, "metrics": parse_text(body, cur), "text": body}
    return res


def block_lines(text: str) -> dict[str, list[int]]:
    """Line numbers (1-based) where each benchmark's runner blocks begin, in order."""
    out: dict[str, list[int]] = {}
    for n, line in enumerate(text.split("\n"), 1):
        b = BEGIN.match(line.strip())
        if b:
            out.setdefault(b.group(1), []).append(n)
    return out


def parse_any(text: str) -> dict:
    """Runner output, a classic results file, or one tool's output."""
    if BEGIN.search(text) or "@@@ BEGIN" in text:
        return {"format": "runner", "benchmarks": parse_runner(text)}
    first = text.lstrip().split("\n", 1)[0].strip()
    m = RESULTS_HEAD.match(first)
    if m:
        return {"format": "lmbench-results", "host": m.group(1), "metrics": parse_text(text)}
    return {"format": "output", "metrics": parse_text(text)}
