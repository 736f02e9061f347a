"""lmbench output -> values with units.  Pure functions.

Reads, in every published shape:
  - the footprint runner's blocks (`@@@ BEGIN name @@@ ... @@@ END name rc=N @@@`);
  - lmbench's summary tables of lmbench 1.x, 2.x, 3.x (parse/lmbench_summary.py);
  - lmbench's results files (`[lmbench3.0 results for ...]`: the tools' outputs one
    after the other with quoted block titles);
  - the tools' raw outputs, as pasted in mails;
  - a `diff` of two of them (a results file before and after a change): the `<` side
    and the `>` side (which reaches parse_any unquoted, as a mail quote) are two sets.

Outputs of the tools:
  "Simple syscall: 0.1241 microseconds"          labeled value, in microseconds, usecs,
                                                 nanoseconds, MB/sec, KB/sec, seconds, ...
  "size=16k ovr=0.58 / "2 0.66" / "8 28.43"      lat_ctx block: processes, microseconds
  "0k  1107  75143  368409"                      lat_fs: size, files, creates/s, removes/s
                                                 (kept, and turned into microseconds per file)
  "0.065536 106103.67" or "... MB/sec"           bw_* / lat_mmap pairs: MB, value; the block's
                                                 title is the quoted line before them (or, in
                                                 lmbench 3 raw output, the plain line)
  "stride=64 / "0.00049 1.275"                   lat_mem_rd: MB, nanoseconds

`parse_any` returns every result set in the structure of lmbench.json
(docs/records.md): per set, `benchmarks.<name>` = {group, rc, metrics: [{name,
value, unit, better, source, ...}]}, so that an imported result can be put
beside a live one.
"""

from __future__ import annotations

import io
import re
from typing import BinaryIO

from bringup.parse.errors import MAX_VALUE, LongNumber, ParseError, checked, integer, numbers
from bringup.parse.lmbench_summary import parse_summary

LABELED = re.compile(
    r"^([A-Za-z][^:]{1,80}):\s*(-?[0-9.]+(?:[eE][-+]?\d+)?)\s+(microseconds|usecs?|us|nanoseconds|nsecs?|ns|"
    r"MB/sec|MB/s|KB/sec|KB/s|milliseconds|msecs?|ms|seconds|secs?)\s*$"
)
CTX_HEAD = re.compile(r'^"?size=(\d+)k\s+ovr=([0-9.]+)')
STRIDE_HEAD = re.compile(r'^"?stride=(\d+)')
QUOTED = re.compile(r'^"(.+)$')
PAIR = re.compile(r"^(-?[0-9.]+)\s+(-?[0-9.]+)(?:\s+(MB/sec))?\s*$")
FS_ROW = re.compile(r"^(\d+k)\s+(\d+)\s+(\d+)\s+(\d+)\s*$")
# a tool's command line echoed before its pairs (a shell transcript: "$ ./bw_mem -P 2 64m rd",
# "numactl --membind=0 bw_mem 512m fwr"): what the pairs measure
COMMAND = re.compile(
    r"(?:^|[\s/$#>;])(bw_mem|bw_file_rd|bw_mmap_rd)((?:\s+-[A-Za-z]\s*\d+)*)\s+\S+\s+"
    r"(rdwr|rd|wr|frd|fwr|fcp|cp|bzero|bcopy|io_only|mmap_only|open2close)\b"
)
BW_MEM_OPS = ("rd", "wr", "rdwr", "frd", "fwr", "fcp", "cp", "bzero", "bcopy")
COMMAND_BLOCK = {
    ("bw_file_rd", "io_only"): "read bandwidth",
    ("bw_file_rd", "open2close"): "read open2close bandwidth",
    ("bw_mmap_rd", "mmap_only"): "Mmap read bandwidth",
    ("bw_mmap_rd", "open2close"): "Mmap read open2close bandwidth",
}
TITLE = re.compile(r"^[A-Za-z][A-Za-z0-9 /_.,'()+-]{2,60}$")  # a plain block title (lmbench 3 raw output)
BEGIN = re.compile(r"^@@@ BEGIN (\S+) @@@\s*$")
END = re.compile(r"^@@@ END (\S+) rc=(-?\d+) @@@\s*$")
RESULTS_HEAD = re.compile(r"^\[lmbench([0-9.]+) results for (.*)\]$")
# "[LMBENCH_VER: lmbench-3alpha4]" (empty in some builds: "[LMBENCH_VER: ]"), "[LMBENCH VERSION: ...]"
VERSION_HEAD = re.compile(r"^\[LMBENCH[_ ]VER(?:SION)?: (?:lmbench-?)?(.*?)\s*\]$")
MHZ_HEAD = re.compile(r"^\[MHZ: (\d+(?:\.\d+)?) MHz")
MAX_LINES = 2_000_000
# `diff` between two outputs: its hunk headers ("86,107c86,107") and separators ("---")
DIFF_MARK = re.compile(r"^(?:\d+(?:,\d+)?[acd]\d+(?:,\d+)?|---)$")
DIFF_NEW = re.compile(r"^\s*> ?")
DIFF_OLD_LINES = 3  # '<' lines needed to take a text for a diff

