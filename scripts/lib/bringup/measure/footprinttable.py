"""The footprint's tables on the terminal: the footprint (render_footprint) and the
lmbench metrics (render_lmbench) of each kernel, with deltas against the first."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bringup.measure.footprintrecords import KernelFootprint


def render_footprint(board: str, results: dict[str, KernelFootprint]) -> str:
    kern = list(results)
    rows = [
        ("Kernel Code + Data", "kernel_code_data_kb"),
        ('total "free"', "total_free_kb"),
        ("Available for malloc()", "malloc_kb"),
    ]
    out = [
        f"Footprint for {board} (ramdisk root, {results[kern[0]].footprint.memory_mb} MB RAM)",
        "",
        "| | " + " | ".join(kern) + " | " + " | ".join(f"Delta {k}" for k in kern[1:]) + " |",
        "|---" * (1 + 2 * len(kern) - 1) + "|",
    ]
    for label, key in rows:
        vals = [getattr(results[k].footprint, key) for k in kern]
        cells = [f"{v} kB" if v is not None else "-" for v in vals]
        deltas = []
        for v in vals[1:]:
            if v is None or not vals[0]:
                deltas.append("n/a")
            else:
                d = v - vals[0]
                deltas.append(
                    f"{'+' if d >= 0 else '-'} {abs(d) / vals[0] * 100:.0f} % = {'+' if d >= 0 else '-'} {abs(d)} kB"
                )
        out.append(f"| {label} | " + " | ".join(cells) + " | " + " | ".join(deltas) + " |")
    return "\n".join(out) + "\n"


def render_lmbench(results: dict[str, KernelFootprint]) -> str:
    kern = list(results)
    lms = {k: results[k].lmbench for k in kern}
    missing = [k for k in kern if not lms[k].measured]
    out = []
    for k in missing:
        out.append(f"lmbench {k}: not measured ({lms[k].reason})")
    measured = [k for k in kern if lms[k].measured]
    if not measured:
        return "\n".join(out) + "\n"
    table: dict[str, dict[str, dict]] = {}
    for k in measured:
        for b in lms[k].benchmarks.values():
            for m in b.metrics:
                table.setdefault(b.group, {}).setdefault(m.name, {"unit": m.unit, "better": m.better})[k] = m.value
    for group, metrics in table.items():
        out += [
            "",
            f"{group}:",
            "| metric | unit | better | "
            + " | ".join(measured)
            + " | "
            + " | ".join(f"Delta {k}" for k in measured[1:])
            + " |",
            "|---" * (3 + 2 * len(measured) - 1) + "|",
        ]
        for name, v in metrics.items():
            vals = [v.get(k) for k in measured]
            deltas = []
            for x in vals[1:]:
                if x is None or not vals[0]:
                    deltas.append("n/a")
                else:
                    d = (x - vals[0]) / vals[0] * 100
                    deltas.append(f"{'+' if d >= 0 else '-'} {abs(d):.0f} %")
            out.append(
                f"| {name} | {v['unit']} | {v['better']} | "
                + " | ".join("-" if x is None else f"{x:g}" for x in vals)
                + " | "
                + " | ".join(deltas)
                + " |"
            )
    return "\n".join(out) + "\n"
