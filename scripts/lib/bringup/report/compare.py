"""Compare any two build records: two kernels of one board, one kernel on two
boards, or two runs made on different days (copies of logs/ kept elsewhere).

A record is named by its path (build.json, or the directory holding it) or
as <board>/<kernel> under the logs directory."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from bringup import records
from bringup.errors import BringupError
from bringup.parse import sizediff
from bringup.report import buildtable as buildreport


def resolve(ref: str, logs: Path) -> Path:
    p = Path(ref)
    if p.is_file():
        return p
    if p.is_dir() and (p / "build.json").is_file():
        return p / "build.json"
    q = Path(logs) / ref / "build.json"
    if q.is_file():
        return q
    raise BringupError(
        f"compare: {ref!r} is neither a build.json, a directory holding one, nor <board>/<kernel> under {logs}"
    )


def compare(a_file: Path, b_file: Path) -> dict:
    a = records.read_json(a_file, "bringup.build")
    b = records.read_json(b_file, "bringup.build")
    label_a = f"{a['board']}/{a['kernel']}"
    label_b = f"{b['board']}/{b['kernel']}"
    if label_a == label_b:
        label_a, label_b = f"{label_a} ({a.get('finished', '?')})", f"{label_b} ({b.get('finished', '?')})"
    t = buildreport.table([a, b])
    out = {
        "a": {"label": label_a, "record": str(a_file), "kernelrelease": a["kernelrelease"], "ccache": a.get("ccache")},
        "b": {"label": label_b, "record": str(b_file), "kernelrelease": b["kernelrelease"], "ccache": b.get("ccache")},
        "rows": [
            {
                "metric": r["label"],
                "unit": r["unit"],
                "a": r["values"][0],
                "b": r["values"][1],
                "delta_pct": r["deltas"][0],
            }
            for r in t["rows"]
        ],
    }
    va, vb = (Path(f).parent / r["artifacts"].get("vmlinux", "") for f, r in ((a_file, a), (b_file, b)))
    if va.is_file() and vb.is_file():
        out["symbols"] = sizediff.diff(sizediff.symbols(va), sizediff.symbols(vb))
    ca, cb = (Path(f).parent / r["artifacts"].get("config", "") for f, r in ((a_file, a), (b_file, b)))
    if ca.is_file() and cb.is_file():
        out["config"] = sizediff.config_diff(ca.read_text(), cb.read_text())
    return out


def render(c: dict, top: int = 20) -> str:
    w = max(len(r["metric"]) for r in c["rows"])
    lines = [
        f"A = {c['a']['label']} ({c['a']['kernelrelease']}), B = {c['b']['label']} ({c['b']['kernelrelease']})",
        "",
        f"{'':<{w}} {'A':>12} {'B':>12} {'Delta':>8}",
    ]
    for r in c["rows"]:
        lines.append(
            f"{r['metric']:<{w}} {r['a']:>10.1f}{r['unit']:<2} {r['b']:>10.1f}{r['unit']:<2} "
            f"{buildreport.fmt_delta(r['delta_pct']):>8}"
        )
    hits = [((r.get("ccache") or {}).get("hit_rate")) for r in (c["a"], c["b"])]
    if any(h is not None for h in hits):
        lines.append(
            f"{'ccache hits':<{w}} "
            + " ".join(f"{'-' if h is None else f'{h * 100:.0f}%':>12}" for h in hits)
            + "   (compare times only between similar hit rates)"
        )
    if "symbols" in c:
        lines += [
            "",
            "Symbols (bloat-o-meter style, from the two vmlinux symbol tables):",
            sizediff.render(c["symbols"], top).rstrip(),
        ]
    if "config" in c:
        lines += ["", sizediff.render_config_diff(c["config"], top).rstrip()]
    return "\n".join(lines) + "\n"


def to_csv(c: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["metric", "unit", c["a"]["label"], c["b"]["label"], "delta_pct"])
    for r in c["rows"]:
        w.writerow(
            [
                r["metric"],
                r["unit"],
                f"{r['a']:.3f}",
                f"{r['b']:.3f}",
                "" if r["delta_pct"] is None else f"{r['delta_pct']:.2f}",
            ]
        )
    return buf.getvalue()


def to_json(c: dict) -> str:
    return json.dumps(c, indent=2) + "\n"