UNITS = {
    "microseconds": "us",
    "usecs": "us",
    "usec": "us",
    "us": "us",
    "nanoseconds": "ns",
    "nsecs": "ns",
    "nsec": "ns",
    "ns": "ns",
    "MB/sec": "MB/s",
    "MB/s": "MB/s",
    "KB/sec": "KB/s",
    "KB/s": "KB/s",
    "milliseconds": "ms",
    "msecs": "ms",
    "msec": "ms",
    "ms": "ms",
    "seconds": "s",
    "secs": "s",
    "sec": "s",
}

# What a labeled line or a block title measures: (label regex, benchmark, group), in the order
# they are tried; the [[benchmark]] table of configs/lmbench.toml (model/benchset.py: labels()),
# given as plain data by the caller
Labels = list[tuple[str, str, str]]


def default_labels() -> Labels:
    """Deprecated: the [[benchmark]] table as configs/lmbench.toml has it, read as plain data
    (the file is validated by model/benchset.py wherever bringup loads the lmbench set), for
    callers that do not pass model.benchset.labels() yet."""
    import tomllib
    from pathlib import Path

    f = Path(__file__).resolve().parents[4] / "configs" / "lmbench.toml"
    with open(f, "rb") as fh:
        table = tomllib.load(fh)
    return [(rx, b["name"], b["group"]) for b in table["benchmark"] for rx in b["labels"]]


def better(unit: str) -> str:
    return "higher" if unit in ("MB/s", "KB/s") else "lower"


def _m(name, value, unit, source, line: int | None = None, **extra):
    m = {"name": name, "value": value, "unit": unit, "better": better(unit), "source": source}
    if line is not None:  # imports say where each value was read; live records stay as they were
        m.update(line=line, **extra)
    return m


def parse_text(text: str, source: str = "", first_line: int | None = None) -> list[dict]:
    """Every value in a tool's (or a results file's) output.  With first_line (the
    number of text's first line in its file), each value also says its line, and
    plain (unquoted) block titles of lmbench 3's raw output are read."""
    out: list[dict] = []
    block = source  # title of the current pair block
    latency_section = False  # under lmbench's "latency measurements" heading
    ctx_size = None
    stride = None
    lines = text.replace("\r", "").split("\n")
    for i, raw in enumerate(lines):
        line = raw.strip()
        n = None if first_line is None else first_line + i
        if not line:
            ctx_size = stride = None
            continue
        if line.lower() in ("latency measurements", "bandwidth measurements", "context switch overhead"):
            latency_section, block = line.lower() == "latency measurements", source
            continue
        m = LABELED.match(line)
        if m:
            unit = UNITS[m.group(3)]
            out.append(_m(m.group(1).strip(), float(m.group(2)), unit, source or m.group(1).strip(), n))
            ctx_size = stride = None
            continue
        m = CTX_HEAD.match(line)
        if m:
            ctx_size, stride = integer(m.group(1)), None
            continue
        m = STRIDE_HEAD.match(line)
        if m:
            stride, ctx_size = integer(m.group(1)), None
            continue
        m = FS_ROW.match(line)
        if m:
            out.extend(_fs_row(m, source, n))
            continue
        m = PAIR.match(line)
        if m:
            # untitled pairs under "latency measurements" are lat_mmap's (size MB, microseconds):
            # lmbench's script prints no other size/value pairs there; elsewhere bandwidths
            untitled = "mappings" if latency_section and not block else block
            pair = _pair(float(m.group(1)), float(m.group(2)), untitled, ctx_size, stride, source, n)
            if pair is not None:
                out.append(pair)
            continue
        m = QUOTED.match(line)
        if m:
            block = m.group(1).strip().strip('"')
            ctx_size = stride = None
            continue
        title = None if source else _title(lines, i, first_line is not None)
        if title is not None:
            block, ctx_size, stride = title, None, None
    return out


