"""lmbench's summary tables (`make see`, `make summary`, getsummary) of lmbench
1.x, 2.x and 3.x -> one result set per host row.  Pure functions.

A summary is sections like

    Processor, Processes - times in microseconds - smaller is better
    ----------------------------------------------------------------
    Host                 OS  Mhz null null      open selct sig  sig  fork exec sh
                                 call  I/O stat clos TCP   inst hndl proc proc proc
    --------- ------------- ---- ---- ---- ---- ---- ----- ---- ---- ---- ---- ----
    frodo      Linux 2.4.18  797 0.40 0.56 3.18 3.97       1.00 3.18 115. 1231 13.K

The dashed line under the headers gives the columns; a value belongs to the column
it overlaps most (values overflow their column now and then: `2.9  10.0  88`), a
header word that straddles two columns labels both (`0K File` over `Create
Delete`).  `K` means x1000, `M` x1000000, `115.` is 115; `-1`, `-` and a blank
are "not measured".  Rows with the same host and OS in one section are separate
runs, numbered in order; the n-th row of a host in every section is its n-th run.
Each column is mapped to the benchmark and metric name that bringup's own runs
use (`null call` -> lat_syscall_null "Simple syscall"), so that an imported
result lines up with a live one; columns without an equal live measurement keep
their own name.

A summary converted to Markdown keeps the tables as pipe tables (`| Host | OS |
Mhz | null call | ...`, a `|---|---|` line under the header, the section title a
`## Processor, Processes ...` heading above, `*Local*` turned into `Local`): the
cells are the columns.  A mailer that wrapped such a table (its lines are wider than
72-80 columns) cut the header and the rows at a space: a header continued on the
next lines before its `|---|` rule is joined, and so is a row continued on the next
lines (a piece that does not end with `|`, or fewer cells than the header's that the
next line completes).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from bringup.parse.lmbench_cells import ResultSet, Row, fill, is_value, parse_value, section, section_of
from bringup.parse.lmbench_columns import TEXT_COLUMNS
from bringup.parse.lmbench_pipe import pipe_table, read_pipe

TITLE_RE = re.compile(r"L M B E N C H\s+((?:\d\s*\.\s*)*\d)\s+S U M M A R Y")
# a title written by hand over condensed tables: "LMbench 2.0p2 average of 9 runs"
HAND_TITLE_RE = re.compile(r"^\s*(?:#+\s*|\*\*)?lmbench[- ]?v?(\d+(?:\.\d+)*(?:[a-z]+\d*)?)\b", re.IGNORECASE)
UNDERLINE_RE = re.compile(r"^\s*-{8,}\s*$")
COLUMNS_RE = re.compile(r"^\s*-+(?:\s+-+){2,}\s*$")


@dataclass
class Column:
    start: int
    end: int  # inclusive
    words: list[str] = field(default_factory=list)

    def overlap(self, a: int, b: int) -> int:
        return max(0, min(self.end, b) - max(self.start, a) + 1)


def _columns(dashes: str) -> list[Column]:
    return [Column(m.start(), m.end() - 1) for m in re.finditer(r"-+", dashes)]


def _assign(cols: list[Column], a: int, b: int, first: int = 0) -> int:
    """The column (index >= first) that the span a..b overlaps most, else the nearest."""
    best = max(range(first, len(cols)), key=lambda i: (cols[i].overlap(a, b), -abs(cols[i].start - a)))
    if cols[best].overlap(a, b):
        return best
    return min(range(first, len(cols)), key=lambda i: min(abs(cols[i].start - b), abs(cols[i].end - a)))


def _headers(cols: list[Column], heads: list[str]) -> list[str]:
    """Each column's header words, top to bottom; a two-word group straddling two
    columns ("0K File" over "Create Delete") labels every column it spans."""
    for line in heads:
        words = [(m.start(), m.end() - 1, m.group()) for m in re.finditer(r"\S+", line)]
        groups: list[list[tuple[int, int, str]]] = []
        for w in words:  # words one space apart form a group
            if groups and w[0] - groups[-1][-1][1] == 2:
                groups[-1].append(w)
            else:
                groups.append([w])
        for g in groups:
            spans = [[i for i, c in enumerate(cols) if c.overlap(a, b)] for a, b, _ in g]
            # a two-word label centred over two columns; a longer run of words one space
            # apart is one word per column, shifted (a wider OS column moves the header)
            if len(g) == 2 and any(len(s) > 1 for s in spans):
                covered = range(min(min(s) for s in spans if s), max(max(s) for s in spans if s) + 1)
                label = " ".join(t for _, _, t in g)
                for i in covered:
                    cols[i].words.append(label)
                continue
            for a, b, t in g:
                cols[_assign(cols, a, b)].words.append(t)
    return [" ".join(c.words) for c in cols]


def parse_summary(lines: list[str]) -> dict | None:
    """The summary tables in these lines (tabs expanded, quoting taken off), or None
    when there are none."""
    version = title_line = None
    sets: dict[tuple[str, str, int], ResultSet] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        t = TITLE_RE.search(line) or (HAND_TITLE_RE.match(line) if not sets else None)
        if t and version is None:
            version, title_line = re.sub(r"\s", "", t.group(1)), i + 1
        if UNDERLINE_RE.match(line) and i > 0:
            i = _readsection(lines, i, sets)
        elif pipe_table(lines, i):
            i = read_pipe(lines, i, sets)
        elif _ruleless_title(lines, i):
            i = _read_ruleless(lines, i, sets)
        i += 1
    if not sets:
        return None
    return {
        "format": "summary",
        "lmbench_version": version,
        "title_line": title_line,
        "results": [
            {
                "host": s.host,
                "os": s.os,
                "run": s.run,
                "line": s.line,
                "params": s.params,
                "measured": bool(s.benchmarks),
                "benchmarks": s.benchmarks,
                "not_measured": s.not_measured,
            }
            for s in sets.values()
        ],
    }


def _readsection(lines: list[str], u: int, sets: dict) -> int:
    """The section whose title underline is lines[u]; returns the index of its last line."""
    title = next((lines[j] for j in (u - 1, u - 2) if j >= 0 and lines[j].strip() and "WARNING" not in lines[j]), "")
    found = _head_lines(lines, u)
    if found is None:
        return u
    heads, j = found
    rule = lines[j]
    if j + 1 < len(lines) and _wrapped(lines[j + 1]) and DASHES_RE.match(lines[j + 1]):
        j, rule = j + 1, f"{rule} {lines[j + 1]}"  # a mailer wrapped the column rule
    cols = _columns(rule)
    if len(cols) < 3 and not (len(cols) == 2 and _labelled(lines, j + 1, cols)):
        return u
    first = 1 if _labelled(lines, j + 1, cols) else 2
    heads = _unwrap_heads(heads, len(rule))
    if first == 2:
        cols = _split_merged(cols, heads[0], lines[j + 1 : j + 41])
    names = _headers(cols, heads)
    return _read_rows(lines, j + 1, cols, names, title, sets, first)


def _read_rows(
    lines: list[str], j: int, cols: list[Column], names: list[str], title: str, sets: dict, first: int
) -> int:
    """The rows of a table from lines[j] on into `sets`; the index of its last row."""
    where = section_of(title)
    kind = where[0]
    if kind == "fs":  # "0K    File" spread over "Create  Delete" (no dashes to group them)
        for i in range(first, len(names) - 1):
            a, b = re.match(r"(\d+K) (Create|Delete)$", names[i]), re.match(r"File (Create|Delete)$", names[i + 1])
            if a and b:
                names[i], names[i + 1] = f"{a.group(1)} File {a.group(2)}", f"{a.group(1)} {names[i + 1]}"
    seen: dict[tuple[str, str | None], int] = {}
    k = j - 1
    for k, row in _rows(lines, j, cols, names, first):
        host, os_, cells = row
        seen[(host, os_)] = seen.get((host, os_), 0) + 1
        key = (host, os_, seen[(host, os_)])
        s = sets.setdefault(key, ResultSet(host, os_, seen[(host, os_)], k + 1))
        fill(s, names, cells, k + 1, where, first)
    return k


def _labelled(lines: list[str], k: int, cols: list[Column]) -> bool:
    """Whether the table's rows hold a label (a kernel, a configuration) then values
    only, no Host and OS columns (`2.5.68   243   979   4401` under a `kernel` header)."""
    toks = [m for m in re.finditer(r"\S+", lines[k])] if k < len(lines) else []
    return len(toks) >= 2 and all(is_value(m.group()) for m in toks[1:]) and toks[1].start() > cols[0].end


def _ruleless_title(lines: list[str], i: int) -> bool:
    """Whether lines[i] is a section title of a table without dashed rules, its
    header lines and then rows right under it (tables condensed by hand, such as the
    "average of N runs" of kernel comparisons on linux-kernel)."""
    line = lines[i]
    if not line[:1].strip() or section(line)[0] == "other" or "is better" not in line.lower():
        return False
    nxt = lines[i + 1] if i + 1 < len(lines) else ""
    return bool(nxt.strip()) and not DASHES_RE.match(nxt.strip())


def _label_row(line: str) -> list[re.Match[str]] | None:
    """The tokens of a row of a table without rules: a label at the margin, then values."""
    toks = list(re.finditer(r"\S+", line))
    if len(toks) >= 3 and toks[0].start() == 0 and all(is_value(m.group()) for m in toks[1:]):
        return toks
    return None


def _read_ruleless(lines: list[str], t: int, sets: dict) -> int:
    """A section without dashed rules from its title at lines[t]: the header lines
    under it, then rows of a label and values; the columns are where the values are."""
    view = _joined(lines, t + 1, 12)
    heads: list[str] = []
    j = 0
    while j < len(view) and _label_row(view[j][1]) is None:
        if not view[j][1].strip() or len(heads) == 3:
            return t
        heads.append(view[j][1])
        j += 1
    rows = []
    for _, line in view[j:]:
        toks = _label_row(line)
        if toks is None:
            break
        rows.append(toks)
    if not heads or not rows:
        return t
    n = max(len(r) for r in rows)
    full = [r for r in rows if len(r) == n]
    cols = [Column(0, max(r[0].end() - 1 for r in rows))]
    cols += [Column(min(r[i].start() for r in full), max(r[i].end() - 1 for r in full)) for i in range(1, n)]
    if any(b.start <= a.end for a, b in zip(cols, cols[1:], strict=False)):
        return t  # values of neighbouring columns overlap: not one table
    return _read_rows(lines, view[j][0], cols, _headers(cols, heads), lines[t], sets, 1)


def _joined(lines: list[str], k: int, n: int) -> list[tuple[int, str]]:
    """Up to n lines from lines[k] on, (index, text), each with the tail a mailer
    wrapped onto the next line joined back."""
    out: list[tuple[int, str]] = []
    while k < len(lines) and len(out) < n:
        line, step = lines[k], 1
        if k + 1 < len(lines) and len(line) >= 60 and _wrapped(lines[k + 1]) and _label_row(lines[k + 1]) is None:
            line, step = f"{line} {lines[k + 1]}", 2
        out.append((k, line))
        k += step
    return out


def _split_merged(cols: list[Column], head: str, below: list[str]) -> list[Column]:
    """Columns whose rule ran two together ("--------------" under "16p/16K 16p/64K", the
    rows holding two values there) split at the header's words."""
    rows: list[list[int]] = []
    for n, line in enumerate(below):  # the table's rows: value tokens after host and OS
        toks = list(re.finditer(r"\S+", line))
        values = [m.group() for m in toks if m.start() >= cols[2].start]
        if not all(is_value(v) for v in values):
            break
        wrapped = _wrapped(line) and all(is_value(m.group()) for m in toks)
        if rows and wrapped and len(below[n - 1]) < cols[-1].end:
            rows[-1] += [len(below[n - 1]) + 1 + m.start() for m in toks]  # a row's wrapped end
        elif len(toks) >= 3:
            rows.append([m.start() for m in toks])
        else:
            break
    out: list[Column] = []
    for i, c in enumerate(cols):
        starts = [m.start() for m in re.finditer(r"\S+", head) if c.start <= m.start() <= c.end]
        counts = [sum(c.start <= a <= c.end for a in row) for row in rows]
        if i < 2 or len(starts) < 2 or not counts or max(counts) != len(starts):
            out.append(c)
            continue
        bounds = [c.start, *starts[1:]]
        ends = [b - 2 for b in starts[1:]] + [c.end]
        out.extend(Column(a, b) for a, b in zip(bounds, ends, strict=True))
    return out


