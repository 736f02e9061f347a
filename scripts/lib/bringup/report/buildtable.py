"""The seed-002 build Results table from build records (never from logs).

One column per kernel, then a delta column per kernel after the first, in %
against the first kernel."""

from __future__ import annotations

from pathlib import Path

from bringup import records
from bringup.errors import BringupError
from bringup.model.board import Board

# (label, unit, function record -> value)
ROWS = [
    ("real", "s", lambda r: r["time"]["real"]),
    ("user", "s", lambda r: r["time"]["user"]),
    ("sys", "s", lambda r: r["time"]["sys"]),
    ("Compressed kernel", "kB", lambda r: r["sizes"]["compressed_image"]["bytes"] / 1024),
    ("Uncompressed kernel", "kB", lambda r: r["sizes"]["berkeley"]["dec"] / 1024),
    ("text", "kB", lambda r: r["sizes"]["berkeley"]["text"] / 1024),
    ("data", "kB", lambda r: r["sizes"]["berkeley"]["data"] / 1024),
    ("bss", "kB", lambda r: r["sizes"]["berkeley"]["bss"] / 1024),
]
# shown, never compared: builds with different ccache hit rates do not compare
INFO_ROWS = [
    ("ccache hits", "%", lambda r: (r.get("ccache") or {}).get("hit_rate")),
]

NOTES = [
    "real/user/sys: the make process trees (configuration and image) of a build from an empty tree, "
    "monotonic wall clock; compare them only between builds with similar ccache hit rates.",
    "Compressed kernel: the compressed image file ({files}).",
    "Uncompressed kernel: vmlinux text+data+bss (Berkeley `size` dec), as in seed 002.",
]


def load_records(board: Board, logs: Path) -> list[dict]:
    recs, missing = [], []
    for k in board.kernels:
        f = Path(logs) / board.name / k.id / "build.json"
        if f.exists():
            recs.append(records.read_json(f, "bringup.build"))
        else:
            missing.append(k.id)
    if not recs:
        raise BringupError(
            f"board {board.name}: no build records under {logs}/{board.name}/ (run: make build-all BOARD={board.name})"
        )
    return recs, missing


def delta_pct(base: float, value: float) -> float | None:
    if base == 0:
        return None
    return (value - base) / base * 100.0


def table(recs: list[dict]) -> dict:
    """Rows of values and deltas: {'kernels': [...], 'rows': [{label, unit, values, deltas}]}."""
    out = {"kernels": [r["kernel"] for r in recs], "rows": []}
    for label, unit, fn in ROWS:
        values = [fn(r) for r in recs]
        deltas = [delta_pct(values[0], v) for v in values[1:]]
        out["rows"].append({"label": label, "unit": unit, "values": values, "deltas": deltas})
    return out


def fmt_delta(d: float | None) -> str:
    if d is None:
        return "n/a"
    sign = "+" if d >= 0 else "-"
    return f"{sign} {abs(d):.0f} %"


def render_text(recs: list[dict], board: str, missing: list[str] = ()) -> str:
    t = table(recs)
    kern = t["kernels"]
    heads = ["", *[f"{k}" for k in kern], *[f"Delta {k}" for k in kern[1:]]]
    if len(kern) == 2:
        heads[-1] = "Delta"
    rows = []
    for row in t["rows"]:
        fmt = "{:.1f}{}".format
        rows.append(
            [row["label"], *[fmt(v, row["unit"]) for v in row["values"]], *[fmt_delta(d) for d in row["deltas"]]]
        )
    for label, unit, fn in INFO_ROWS:
        vals = [fn(r) for r in recs]
        rows.append([label, *["-" if v is None else f"{v * 100:.0f}{unit}" for v in vals], *["" for _ in vals[1:]]])
    widths = [max(len(str(r[i])) for r in [heads, *rows]) for i in range(len(heads))]
    names = ", ".join(f"{r['kernel']} = {r['kernelrelease']}" for r in recs)
    lines = [f"Build results for {board} (kernels: {names})", ""]
    line = "| " + " | ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(heads, widths))) + " |"
    lines.append(line)
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        lines.append(
            "| "
            + " | ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
            + " |"
        )
    files = ", ".join(sorted({r["sizes"]["compressed_image"]["file"] for r in recs}))
    lines.append("")
    lines += [n.format(files=files) for n in NOTES]
    for r in recs:
        if r.get("config", {}).get("dropped"):
            syms = ", ".join(d["symbol"] for d in r["config"]["dropped"])
            lines.append(f"warning: {r['kernel']}: fragment symbols that did not survive: {syms}")
    for m in missing:
        lines.append(f"not built: {m} (no build.json)")
    return "\n".join(lines) + "\n"


def render_csv(recs: list[dict]) -> str:
    import csv
    import io

    t = table(recs)
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["metric", "unit", *t["kernels"], *[f"delta_pct_{k}" for k in t["kernels"][1:]]])
    for row in t["rows"]:
        w.writerow(
            [
                row["label"],
                row["unit"],
                *[f"{v:.3f}" for v in row["values"]],
                *["" if d is None else f"{d:.2f}" for d in row["deltas"]],
            ]
        )
    return buf.getvalue()
