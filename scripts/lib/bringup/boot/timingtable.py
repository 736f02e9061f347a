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


def _test_p(summary: dict, base: str, k: str, name: str) -> float | None:
    """The study's test of a milestone, kernel k against the base (stats.study_test: paired by
    round when both kernels' runs carry their rounds); its p, None when it cannot be tested."""
    a = summary["kernels"][base]["milestones"].get(name, {})
    b = summary["kernels"][k]["milestones"].get(name, {})
    t = stats.study_test(a.get("values") or [], b.get("values") or [], a.get("rounds"), b.get("rounds"))
    return None if t is None else t.p


def _delta_cell(med0: float | None, med: float | None, q: float | None) -> str:
    """One delta of the boot table: percent against the base kernel and the mark of its test
    after the table's correction (q: None when not tested)."""
    if med is None or med0 in (None, 0):
        return "n/a"
    assert med0 is not None
    d = (med - med0) / med0 * 100
    mark = "" if q is None else " *" if stats.claimed(q) else " (n.s.)"
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
        else "; ± is the 95 % confidence half-width; * marks a delta significant at q < 0.05 "
        f"(the study's test: {stats.RULE}; Benjamini-Hochberg over this table's tests), (n.s.) one that is not"
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
    """A row per milestone shown: each kernel's median, and the deltas against the first kernel
    (on the host clock marked by the study's test, Benjamini-Hochberg over the table's tests)."""
    kern = list(summary["kernels"])
    shown = []
    for m in rules.shown(refs):
        cells, meds = [], []
        for k in kern:
            cell, med = _cell(summary["kernels"][k]["milestones"].get(m.name), guest)
            cells.append(cell)
            meds.append(med)
        if not all(c == "-" for c in cells):
            shown.append((m, cells, meds))
    if guest:
        return [
            [f"... until {m.label}", *cells, *(_guest_delta(meds[0], v) for v in meds[1:])] for m, cells, meds in shown
        ]
    ps = [
        None if v is None or meds[0] in (None, 0) else _test_p(summary, kern[0], k, m.name)
        for m, _, meds in shown
        for k, v in zip(kern[1:], meds[1:], strict=True)
    ]
    qs = iter(stats.correct(ps))
    return [
        [f"... until {m.label}", *cells, *(_delta_cell(meds[0], v, next(qs)) for v in meds[1:])]
        for m, cells, meds in shown
    ]


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
