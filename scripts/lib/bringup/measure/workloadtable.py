"""The workloads' table on the terminal (measure/workloads.py's records): each workload's
metrics, the median of each kernel, with deltas against the first kernel."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bringup import records


def render(results: dict[str, records.Workloads]) -> str:
    """The workloads as plain tables on the terminal: medians and deltas to the first kernel."""
    kern = list(results)
    lines: list[str] = []
    names = list(dict.fromkeys(n for k in kern for n in results[k].workloads))
    for n in names:
        lines += ["", f"{n}:"]
        for k in kern:
            w = results[k].workloads.get(n)
            if w is not None and not w.measured:
                lines.append(f"  {k}: not measured ({w.reason})")
        rows: dict[str, dict] = {}
        for k in kern:
            w = results[k].workloads.get(n)
            for m in w.metrics if w else []:
                rows.setdefault(m.name, {"unit": m.unit, "better": m.better})[k] = m.value
        for mname, r in rows.items():
            vals = [r.get(k) for k in kern]
            cells = " | ".join("-" if v is None else f"{v:g}" for v in vals)
            deltas = []
            for v in vals[1:]:
                deltas.append("n/a" if v is None or not vals[0] else f"{(v - vals[0]) / vals[0] * 100:+.1f} %")
            lines.append(f"  {mname} ({r['unit']}, {r['better']} is better): {cells} | {' | '.join(deltas)}")
    return "\n".join(lines) + "\n"
