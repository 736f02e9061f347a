"""lmbench's summary tables converted to Markdown pipe tables (`| Host | OS | Mhz |
null call | ...` over `|---|---|`, the section title a heading above), also as a
mailer wrapped them (a header or a row cut at a space and continued on the next
lines).  Pure; parse/lmbench_summary.py finds the tables and calls read_pipe()."""

from __future__ import annotations

import re

from bringup.parse.lmbench_cells import ResultSet, Row, Section, fill, is_value, section, section_of
from bringup.parse.lmbench_columns import LMBENCH3_COLUMNS, TEXT_COLUMNS

PIPE_RULE_RE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+\|?\s*$")


def _cells(line: str) -> list[str]:
    """The cells of a Markdown pipe-table line."""
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") else inner
    return [c.strip() for c in inner.split("|")]


# the piece of a pipe-table rule a mailer wrapped ("|------|---" then "-----|-----|")
PIPE_RULE_PIECE_RE = re.compile(r"^\s*[-|: ]*-{3,}[-|: ]*$")
HEAD_PIECES = 3  # a header wrapped over at most this many lines


def _pipe_header(lines: list[str], i: int) -> tuple[str, int] | None:
    """The header of a Markdown pipe table at lines[i] (`| Host | OS | ...` over
    `|---|---|`; the outer pipes are optional), joined when a mailer wrapped it, and
    the index of its rule; None when lines[i] begins no pipe table."""
    if "|" not in lines[i] or PIPE_RULE_PIECE_RE.match(lines[i]):
        return None
    head = lines[i]
    for j in range(i + 1, min(i + 1 + HEAD_PIECES, len(lines))):
        if PIPE_RULE_RE.match(lines[j]):
            return head, j
        if not lines[j].strip() or PIPE_RULE_PIECE_RE.match(lines[j]) or lines[j].lstrip().startswith("#"):
            return None
        head = f"{head.rstrip()} {lines[j].strip()}"
    return None


def pipe_table(lines: list[str], i: int) -> bool:
    """Whether lines[i] is the header of a Markdown pipe table."""
    return _pipe_header(lines, i) is not None


def _pipe_rows(lines: list[str], k: int, width: int, outer: bool) -> tuple[list[tuple[int, list[str]]], int]:
    """The rows of a pipe table from lines[k] on, each with the index of its first line; a
    row a mailer wrapped is joined: a piece that does not end with its outer `|`, or one
    with fewer cells than the header's (`width`) that the next line's cells complete;
    and the index of the table's last line."""
    rows: list[tuple[int, list[str]]] = []
    while k < len(lines) and PIPE_RULE_PIECE_RE.match(lines[k]):
        k += 1  # the rest of a wrapped rule
    while k < len(lines) and "|" in lines[k] and lines[k].strip():
        start, line = k, lines[k]
        k += 1
        while k < len(lines) and lines[k].strip() and not lines[k].lstrip().startswith("#"):
            nxt, have, more = lines[k].strip(), len(_cells(line)), _cells(lines[k])
            cut = outer and not line.rstrip().endswith("|")  # the row's closing pipe is still to come
            fits = "|" in nxt and have < width and have + len(more) <= width + 1
            if not (cut or fits) or not all(not c or is_value(c) for c in more[1:]):
                break  # a complete row, or prose after the table
            line = f"{line.rstrip()} {nxt.strip()}"
            k += 1
        rows.append((start, _cells(line)))
    return rows, k - 1


def read_pipe(lines: list[str], h: int, sets: dict) -> int:
    """A pipe table from its header at lines[h]: its title is the heading or line above
    it; returns the index of its last line."""
    title = next((lines[j] for j in range(h - 1, max(-1, h - 4), -1) if lines[j].strip()), "")
    title = title.strip().lstrip("#").strip().strip("*").strip()
    kind = section(title)[0]
    found = _pipe_header(lines, h)
    if kind == "other" or found is None:
        return h  # a table under no lmbench section title: not the summary's
    head, rule = found
    heads = _cells(head)
    first = 2 if len(heads) > 1 and heads[1].lower().startswith("os") else 1
    merged = first == 2 and heads[1].lower() == "os description"  # "Linux 5.15.16 x86_64" in one cell
    rows, last = _pipe_rows(lines, rule + 1, len(heads), head.lstrip().startswith("|"))
    for n, cells in rows:
        if len(cells) <= first or not cells[0]:
            continue  # a row cut before its values
        values = cells[first:]
        names = heads[first:]
        if kind in LMBENCH3_COLUMNS and len(names) != len(values) == len(LMBENCH3_COLUMNS[kind]):
            names = LMBENCH3_COLUMNS[kind]  # the converter split or merged header cells: lmbench's own order
        if merged:
            words = cells[1].split()
            cells[1] = " ".join(words[:2])  # lmbench's OS is "$SYS $RELEASE"
            names, values = ["Description", *names], [" ".join(words[2:]), *values]
        names = [*heads[:first], *names]
        row = dict(enumerate([*cells[:first], *values]))
        if any(
            v and names[i].lower() not in TEXT_COLUMNS and not is_value(v)
            for i, v in row.items()
            if first <= i < len(names)
        ):
            continue
        host, os_ = cells[0], cells[1] if first == 2 else None
        _put_row(sets, section_of(title), names, (host, os_, row), n, first)
    return max(last, rule)


def _put_row(sets: dict, where: Section, names: list[str], row: Row, k: int, first: int) -> None:
    """One pipe-table row (host, OS, cells) into its result set: the n-th row of a host and
    OS in a table is its n-th run (counted per table through `sets`' keys)."""
    host, os_, cells = row
    title = where[4]
    run = 1 + sum(1 for s in sets.values() if (s.host, s.os) == (host, os_) and title in s.sections)
    s = sets.setdefault((host, os_, run), ResultSet(host, os_, run, k + 1))
    s.sections.add(title)
    fill(s, names, cells, k + 1, where, first)
