"""The report's build section: the build table (with the cold build cost's rows when
build-cost.json measured these builds), the section and image sizes, and the symbol
and .config diffs of each kernel against the first (report/sizediffs.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bringup import records
from bringup.parse import sizediff
from bringup.records import Build
from bringup.report import buildtable as buildreport
from bringup.report import compare, sizediffs
from bringup.report.inputs import Gathered
from bringup.report.model import BuildSection

SYMBOL_COUNTS = ("added", "removed", "grown", "shrunk", "up", "down", "total_before", "total_after")


def section(g: Gathered, top: int) -> BuildSection:
    bdir, inputs, kernels = g.bdir, g.inputs, g.kernels
    build = inputs.build
    cost = _build_cost(g.reader.read(bdir / "build-cost.json", records.BuildCost), build, inputs.left_out)
    ks = [k for k in kernels if k in build]
    return BuildSection(
        build_cost=cost,
        build_table=_build_table(build, kernels, cost),
        sizes={k: build[k].sizes.groups for k in ks},
        images={k: _images(build[k]) for k in ks},
        sizediff=_sizediffs(bdir, build, ks, top, inputs.left_out),
    )


def _images(r: Build) -> dict[str, int]:
    return {
        f"{img.file} ({n.split('_')[0]})": img.bytes
        for n, img in (
            ("compressed_image", r.sizes.compressed_image),
            ("uncompressed_image", r.sizes.uncompressed_image),
        )
        if img is not None
    }


def _build_cost(rec: records.BuildCost | None, build: dict[str, Build], left_out: list[str]) -> Any:
    """build-cost.json when it measured the builds the report shows (the same build keys);
    a kernel measured from another build leaves the record out, in one line."""
    if rec is None:
        return None
    for k, kc in rec.kernels.items():
        if k in build and kc.build_key != build[k].key:
            left_out.append(f"build-cost.json: kernel {k} was measured from another build (make build-cost)")
            return None
    return rec


def _row(r: buildreport.BuildRow, ks: list[str], link: str, title: str) -> dict:
    """A row of the build table: a cell per kernel, linked to its record (link and title: {k} is the kernel)."""
    return {
        "label": r.label,
        "unit": r.unit,
        "cells": [
            {"kernel": k, "value": v, "link": link.format(k=k), "title": title.format(k=k)}
            for k, v in zip(ks, r.values, strict=True)
        ],
        "deltas": [None if d is None else round(d, 1) for d in r.deltas],
    }


def _build_table(build: dict[str, Build], kernels: list[str], cost: records.BuildCost | None = None) -> list[dict]:
    ks = [k for k in kernels if k in build]
    if not ks:
        return []
    rows = []
    if cost is not None:
        for r in buildreport.cost_rows(cost, ks):
            title = f"build-cost.json: median of kernels.{{k}}.{r.field}, {cost.rounds} rounds"
            rows.append(_row(r, ks, "../build-cost.json", title))
    for r in buildreport.table([build[k] for k in ks]).rows:
        rows.append(_row(r, ks, "../{k}/build.json", f"build.json: {r.field}"))
    hits = [None if h is None else h * 100 for h in (buildreport.hit_rate(build[k]) for k in ks)]
    ccache = buildreport.BuildRow("ccache hits", "%", "ccache.hit_rate", hits, [None] * (len(ks) - 1))
    row = _row(ccache, ks, "../{k}/build.json", "build.json: ccache.hit_rate")
    return [*rows, {"label": "ccache hits", "unit": "%", "info": True, "cells": row["cells"], "deltas": row["deltas"]}]


def _sizediffs(bdir: Path, build: dict[str, Build], ks: list[str], top: int, left_out: list[str]) -> list[dict]:
    out = []
    for k in ks[1:]:
        a, b = ks[0], k
        made = sizediffs.diffs(bdir, a, build[a], b, build[b])
        c = compare.compare_records(build[a], bdir / a / "build.json", build[b], bdir / b / "build.json", made)
        left_out += [x for x in c["left_out"] if x not in left_out]
        entry = {"a": a, "b": b, "rows": c["rows"]}
        if "symbols" in c:
            s = c["symbols"]
            entry["symbols"] = {
                **{x: s[x] for x in SYMBOL_COUNTS},
                "grown_rows": [r for r in s["rows"] if r["delta"] > 0][:top],
                "shrunk_rows": [r for r in s["rows"] if r["delta"] < 0][:top],
                "text": sizediff.render(s, top),
            }
        if "config" in c:
            cd = c["config"]
            entry["config"] = {
                "added": cd["added"],
                "removed": cd["removed"],
                "changed": cd["changed"],
                "text": sizediff.render_config_diff(cd, 3 * top),
            }
        out.append(entry)
    return out