def _head_lines(lines: list[str], u: int) -> tuple[list[str], int] | None:
    """The header lines after a title's underline and the index of the column rule
    under them, or None when no table follows."""
    heads: list[str] = []
    j = u + 1
    while j < len(lines) and len(heads) < 6:
        if COLUMNS_RE.match(lines[j]):
            return (heads, j) if heads else None
        if UNDERLINE_RE.match(lines[j]):
            return None  # another section's title: this underline was a banner's
        if "WARNING" not in lines[j] and lines[j].strip():
            heads.append(lines[j])
        elif not lines[j] and heads:
            return None  # an empty line before any column rule: not a table (one of spaces is a header's)
        j += 1
    return None


def _rows(lines: list[str], k: int, cols: list[Column], names: list[str], first: int = 2) -> Iterator[tuple[int, Row]]:
    """(index, (host, OS, cells)) of each data row from lines[k] on, a wrapped row's
    end joined back, past comments and blank lines inside the table."""
    while k < len(lines):
        row = _row(lines[k], cols, names, first) if lines[k].strip() else None
        step = 1
        if row is not None and k + 1 < len(lines) and _wrapped(lines[k + 1]) and len(lines[k]) < cols[-1].end:
            longer = _row(f"{lines[k]} {lines[k + 1]}", cols, names, first)  # the rest of a wrapped row
            if longer is not None and len(longer[2]) >= len(row[2]):
                row, step = longer, 2
        if row is None:
            nxt = _next_row(lines, k, cols, names, first)
            if nxt is None or nxt == k:
                return
            k = nxt
            continue
        yield k, row
        k += step