def _title(lines: list[str], i: int, plain: bool) -> str | None:
    """The title line i gives the pairs after it: a tool's echoed command line, or (plain:
    lmbench 3's raw output) a plain title line followed by a pair."""
    line = lines[i].strip()
    title = _command_block(line) if "bw_" in line else None
    if title is None and "bw_" in line and i + 1 < len(lines):  # a command line a mailer wrapped
        title = _command_block(f"{line} {lines[i + 1].strip()}")
    if title is None and plain and TITLE.match(line) and _pair_follows(lines, i):
        title = line
    return title


def _command_block(line: str) -> str | None:
    """The title of the pairs a tool's echoed command line gives (`bw_mem 64m rd`: bw_mem_rd)."""
    m = COMMAND.search(line)
    if m is None:
        return None
    tool, op = m.group(1), m.group(3)
    title = (f"bw_mem_{op}" if op in BW_MEM_OPS else None) if tool == "bw_mem" else COMMAND_BLOCK.get((tool, op))
    p = re.search(r"-P\s*(\d+)", m.group(2))
    if title is not None and p and integer(p.group(1)) > 1:  # P copies at once: their sum, another measurement
        title = f"{title} -P{integer(p.group(1))}"
    return title


def _pair_follows(lines: list[str], i: int) -> bool:
    return i + 1 < len(lines) and PAIR.match(lines[i + 1].strip()) is not None


def _pair(x: float, y: float, block: str, ctx_size, stride, source: str, n: int | None) -> dict | None:
    if not abs(x) <= MAX_VALUE:  # a count or size beyond any (int() of an infinity would crash)
        what = "lat_ctx process count" if ctx_size is not None else "size"
        raise LongNumber(f"{what} {x}: beyond any value a log holds")
    if ctx_size is not None:
        return _m(f"ctx {int(x)}p/{ctx_size}K", y, "us", source or "lat_ctx", n, processes=int(x), size_kb=ctx_size)
    if stride is not None:
        return _m(
            f"mem read stride={stride} {_size_mib(x)}", y, "ns", source or "lat_mem_rd", n, size_mb=x, stride=stride
        )
    name = block or "pairs"
    unit = pair_unit(name)
    if unit is None:
        return None
    return _m(f"{name} {_size(x)}", y, unit, source or name, n, block=name, size_mb=x)


def pair_unit(block: str) -> str | None:
    """The unit of the values in a block of "size value" pairs, from its title: None
    for a block whose values bringup cannot name (lmbench's "Memory load parallelism")."""
    if block.startswith(("lat_mmap", "mappings", "Mmap latency")):
        return "us"
    if block == "pairs" or re.search(r"^bw_|bandwidth|bcopy|bzero|\bread\b|\bwrite\b", block):
        return "MB/s"
    return None


def _fs_row(m: re.Match, source: str, n: int | None) -> list[dict]:
    """lat_fs: size, files, creations/s, removals/s -> microseconds per file (what the
    report compares); imports keep the numbers as printed too."""
    size, files, creates, removes = m.group(1).upper(), integer(m.group(2)), integer(m.group(3)), integer(m.group(4))
    out = []
    for what, per_second in (("create", creates), ("delete", removes)):
        if per_second:  # 0: not measured
            us = round(1e6 / per_second, 3)
            out.append(_m(f"{size} file {what}", us, "us", source or "lat_fs", n, files=files, per_second=per_second))
    return out


def _round_size(b: float, tol: float = 1e-6) -> bool:
    """Whether b bytes (give or take tol) is a size lmbench's scripts use: a power of two (or 3
    times one), >= 512."""
    r = round(b)
    if abs(b - r) > tol or r < 512:
        return False
    while r % 2 == 0:
        r //= 2
    return r in (1, 3)


def _size(mb: float) -> str:
    """0.065536 -> 64K, 1.05 -> 1M, 8.39 -> 8M (lmbench 3 prints MB of 10^6 bytes); 32.00 -> 32M,
    0.500000 -> 512K, 0.000488 -> 512B (bw_mem builds whose MB is 2^20 bytes: the size is round
    only in MiB; below 1 MB printed with 6 decimals, half a millionth of 2^20 bytes apart)."""
    dec, binary = mb * 1e6, mb * 2**20
    if _round_size(binary, 0.53 if mb < 1 else 1e-6) and not _round_size(dec):
        b = binary
    else:
        b = dec if mb < 1 or abs(dec - round(dec)) < 1e-6 else binary
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


# what a benchmark prints through perror() when what it measures is not there (a missing
# test file, /dev/zero on a kernel without devtmpfs): lmbench still prints a number, the
# time of the failing call, e.g. "Simple stat: 13424.0000 microseconds" after 20 lines of
# "/tmp/lmb.file: No such file or directory"; such a block gives no number
PERROR = re.compile(
    r"^\S[^\n]*: (?:No such file or directory|Permission denied|Operation not permitted|"
    r"Function not implemented|No such device(?: or address)?|Bad address)\s*$",
    re.M,
)


