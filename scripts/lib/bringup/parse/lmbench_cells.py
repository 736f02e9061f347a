"""The cells of lmbench's summary tables, whatever their layout (columns under a
dashed rule, a Markdown pipe table, a table without rules): a printed value
(`13.K`, `115.`, `-1`), a section title's kind, unit and direction, a column's
benchmark and metric name, and one row's cells put into its result set.  Pure;
parse/lmbench_summary.py and parse/lmbench_pipe.py read the tables."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bringup.parse.lmbench_columns import CTX_RE, GROUP_OF, METRICS, OPS_WORDS, PARAMS, SECTIONS

VALUE_RE = re.compile(r"^(\d+\.?\d*|\.\d+)([KM]?)$")


def parse_value(token: str) -> float | None:
    """'13.K' -> 13000.0, '115.' -> 115.0, '0.08K' -> 80.0; '-1' and '-' -> None.
    Raises ValueError for what is not an lmbench value."""
    if token in ("-1", "-", "-1.0", "-1.00"):
        return None
    m = VALUE_RE.match(token)
    if not m:
        raise ValueError(token)
    return round(float(m.group(1)) * {"": 1, "K": 1000, "M": 1000000}[m.group(2)], 6)


def is_value(token: str) -> bool:
    try:
        parse_value(token)
    except ValueError:
        return False
    return True


def param_value(tok: str) -> float | str | None:
    try:
        v = parse_value(tok)
    except ValueError:
        return tok
    return None if v is None else int(v) if v == int(v) else v


def section(title: str) -> tuple[str, str, str, str]:
    """(kind, group, unit, better) of a section title."""
    low = title.strip().lower()
    plain = low.replace("*", "")  # "*Local*" rendered from Markdown is "Local"
    kind, group = next(((k, g) for start, k, g in SECTIONS if plain.startswith(start.replace("*", ""))), ("other", ""))
    if "nanosecond" in low:
        unit = "ns"
    elif "microsecond" in low:
        unit = "us"
    elif "mb/s" in low or "megabytes" in low:
        unit = "MB/s"
    else:
        unit = ""
    better = "higher" if "bigger is better" in low or unit == "MB/s" else "lower"
    return kind, group or title.split(" - ")[0].strip(), unit, better


def metric(kind: str, head: str) -> tuple[str, str]:
    """(benchmark, metric name) of a column."""
    key = " ".join(head.lower().split())
    if (kind, key) in METRICS:
        return METRICS[(kind, key)]
    m = CTX_RE.match(key)
    if m and kind in ("ctx", "lat"):
        return f"lat_ctx_{m.group(2)}k", f"ctx {m.group(1)}p/{m.group(2)}K"
    if kind == "ops":
        words = [OPS_WORDS.get(w, w) for w in key.split()]
        return "lat_ops", " ".join(words)
    prefix = "remote " if kind in ("rlat", "rbw") else ""
    return f"summary_{kind}", prefix + head


@dataclass
class ResultSet:
    host: str
    os: str | None
    run: int
    line: int
    params: dict = field(default_factory=dict)
    benchmarks: dict = field(default_factory=dict)
    not_measured: list = field(default_factory=list)
    sections: set = field(default_factory=set)  # the pipe tables it has a row in


Section = tuple[str, str, str, str, str]  # kind, group, unit, better, the title in one line
Row = tuple[str, str | None, dict[int, str]]  # host, OS, column index -> printed value


def section_of(title: str) -> tuple[str, str, str, str, str]:
    kind, group, unit, better = section(title)
    return (kind, group, unit, better, " ".join(title.split()))


def fill(s: ResultSet, names: list[str], cells: dict[int, str], n: int, sec: Section, first: int = 2) -> None:
    """One row's cells into its result set: host properties, values, not-measured ones."""
    kind, group, unit, better, title = sec
    for i in range(first, len(names)):
        head, tok = names[i], cells.get(i, "")
        key = " ".join(head.lower().split())
        if not key:
            continue
        if key in PARAMS or kind == "params":
            value = param_value(tok) if tok else None
            if value is not None:  # "-1": not known
                s.params.setdefault(PARAMS.get(key, key.replace(" ", "_")), value)
            continue
        bench, name = metric(kind, head)
        b = s.benchmarks.get(bench)
        if kind == "lat" and b and any(m["name"] == name for m in b["metrics"]):
            continue  # the local-latency table repeats the 2p/0K context switch
        value = parse_value(tok) if tok else None
        entry = {"name": name, "column": head, "section": title, "line": n, "printed": tok}
        if value is None:
            s.not_measured.append({"bench": bench, **entry})
            continue
        b = s.benchmarks.setdefault(bench, {"group": GROUP_OF.get(bench, group), "rc": None, "metrics": []})
        b["metrics"].append(
            {"name": name, "value": value, "unit": unit, "better": better, "source": f"summary: {title}", **entry}
        )
