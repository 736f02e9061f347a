"""The seed-002 build Results table from build records (never from logs).

One column per kernel, then a delta column per kernel after the first, in %
against the first kernel.  A build record that does not read is left out, in
one line that names the file and the field."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bringup import records
from bringup.errors import BringupError
from bringup.model.board import Board
from bringup.records import Build, BuildCost
from bringup.report import buildcost as costreport
from bringup.report import setcheck
from bringup.report.reading import optional, present
from bringup.report.tables import fmt_delta, pct

# (label, unit, the record field it shows, function record -> value)
ROWS: list[tuple[str, str, str, Callable[[Build], float]]] = [
    ("real", "s", "time.real", lambda r: r.time.real),
    ("user", "s", "time.user", lambda r: r.time.user),
    ("sys", "s", "time.sys", lambda r: r.time.sys),
    ("Compressed kernel", "kB", "sizes.compressed_image.bytes", lambda r: r.sizes.compressed_image.bytes / 1024),
    ("Uncompressed kernel", "kB", "sizes.berkeley.dec", lambda r: r.sizes.berkeley.dec / 1024),
    ("text", "kB", "sizes.berkeley.text", lambda r: r.sizes.berkeley.text / 1024),
    ("data", "kB", "sizes.berkeley.data", lambda r: r.sizes.berkeley.data / 1024),
    ("bss", "kB", "sizes.berkeley.bss", lambda r: r.sizes.berkeley.bss / 1024),
]
FIELDS = {label: field for label, _, field, _ in ROWS}


@dataclass(frozen=True)
class BuildRow:
    """One row of the build table: a value per kernel (None: not in the record) and the
    delta of each kernel after the first against the first, in % (None: not computable)."""

    label: str
    unit: str
    field: str  # the record field it shows (build.json's, or build-cost.json's kernels.<k>.)
    values: list[Any]
    deltas: list[float | None]


@dataclass(frozen=True)
class BuildTable:
    """The build records' rows (ROWS), one column per kernel."""

    kernels: list[str]
    rows: list[BuildRow]

    def as_dict(self) -> dict[str, Any]:
        """{'kernels': [...], 'rows': [{label, unit, field, values, deltas}]}: build-report --format json."""
        return asdict(self)


def hit_rate(r: Build) -> float | None:
    """Shown, never compared: builds with different ccache hit rates do not compare."""
    return r.ccache.hit_rate if r.ccache else None


NOTES = [
    "real/user/sys: the make process trees (configuration and image) of a build from an empty tree, "
    "monotonic wall clock; compare them only between builds with similar ccache hit rates.",
    "Compressed kernel: the compressed image file ({files}).",
    "Uncompressed kernel: vmlinux text+data+bss (Berkeley `size` dec), as in seed 002.",
]


COLD = [  # the build cost's rows (build-cost.json): medians of the rounds of cold builds
    ("cpu", "cold CPU, no ccache (user+sys)"),
    ("user", "cold user"),
    ("sys", "cold sys"),
    ("real", "cold wall, no ccache"),
]
COLD_NOTE = (
    "cold CPU/user/sys/wall: build-cost.json, every kernel built again without ccache, -j{jobs}, {rounds} rounds "
    "interleaved: medians of the rounds; deltas the paired geometric mean ratio against the first kernel "
    "(the comparison: make build-cost). real/user/sys below: the study's own build, one per kernel through "
    "ccache at the hit rate shown."
)


def cost_rows(cost: BuildCost, kernels: list[str]) -> list[BuildRow]:
    """The cold build cost's rows for these kernels; none when the record lacks one of them."""
    if not kernels or any(k not in cost.kernels for k in kernels):
        return []
    sub = cost.model_copy(update={"kernels": {k: cost.kernels[k] for k in kernels}})
    rows = []
    for metric, label in COLD:
        vals = {k: costreport.values(sub, k, metric) for k in kernels}
        med = [_median(list(vals[k].values())) for k in kernels]
        deltas = [costreport.ratio_pct(vals[kernels[0]], vals[k]) for k in kernels[1:]]
        rows.append(BuildRow(label, "s", f"runs[].{metric}", med, deltas))
    return rows


def _median(v: list[float]) -> float | None:
    import statistics

    return statistics.median(v) if v else None