DASHES_RE = re.compile(r"^-+(?:\s+-+)*\s*$")
NOISE = " \t\ufffd"  # what a blank line may hold


def _wrapped(line: str) -> bool:
    """Whether a line looks like the rest of a table line a mailer wrapped (at 72-80
    columns): short, at the margin, a few words or values."""
    lead = len(line) - len(line.lstrip())
    return 0 < len(line.strip()) <= 30 and lead <= 8 and len(line.split()) <= 4


def _unwrap_heads(heads: list[str], width: int) -> list[str]:
    """Header lines with a wrapped tail ("sh" of "... exec sh") joined back."""
    out: list[str] = []
    for h in heads:
        if out and _wrapped(h) and len(out[-1]) < width - 1 and not DASHES_RE.match(h):
            out[-1] = f"{out[-1]} {h}"
        else:
            out.append(h)
    return out


def _row(line: str, cols: list[Column], names: list[str], first: int = 2) -> Row | None:
    """(host, OS, column index -> token) of a data row, or None when it is not one.
    A host name longer than its column (`example-vm`) pushes the whole row right.
    `first` 1: the row has one label column (taken as the host; no OS), values after it."""
    lead = re.match(r"\s*(\S+)", line)
    if not lead:
        return None
    shift = max(0, lead.end() - 1 - cols[0].end)
    host = lead.group(1) if shift else line[cols[0].start : cols[0].end + 1].strip()
    os_ = line[cols[1].start + shift : cols[1].end + 1 + shift].strip() if first == 2 else None
    if not host or os_ == "":
        return None
    cells: dict[int, str] = {}
    text_from = next((i for i in range(first, len(cols)) if names[i].lower() in TEXT_COLUMNS), None)
    start = cols[first - 1].end + 1 + shift
    for m in re.finditer(r"\S+", line[start:]):
        a, b = m.start() + start - shift, m.end() - 1 + start - shift
        i = _assign(cols, a, b, first=first) if len(cols) > first else first - 1
        if names[i].lower() in TEXT_COLUMNS or (text_from is not None and i > text_from and i == len(cols) - 1):
            cells[i] = f"{cells[i]} {m.group()}" if i in cells else m.group()
            continue
        while i in cells and i + 1 < len(cols):  # an overflowing value pushed the next one on
            i += 1
        if i in cells:
            return None
        cells[i] = m.group()
    for i, tok in cells.items():
        if names[i].lower() not in TEXT_COLUMNS:
            try:
                parse_value(tok)
            except ValueError:
                return None
    return host, os_, cells


def _next_row(lines: list[str], k: int, cols: list[Column], names: list[str], first: int = 2) -> int | None:
    """The index of the next data row from k on, past a blank line or a '#' comment
    someone added inside the table; None when the table has ended.  A line of nothing
    but bytes that were not text (U+FFFD: serial noise on an empty line) is blank."""
    for j in range(k, min(k + 4, len(lines))):
        if lines[j].strip(NOISE) and not lines[j].lstrip().startswith("#"):
            return j if _row(lines[j], cols, names, first) is not None else None
    return None
