"""Boot timing on the terminal (seed 002's table): each run's line as it ends (run_line)
and the milestone table of a summary (render_table)."""

from __future__ import annotations

from bringup import stats
from bringup.boot.timingsummary import clock_time, on_guest_clock, reference
from bringup.parse import milestones as ms


def run_line(r: dict, rnd: int, limit: int, rules: ms.Rules, on: str = "") -> str:
    if r["status"] != "ok":
        return f"  run {rnd}/{limit} {r['kernel']}{on}: FAILED: {r['error']}"
    ref_name, _ = reference(r, rules, on_guest_clock(r))
    m = r["milestones"]
    parts = []
    for x in rules.flagged("progress"):
        t = clock_time(r, m[x.name], rules) if x.name in m else None
        if t is not None:
            parts.append(f"{x.name} {t:.3f}s" if on_guest_clock(r) else f"{x.name} {t:.2f}s")
    return f"  run {rnd}/{limit} {r['kernel']}{on}: ok ({', '.join(parts)}; from {ref_name})"


def _delta_cell(summary: dict, base: str, k: str, name: str, med0: float | None, med: float | None) -> str:
    """One delta of the boot table: percent against the base kernel and the test's mark
    (paired by round when both kernels' runs carry their rounds)."""
    if med is None or med0 in (None, 0):
        return "n/a"
    assert med0 is not None
    d = (med - med0) / med0 * 100
    a = summary["kernels"][base]["milestones"].get(name, {})
    b = summary["kernels"][k]["milestones"].get(name, {})
    ra, rb = a.get("rounds"), b.get("rounds")
    va, vb = a.get("values") or [], b.get("values") or []
    if ra and rb and len(ra) == len(va) and len(rb) == len(vb):
        bmap = dict(zip(rb, vb, strict=True))
        pairs = [(x, bmap[r]) for r, x in zip(ra, va, strict=True) if r in bmap]
        test = stats.t_test([x for x, _ in pairs], [y for _, y in pairs], paired=True)
    else:
        test = stats.t_test(va, vb, paired=False)  # the summary's tests (stats.compare), uncorrected here
    mark = "" if test is None else " *" if test["p"] < stats.ALPHA else " (n.s.)"
    return f"{'+' if d >= 0 else '-'} {abs(d):.0f} %{mark}"


def _guest_delta(med0: float | None, med: float | None) -> str:
    if med is None or med0 in (None, 0):
        return "n/a"
    assert med0 is not None
    d = (med - med0) / med0 * 100
    return f"{'+' if d >= 0 else '-'} {abs(d):.1f} %"


def render_table(summary: dict, rules: ms.Rules) -> str:
    kern = list(summary["kernels"])
    refs = {v["reference"] for v in summary["kernels"].values() if v["reference"]}
    guest = (summary.get("clock") or {}).get("kind") == "instructions"
    heads = ["", *kern, *(["Delta"] if len(kern) == 2 else [f"Delta {k}" for k in kern[1:]])]
    rows = _rows(summary, rules, refs, guest)
    head = (
        "; the instruction clock is deterministic: a delta is a measured difference, judged in the "
        "report against the A/A floor (docs/clock.md)"
        if guest
        else "; ± is the 95 % confidence half-width; * marks a delta significant at p < 0.05 "
        "(paired t-test of log ratios over the rounds, else Welch's t-test; uncorrected: the report "
        "corrects for the number of tests), (n.s.) one that is not"
    )
    out = [
        f"Boot timing for {summary['board']} ({summary.get('path')}): medians of "
        + ", ".join(f"{k} n={summary['kernels'][k]['ok']}" for k in kern)
        + head,
        f"Time from the {_ref_label(summary, rules, refs, guest)}:",
        "",
        *_grid(heads, rows),
        "",
        *_notes(summary),
    ]
    return "\n".join(out) + "\n"


def _ref_label(summary: dict, rules: ms.Rules, refs: set[str], guest: bool) -> str:
    """What the table's times count from."""
    ref = rules.reference()
    ns = (summary.get("clock") or {}).get("ns_per_instruction")
    return (
        f"kernel's clock zero: printk times on the instruction clock ({ns} ns per instruction)"
        if guest
        else f"{ref.label} (the bootloader's load command)"
        if ref is not None and refs == {ref.name}
        else "QEMU start / power-on"
        if refs == {"t0"}
        else "(no successful run)"
        if not refs
        else "mixed references"
    )


def _rows(summary: dict, rules: ms.Rules, refs: set[str], guest: bool) -> list[list[str]]:
    """A row per milestone shown: each kernel's median, and the deltas against the first kernel."""
    kern = list(summary["kernels"])
    rows = []
    for m in rules.shown(refs):
        cells, meds = [], []
        for k in kern:
            cell, med = _cell(summary["kernels"][k]["milestones"].get(m.name), guest)
            cells.append(cell)
            meds.append(med)
        if all(c == "-" for c in cells):
            continue
        deltas = [
            _guest_delta(meds[0], v) if guest else _delta_cell(summary, kern[0], k, m.name, meds[0], v)
            for k, v in zip(kern[1:], meds[1:], strict=True)
        ]
        rows.append([f"... until {m.label}", *cells, *deltas])
    return rows


def _cell(st: dict | None, guest: bool) -> tuple[str, float | None]:
    """A kernel's cell of a milestone's row and its median."""
    if st and guest and st["printk"]:
        h = st["printk"]  # deterministic: the spread of the runs, not an interval
        spread = f" (spread {(h['max'] - h['min']) / h['median'] * 100:.2f} %)" if h["n"] > 1 and h["median"] else ""
        return f"{h['median']:.4f}s{spread}", h["median"]
    if st and not guest:
        h = st["host"]
        ci = f" ±{(h['ci95'][1] - h['ci95'][0]) / 2:.2f}" if h["ci95"] else ""
        return f"{h['median']:.2f}s{ci}", h["median"]
    return "-", None


def _grid(heads: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table, its columns padded: the first to the left, the others to the right."""
    widths = [max(len(r[i]) for r in [heads, *rows]) for i in range(len(heads))]
    out = ["| " + " | ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True)) + " |"]
    out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        out.append(
            "| "
            + " | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
            + " |"
        )
    return out


def _notes(summary: dict) -> list[str]:
    """A line per kernel under the table: the time hidden at [0.000000], the printk lag, failed runs."""
    out = []
    for k, v in summary["kernels"].items():
        h = v["hidden_at_zero_s"]
        lag = v["printk_lag_ms"]
        extra = []
        if h:
            extra.append(f"time hidden at [0.000000] (kernel printing before its clock ran): median {h['median']:.3f}s")
        if lag and lag["median"]:
            extra.append(f"printk lag median {lag['median']['median']:.1f} ms, p95 {lag['p95']['median']:.1f} ms")
        if v["failed"]:
            extra.append(
                f"{v['failed']} failed run(s), not in the statistics: "
                + "; ".join(f"{f['run_id']}: {f['error']}" for f in v["failures"][:3])
            )
        if extra:
            out.append(f"{k}: " + "; ".join(extra))
    return out