def load_cost(board: Board, logs: Path, recs: list[Build]) -> BuildCost | None:
    """build-cost.json when it measured these builds (the same build keys), else None."""
    cost = optional(Path(logs) / board.name / "build-cost.json", BuildCost)
    if cost is None:
        return None
    keys = {r.kernel: r.key for r in recs}
    if any(k in keys and kc.build_key != keys[k] for k, kc in cost.kernels.items()):
        return None
    return cost


def load_records(board: Board, logs: Path, say=None) -> tuple[list[Build], list[str], list[str]]:
    """The board's build records, the kernels without one, and one line per record left out.
    With say (build-report): the records checked against their sets first (report/setcheck.py)."""
    if say is not None:
        bdir = Path(logs) / board.name
        files = [bdir / k.id / "build.json" for k in board.kernels] + [bdir / "build-cost.json"]
        setcheck.check("build-report", [f for f in files if present(f)], say)
    recs, missing, left_out = [], [], []
    for k in board.kernels:
        f = Path(logs) / board.name / k.id / "build.json"
        if not present(f):  # absent; a directory that cannot be read is Unreadable, not absent
            missing.append(k.id)
            continue
        try:
            recs.append(records.read(f, Build))
        except BringupError as e:
            left_out.append(str(e))
    if not recs and left_out:
        raise BringupError(f"board {board.name}: no readable build records; left out: {left_out[0]}")
    if not recs:
        raise BringupError(
            f"board {board.name}: no build records under {logs}/{board.name}/ (run: make build-all BOARD={board.name})"
        )
    return recs, missing, left_out


def table(recs: list[Build]) -> BuildTable:
    """The records' rows of values and deltas."""
    rows = []
    for label, unit, field, fn in ROWS:
        values = [fn(r) for r in recs]
        rows.append(BuildRow(label, unit, field, values, [pct(values[0], v) for v in values[1:]]))
    return BuildTable([r.kernel for r in recs], rows)


def render_text(
    recs: list[Build],
    board: str,
    missing: Sequence[str] = (),
    left_out: Sequence[str] = (),
    cost: BuildCost | None = None,
) -> str:
    t = table(recs)
    kern = t.kernels
    cold = cost_rows(cost, kern) if cost is not None else []
    heads = ["", *[f"{k}" for k in kern], *[f"Delta {k}" for k in kern[1:]]]
    if len(kern) == 2:
        heads[-1] = "Delta"
    rows = []
    for row in [*cold, *t.rows]:
        fmt = "{:.1f}{}".format
        rows.append([row.label, *[fmt(v, row.unit) for v in row.values], *[fmt_delta(d) for d in row.deltas]])
    hits = [hit_rate(r) for r in recs]
    rows.append(["ccache hits", *["-" if v is None else f"{v * 100:.0f}%" for v in hits], *["" for _ in hits[1:]]])
    widths = [max(len(str(r[i])) for r in [heads, *rows]) for i in range(len(heads))]
    names = ", ".join(f"{r.kernel} = {r.kernelrelease}" for r in recs)
    lines = [f"Build results for {board} (kernels: {names})", ""]
    line = (
        "| "
        + " | ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(heads, widths, strict=True)))
        + " |"
    )
    lines.append(line)
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        lines.append(
            "| "
            + " | ".join(
                str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
            )
            + " |"
        )
    files = ", ".join(sorted({r.sizes.compressed_image.file for r in recs}))
    lines.append("")
    if cold and cost is not None:
        lines.append(COLD_NOTE.format(jobs=cost.jobs, rounds=cost.rounds))
    lines += [n.format(files=files) for n in NOTES]
    for rec in recs:
        if rec.config.dropped:
            syms = ", ".join(d.symbol for d in rec.config.dropped)
            lines.append(f"warning: {rec.kernel}: fragment symbols that did not survive: {syms}")
    for m in missing:
        lines.append(f"not built: {m} (no build.json)")
    for why in left_out:
        lines.append(f"left out: {why}")
    return "\n".join(lines) + "\n"


def render_csv(recs: list[Build]) -> str:
    import csv
    import io

    t = table(recs)
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["metric", "unit", *t.kernels, *[f"delta_pct_{k}" for k in t.kernels[1:]]])
    for row in t.rows:
        w.writerow(
            [
                row.label,
                row.unit,
                *[f"{v:.3f}" for v in row.values],
                *["" if d is None else f"{d:.2f}" for d in row.deltas],
            ]
        )
    return buf.getvalue()