def runner_metrics(body: str, name: str, start: int | None) -> list:
    """A block's metrics; none when the benchmark reported a failed call (PERROR)."""
    return [] if PERROR.search(body) else parse_text(body, name, start)


def parse_runner(text: str, lines: bool = False) -> dict:
    """The runner's output: {benchmark: {rc, metrics, text}}; unfinished blocks have rc None.
    With lines, each value says its line number in text.  A block whose benchmark
    reported a failed call (a missing file, PERROR) has no metrics."""
    res: dict = {}
    cur: str | None = None
    buf: list[str] = []
    start = 0
    for i, line in enumerate(text.replace("\r", "").split("\n"), 1):
        b = BEGIN.match(line.strip())
        if b:
            cur, buf, start = b.group(1), [], i + 1
            continue
        e = END.match(line.strip())
        if e and cur == e.group(1):
            body, name = "\n".join(buf), e.group(1)
            res[name] = {
                "rc": integer(e.group(2)),
                "metrics": runner_metrics(body, name, start if lines else None),
                "text": body,
            }
            cur = None
            continue
        if cur is not None:
            buf.append(line)
    if cur is not None:
        body = "\n".join(buf)
        res[cur] = {"rc": None, "metrics": runner_metrics(body, cur, start if lines else None), "text": body}
    return res


def block_lines(text: str) -> dict[str, list[int]]:
    """Line numbers (1-based) where each benchmark's runner blocks begin, in order."""
    out: dict[str, list[int]] = {}
    for n, line in enumerate(text.split("\n"), 1):
        b = BEGIN.match(line.strip())
        if b:
            out.setdefault(b.group(1), []).append(n)
    return out


def bench_of(name: str, labels: Labels) -> tuple[str, str]:
    """(benchmark, group) of a metric read from raw output: the first label that matches."""
    for rx, bench, group in labels:
        if re.search(rx, name):
            if bench == "lat_ctx":
                size = re.search(r"/(\d+)K$", name)
                bench = f"lat_ctx_{size.group(1)}k" if size else bench
            return bench, group
    return "other", ""


def _grouped(metrics: list[dict], labels: Labels) -> dict:
    out: dict = {}
    for m in metrics:
        bench, group = bench_of(m["name"], labels)
        out.setdefault(bench, {"group": group, "rc": None, "metrics": []})["metrics"].append(m)
    return out


def _one_set(benchmarks: dict, host: str | None = None, **extra) -> dict:
    return {
        "host": host,
        "os": None,
        "run": 1,
        "params": {},
        "measured": any(b["metrics"] for b in benchmarks.values()),
        "benchmarks": benchmarks,
        "not_measured": [],
        **extra,
    }


def parse_any(text: str, labels: Labels | None = None) -> dict:
    """Runner output, summary tables, a classic results file, or tools' raw output ->
    {format, lmbench_version, results: [result set, ...]}; `labels` name the benchmarks
    (model/benchset.py: labels(); default_labels() when not given)."""
    labels = labels if labels is not None else default_labels()
    groups = {bench: group for _, bench, group in labels}
    lines = text.replace("\r", "").split("\n")
    if any(BEGIN.match(line.strip()) for line in lines):
        runs = parse_runner(text, lines=True)
        first = {name: v["metrics"][0]["name"] for name, v in runs.items() if v["metrics"]}
        benchmarks = {
            name: {
                "group": groups.get(name) or (bench_of(first[name], labels)[1] if name in first else ""),
                **v,
            }
            for name, v in runs.items()
        }
        for v in benchmarks.values():
            v.pop("text", None)
        return {"format": "runner", "lmbench_version": None, "results": [_one_set(benchmarks)]}
    sides = _diff_sides(lines)
    if sides is not None:
        return _diff(*sides, labels)
    summary = parse_summary([line.expandtabs() for line in lines])
    if summary is not None:
        return summary
    head = _results_head(lines)
    m = RESULTS_HEAD.match(head)
    version = next(
        (vh.group(1) for line in lines[:60] if (vh := VERSION_HEAD.match(line.strip())) and vh.group(1)), None
    )
    metrics = parse_text(text, first_line=1)
    if m:
        # the header is `uname -a`: host and OS as getsummary takes them (node name; system and release)
        uname = m.group(2).split()
        host, os_ = (uname[1], f"{uname[0]} {uname[2]}") if len(uname) >= 3 else (m.group(2), None)
        mhz = next((float(mh.group(1)) for line in lines[:60] if (mh := MHZ_HEAD.match(line.strip()))), None)
        params = {"mhz": int(mhz) if mhz is not None and mhz.is_integer() else mhz} if mhz is not None else {}
        return {
            "format": "results-file",
            "lmbench_version": version or m.group(1),
            "results": [_one_set(_grouped(metrics, labels), host=host, line=_first_line(lines), os=os_, params=params)],
        }
    return {
        "format": "raw",
        "lmbench_version": version,
        "results": [_one_set(_grouped(metrics, labels))] if metrics else [],
    }


