"""The report's memory and lmbench sections: the footprint rows (the kernel's own
`Memory:` line, total "free", what malloc() got), the lmbench tables by group with
each value linked to its raw output and each delta with the study's test (stats.study_test;
marked from the summary's corrected family: report/marks.py; on the instruction clock no test,
marked from the summary's decision against the A/A floor), and the bw_mem series for
the cascade chart."""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from bringup import stats
from bringup.records import Footprint, Lmbench
from bringup.report.model import LmbenchSection, MemorySection
from bringup.report.tables import delta, line_link

SIZE_RE = re.compile(r"^bw_mem_(rd|wr|bcopy) (\d+)([KMG]?)$")
UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


def memory(fp: dict[str, Footprint], kernels: list[str]) -> MemorySection:
    return MemorySection(footprint_rows=footprint_rows(fp, kernels))


def lmbench(lm: dict[str, Lmbench], kernels: list[str]) -> LmbenchSection:
    return LmbenchSection(lmbench_groups=lmbench_groups(lm, kernels), bw_mem=bw_mem(lm, kernels))


def _footprint_cell(k: str, r: Footprint, key: str) -> dict:
    cell: dict[str, Any] = {
        "kernel": k,
        "value": getattr(r, key),
        "link": f"../{k}/footprint.json",
        "title": f"footprint.json: {key}",
    }
    if key == "kernel_code_data_kb" and r.memory_line and r.run:
        ml = r.memory_line
        where = f"console.log line {ml.line}" if ml.line else "console.log"
        cell["link"] = line_link(f"../{k}/{r.run}/console.log", ml.line)
        cell["title"] = f"footprint run {PurePosixPath(r.run).name}, {where}: {ml.text}"
    if r.imported is not None:
        where = f"line {r.memory_line.line}" if r.memory_line and r.memory_line.line else "the log"
        cell["title"] = (
            f"imported from {PurePosixPath(r.imported.source).name}, {where}"
            if key == "kernel_code_data_kb"
            else "not in a boot log"
        )
    elif key == "malloc_kb" and r.mem_eat is not None:
        how = "malloc() failed" if r.mem_eat.completed else "the OOM killer ended it"
        cell["title"] = f"footprint.json: malloc_kb (mem_eat: {r.mem_eat.bytes} bytes when {how})"
    return cell


def footprint_rows(fp: dict[str, Footprint], kernels: list[str]) -> list[dict]:
    ks = [k for k in kernels if k in fp]
    rows = []
    for label, key in (
        ("Kernel Code + Data", "kernel_code_data_kb"),
        ('total "free"', "total_free_kb"),
        ("Available for malloc()", "malloc_kb"),
    ):
        cells = [_footprint_cell(k, fp[k], key) for k in ks]
        vals = [c["value"] for c in cells]
        deltas = [None if v is None or not vals[0] else {"pct": delta(vals[0], v), "kb": v - vals[0]} for v in vals[1:]]
        rows.append({"label": label, "cells": cells, "deltas": deltas})
    return rows


def _lmbench_cell(rec: Lmbench, k: str, row: dict, value: float | None) -> dict:
    """A value links to the raw lmbench output it was parsed from (the line its block
    begins on, as the record keeps it); the title names the record field."""
    cell: dict[str, Any] = {
        "kernel": k,
        "value": value,
        "link": f"../{k}/lmbench.json",
        "title": f"lmbench.json: benchmarks.{row['bench']}",
    }
    if not rec.run:
        return cell
    lines = row["raw_lines"].get(k) or []
    at = ", ".join(map(str, lines))
    if rec.imported is not None:
        kept = rec.imported.kept
        title = f"; imported from {PurePosixPath(rec.imported.source).name} " + (f"line {at}" if lines else "")
    else:
        kept = "lmbench.txt"
        where = f"lmbench.txt line {at}" if lines else "lmbench.txt"
        title = f"; raw output: {where}, block '@@@ BEGIN {row['bench']}'"
    runs = row["runs"].get(k) or []
    cell["link"] = line_link(f"../{k}/{rec.run}/{kept}", lines[0] if lines else None)
    cell["title"] += title + (f"; median of {runs}" if len(runs) > 1 else "")
    return cell


