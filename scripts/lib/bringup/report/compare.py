"""Compare any two build records: two kernels of one board, one kernel on two
boards, or two runs made on different days (copies of logs/ kept elsewhere).

A record is named by its path (build.json, or the directory holding it) or
as <board>/<kernel> under the logs directory.  A record that does not read is
a one-line error; an artifact that cannot be used (missing, not ELF, outside
the record's directory) leaves its diff out, and the result says why."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from bringup import records
from bringup.errors import BringupError
from bringup.parse import sizediff
from bringup.records import Build
from bringup.report import buildtable as buildreport
from bringup.report import setcheck
from bringup.report.reading import present
from bringup.report.tables import fmt_delta


def resolve(ref: str, logs: Path) -> Path:
    """A build record named by its path, its directory or <board>/<kernel> under logs; a path
    that cannot be read is said so (Unreadable), never taken for an absent one."""
    p = Path(ref)
    for f in (p, p / "build.json", Path(logs) / ref / "build.json"):
        if present(f) and f.is_file():
            return f
    raise BringupError(
        f"compare: {ref!r} is neither a build.json, a directory holding one, nor <board>/<kernel> under {logs}"
    )


def check_sets(a_file: Path, b_file: Path, say) -> None:
    """The two records checked (they read; each is the file its set wrote), then the sets read
    said (report/setcheck.py)."""
    for f in (a_file, b_file):
        records.read(f, Build)
    setcheck.check("compare", [a_file, b_file], say)


def compare(a_file: Path, b_file: Path) -> dict:
    return compare_records(records.read(a_file, Build), Path(a_file), records.read(b_file, Build), Path(b_file))


def _artifact(f: Path, r: Build, name: str, left_out: list[str]) -> Path | None:
    """An artifact of a record, when it is a file inside the record's directory."""
    rel = r.artifacts.get(name)
    if rel is None:  # not kept: nothing to diff, nothing wrong
        return None
    try:
        p = records.artifact(f, rel, f"artifacts.{name}")
    except BringupError as e:
        left_out.append(str(e))
        return None
    if not present(p) or not p.is_file():  # absent; one that cannot be read is Unreadable
        left_out.append(f"{f}: field 'artifacts.{name}': {rel!r}: no such file")
        return None
    return p


def compare_records(a: Build, a_file: Path, b: Build, b_file: Path, diffs: dict | None = None) -> dict:
    """The two records' table, and the diffs of their artifacts: `diffs` when given (the
    report's, stored by build keys: report/sizediffs.py), else made from the artifacts."""
    label_a = f"{a.board}/{a.kernel}"
    label_b = f"{b.board}/{b.kernel}"
    if label_a == label_b:
        label_a, label_b = f"{label_a} ({a.finished})", f"{label_b} ({b.finished})"
    t = buildreport.table([a, b])
    out: dict = {
        "a": {"label": label_a, "record": str(a_file), "kernelrelease": a.kernelrelease, "ccache": _ccache(a)},
        "b": {"label": label_b, "record": str(b_file), "kernelrelease": b.kernelrelease, "ccache": _ccache(b)},
        "rows": [
            {
                "metric": r.label,
                "unit": r.unit,
                "a": r.values[0],
                "b": r.values[1],
                "delta_pct": r.deltas[0],
            }
            for r in t.rows
        ],
    }
    out.update(diffs if diffs is not None else artifact_diffs(a, a_file, b, b_file))
    return out


def artifact_diffs(a: Build, a_file: Path, b: Build, b_file: Path) -> dict:
    """The symbol diff of the two kept vmlinux files and the diff of the two kept .config
    files (`symbols`, `config`, each absent when not made), and `left_out`: why not."""
    out: dict = {}
    left_out: list[str] = []
    va, vb = (_artifact(f, r, "vmlinux", left_out) for f, r in ((a_file, a), (b_file, b)))
    if va and vb:
        try:
            out["symbols"] = sizediff.diff(sizediff.symbols(va), sizediff.symbols(vb))
        except ValueError as e:  # not ELF
            left_out.append(f"symbol diff left out: {e}")
    ca, cb = (_artifact(f, r, "config", left_out) for f, r in ((a_file, a), (b_file, b)))
    if ca and cb:
        try:
            out["config"] = sizediff.config_diff(ca.read_text(errors="replace"), cb.read_text(errors="replace"))
        except OSError as e:
            left_out.append(f".config diff left out: {e}")
    out["left_out"] = left_out
    return out


def _ccache(r: Build) -> dict | None:
    return r.ccache.model_dump() if r.ccache else None


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
            f"{fmt_delta(r['delta_pct']):>8}"
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
    for why in c.get("left_out", []):
        lines.append(f"left out: {why}")
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