def _diff_sides(lines: list[str]) -> tuple[list[str], list[str]] | None:
    """A `diff` of two lmbench outputs: its old side (the '<' lines, and the lines a mailer
    wrapped off them) and its new side (the other lines: its '>' lines, usually taken off as
    a mail quote already), each as long as the text so that line numbers stay; None when the
    text is no diff (a '<' line and a hunk header, or a few '<' lines and '---', are needed)."""
    old = sum(1 for line in lines if line.startswith("<"))
    marks = [line.strip() for line in lines if DIFF_MARK.match(line.strip())]
    if not old or not marks or (old < DIFF_OLD_LINES and all(m == "---" for m in marks)):
        return None
    a: list[str] = []
    b: list[str] = []
    after_old = False
    for line in lines:
        text = line.strip()
        if DIFF_MARK.match(text):
            a.append("")
            b.append("")
            after_old = False
        elif line.startswith("<"):
            a.append(line[2:] if line.startswith("< ") else line[1:])
            b.append("")
            after_old = True
        elif after_old and text:  # the rest of an old line a mailer wrapped
            a.append(line)
            b.append("")
        else:
            a.append("")
            b.append(DIFF_NEW.sub("", line, count=1))  # a '>' left by a quote around the diff
            after_old = False
    return a, b


def _diff(a: list[str], b: list[str], labels: Labels) -> dict:
    """Both sides of a diff, each parsed as a text of its own: the old side's sets, then the
    new side's (a second run of a host and OS the old side has too)."""
    old, new = parse_any("\n".join(a), labels), parse_any("\n".join(b), labels)
    seen = {(r["host"], r["os"]) for r in old["results"]}
    for r in new["results"]:
        if (r["host"], r["os"]) in seen:
            r["run"] += max(x["run"] for x in old["results"] if (x["host"], x["os"]) == (r["host"], r["os"]))
    return {
        "format": "diff",
        "lmbench_version": old["lmbench_version"] or new["lmbench_version"],
        "sides": [old["format"], new["format"]],
        "results": old["results"] + new["results"],
    }


def _first_line(lines: list[str]) -> int:
    """The number of the first non-blank line (a results file's header)."""
    return next((i for i, line in enumerate(lines, 1) if line.strip()), 1)


def _results_head(lines: list[str]) -> str:
    """The first non-blank line; a results file's `[lmbench3.0 results for <uname -a>]` cut by
    a mailer (the uname is often wider than 80 columns) joined with its continuation lines."""
    i = next((i for i, line in enumerate(lines) if line.strip()), None)
    if i is None:
        return ""
    head = lines[i].strip()
    if head.startswith("[lmbench") and " results for " in head and not head.endswith("]"):
        for more in lines[i + 1 : i + 4]:
            head = f"{head} {more.strip()}"
            if head.endswith("]"):
                break
    return head


def parse_lmbench(data: bytes | BinaryIO, name: str = "input", labels: Labels | None = None) -> dict:
    """An lmbench file (bytes or a binary stream): its text made plain (mail quotes,
    CRLF, escapes taken off; parse/logtext.py), then parse_any with `labels`.  ParseError
    (one line) when it holds no lmbench value at all."""
    from bringup.parse.logtext import LogText

    stream = io.BytesIO(data) if isinstance(data, bytes) else data
    text = LogText(stream, name, what="lmbench output", console=False)
    lines = []
    for _, _, line in text.lines():
        lines.append(line)
        if len(lines) > MAX_LINES:
            raise ParseError(f"{name}: not lmbench output (more than {MAX_LINES} lines)")
    with numbers(name, "\n".join(lines)):
        res = parse_any("\n".join(lines), labels)
    if not any(r["measured"] or r["not_measured"] for r in res["results"]):
        raise ParseError(
            f"{name}: not lmbench output (no summary table, runner block or benchmark value in its {len(lines)} lines)"
        )
    res["text"] = text.info()
    return checked(res, name)