# benchmarks that print their one metric under a name that varies (the file it ran on):
# their rows join on the benchmark, so a summary's "Page fault" (an imported lmbench
# summary) stands beside a live run's "Pagefaults on /tmp/lmb.file"
ONE_METRIC = {"lat_pagefault"}


def _row_key(bench: str, name: str) -> str:
    return f"@{bench}" if bench in ONE_METRIC else name


def _lmbench_rows(lm: dict[str, Lmbench], measured: list[str]) -> dict[str, dict[str, dict]]:
    """group -> row key -> the metric's values, runs and raw lines per kernel."""
    groups: dict[str, dict[str, dict]] = {}
    for k in measured:
        for bname, b in lm[k].benchmarks.items():
            for m in b.metrics:
                row = groups.setdefault(b.group or "other", {}).setdefault(
                    _row_key(bname, m.name),
                    {
                        "name": m.name,
                        "unit": m.unit,
                        "better": m.better,
                        "bench": bname,
                        "values": {},
                        "runs": {},
                        "rounds": {},
                        "raw_lines": {},
                    },
                )
                row["values"][k] = m.value
                row["runs"][k] = m.values or [m.value]
                row["rounds"][k] = m.rounds
                row["raw_lines"][k] = b.raw_lines
    return groups


def _lmbench_delta(lm: dict[str, Lmbench], measured: list[str], r: dict, k: str, d: float | None) -> dict | None:
    if d is None:
        return None
    if lm[k].imported is not None or lm[measured[0]].imported is not None:
        return {"pct": d, "worse": None, "p": None, "significant": None}  # imported: side by side, never tested
    base = measured[0]
    if lm[k].clock.kind == "instructions" or lm[base].clock.kind == "instructions":
        # no test (one icount step would be claimed): the summary's deterministic finding marks the row
        return {"pct": d, "worse": (d > 0) == (r["better"] == "lower"), "p": None, "significant": None}
    # the study's test (paired by round, as the summary's); the summary's corrected family marks the row
    t = stats.study_test(r["runs"].get(base, []), r["runs"].get(k, []), r["rounds"].get(base), r["rounds"].get(k))
    return {
        "pct": d,
        "worse": (d > 0) == (r["better"] == "lower"),
        "p": None if t is None else t.p,
        "significant": None,
    }


def lmbench_groups(lm: dict[str, Lmbench], kernels: list[str]) -> dict:
    measured = [k for k in kernels if k in lm and lm[k].measured]
    out: dict = {
        "kernels": measured,
        "not_measured": {k: lm[k].reason for k in kernels if k in lm and not lm[k].measured},
        "missing": [k for k in kernels if k not in lm],
        "groups": [],
    }
    for g, rows in _lmbench_rows(lm, measured).items():
        rs = []
        for r in rows.values():
            vals = [r["values"].get(k) for k in measured]
            deltas = [
                _lmbench_delta(lm, measured, r, k, delta(vals[0], v))
                for k, v in zip(measured[1:], vals[1:], strict=True)
            ]
            cells = [_lmbench_cell(lm[k], k, r, v) for k, v in zip(measured, vals, strict=True)]
            rs.append({**r, "cells": cells, "deltas": deltas})
        out["groups"].append({"name": g, "rows": rs})
    return out


def bw_mem(lm: dict[str, Lmbench], kernels: list[str]) -> dict:
    series: dict = {}
    for k in kernels:
        if k not in lm or not lm[k].measured:
            continue
        for b in lm[k].benchmarks.values():
            for m in b.metrics:
                mm = SIZE_RE.match(m.name)
                if mm:
                    series.setdefault(mm.group(1), {}).setdefault(k, []).append(
                        (int(mm.group(2)) * UNITS[mm.group(3)], m.value)
                    )
    return series
