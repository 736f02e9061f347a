"""Charts for the report, drawn with matplotlib as SVG text (inline in the HTML
page, so it needs no network and no JavaScript).  Each function takes the
report model's plain values and returns an SVG string, or None when there is
nothing to draw."""

from __future__ import annotations

import io
import re

import matplotlib

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402

plt.rcParams.update(
    {
        "svg.fonttype": "none",
        "font.size": 9,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "svg.hashsalt": "bringup",
    }
)
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
SECTION_COLORS = {
    "text": "#4c72b0",
    "rodata": "#8172b2",
    "data": "#dd8452",
    "init": "#55a868",
    "bss": "#c44e52",
    "other": "#937860",
}


def _svg(fig, chart_id: str, title: str) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    # ids unique per chart when several SVGs share one page
    svg = re.sub(r'id="([^"]+)"', rf'id="{chart_id}-\1"', svg)
    svg = re.sub(r"#([A-Za-z_][\w.-]*)\)", rf"#{chart_id}-\1)", svg)
    svg = re.sub(r'xlink:href="#([^"]+)"', rf'xlink:href="#{chart_id}-\1"', svg)
    return svg.replace("<svg ", f'<svg role="img" aria-label="{title}" data-chart="{chart_id}" ', 1)


def sizes(kernels: list[str], groups: dict[str, dict], images: dict[str, dict]) -> str | None:
    """Stacked bars of vmlinux section groups (kB) and grouped bars of image sizes."""
    if not kernels:
        return None
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 0.6 * len(kernels) + 1.6), gridspec_kw={"width_ratios": [3, 2]})
    order = [g for g in SECTION_COLORS if any(groups[k].get(g) for k in kernels)]
    left = [0.0] * len(kernels)
    y = list(range(len(kernels)))
    for g in order:
        vals = [groups[k].get(g, 0) / 1024 for k in kernels]
        ax1.barh(y, vals, left=left, color=SECTION_COLORS[g], label=g, height=0.6)
        left = [a + b for a, b in zip(left, vals, strict=True)]
    ax1.set_yticks(y, kernels)
    ax1.invert_yaxis()
    ax1.set_xlabel("vmlinux sections (kB)")
    ax1.legend(
        ncol=len(order),
        fontsize=7,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.35 - 0.05 * len(kernels)),
        frameon=False,
    )
    names = sorted({n for k in kernels for n in images[k]})
    w = 0.8 / max(1, len(names))
    for i, n in enumerate(names):
        ax2.barh(
            [v + i * w - 0.4 + w / 2 for v in y],
            [images[k].get(n, 0) / 1024 for k in kernels],
            height=w,
            label=n,
            color=COLORS[i % len(COLORS)],
        )
    ax2.set_yticks(y, kernels)
    ax2.invert_yaxis()
    ax2.set_xlabel("image files (kB)")
    ax2.legend(fontsize=7, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.35 - 0.05 * len(kernels)))
    fig.tight_layout()
    return _svg(fig, "chart-sizes", "vmlinux sections and image sizes per kernel")


def boot_timeline(
    kernels: list[str], milestones: list[dict], means: dict[str, dict], cis: dict[str, dict]
) -> str | None:
    """One horizontal bar per kernel, one segment per milestone interval
    (means over the runs); whiskers show each milestone's 95 % CI."""
    rows = [k for k in kernels if means.get(k)]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(9, 0.7 * len(rows) + 1.8))
    names = [m["name"] for m in milestones if any(m["name"] in means[k] for k in rows)]
    labels = {m["name"]: m["label"] for m in milestones}
    for yi, k in enumerate(rows):
        prev = 0.0
        for i, n in enumerate(names):
            t = means[k].get(n)
            if t is None:
                continue
            ax.barh(
                yi,
                t - prev,
                left=prev,
                height=0.5,
                color=COLORS[i % len(COLORS)],
                label=labels[n] if yi == 0 else None,
                edgecolor="white",
                linewidth=0.5,
            )
            lo, hi = cis[k].get(n) or (t, t)
            ax.errorbar([t], [yi], xerr=[[t - lo], [hi - t]], fmt="none", ecolor="black", capsize=3, lw=0.8)
            prev = t
    ax.set_yticks(range(len(rows)), rows)
    ax.invert_yaxis()
    ax.set_xlabel("seconds from the reference point (mean over the runs; whiskers: 95 % CI)")
    ax.legend(fontsize=7, ncol=3, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.45))
    fig.tight_layout()
    return _svg(fig, "chart-boot", "boot timeline per kernel")


def bw_mem_cascade(kernels: list[str], series: dict[str, dict[str, list[tuple[int, float]]]]) -> str | None:
    """MB/s against buffer size (log axis), one line per kernel, for rd, wr and bcopy
    (seed 004's cascade).  series[op][kernel] = [(bytes, MB/s), ...]."""
    ops = [op for op in ("rd", "wr", "bcopy") if any(series.get(op, {}).get(k) for k in kernels)]
    if not ops:
        return None
    fig, axes = plt.subplots(1, len(ops), figsize=(3.2 * len(ops), 2.8), squeeze=False)
    for ax, op in zip(axes[0], ops, strict=True):
        for i, k in enumerate(kernels):
            pts = sorted(series[op].get(k, []))
            if pts:
                ax.plot(
                    [p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, color=COLORS[i % len(COLORS)], label=k
                )
        ax.set_xscale("log", base=2)
        ticks = sorted({p[0] for k in kernels for p in series[op].get(k, [])})
        ax.set_xticks(ticks, [_size_label(x) for x in ticks])
        ax.minorticks_off()
        ax.set_title(f"bw_mem {op}")
        ax.set_xlabel("buffer size")
        ax.set_ylim(bottom=0)
        ax.grid(True, which="major", alpha=0.3)
    axes[0][0].set_ylabel("MB/s")
    axes[0][0].legend(fontsize=7, frameon=False)
    fig.tight_layout()
    return _svg(fig, "chart-bwmem", "bw_mem bandwidth against buffer size")


def _size_label(n: int) -> str:
    for unit, f in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= f and n % f == 0:
            return f"{n // f}{unit}"
    return str(n)


def initcall_timeline(kernel: str, calls: list[dict], levels: list[str], labelled: int = 8) -> str | None:
    """Bootgraph-style: each initcall a bar on the printk time axis (its median start and
    median duration over the runs), one row per initcall level (early ... late, or one
    row when the levels are not known), the slowest `labelled` ones named.
    calls: [{key, level, start_s, us}]."""
    pts = [c for c in calls if c.get("start_s") is not None and c.get("us") is not None]
    if not pts:
        return None
    rows = [lv for lv in levels if any((c.get("level") or "unknown") == lv for c in pts)] or ["unknown"]
    y = {lv: i for i, lv in enumerate(rows)}
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(rows) + 1.6))
    slow = {id(c) for c in sorted(pts, key=lambda c: -c["us"])[:labelled]}
    span = max(c["start_s"] + c["us"] / 1e6 for c in pts) - min(c["start_s"] for c in pts)
    thin = max(span / 600, 1e-5)  # the shortest initcalls still show as a tick
    for c in pts:
        yi = y.get(c.get("level") or "unknown", 0)
        is_slow = id(c) in slow
        ax.barh(
            yi,
            max(c["us"] / 1e6, thin),
            left=c["start_s"],
            height=0.6,
            color=COLORS[1] if is_slow else COLORS[0],
            alpha=0.9 if is_slow else 0.6,
            edgecolor="none",
        )
    for i, c in enumerate(sorted((c for c in pts if id(c) in slow), key=lambda c: c["start_s"])):
        yi = y.get(c.get("level") or "unknown", 0)
        ax.annotate(
            f"{c['key']} {c['us'] / 1000:.1f} ms",
            (c["start_s"] + c["us"] / 2e6, yi),
            xytext=(0, 8 + 8 * (i % 3)),
            textcoords="offset points",
            ha="center",
            fontsize=7,
            arrowprops={"arrowstyle": "-", "lw": 0.5, "color": "#666"},
        )
    ax.set_yticks(range(len(rows)), rows)
    ax.invert_yaxis()
    ax.set_ylim(len(rows) - 0.4, -0.9)
    ax.set_xlabel("printk time (s): median start and duration over the runs; red: the slowest")
    ax.set_title(f"{kernel}: initcalls", fontsize=9, loc="left")
    fig.tight_layout()
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", kernel)
    return _svg(fig, f"chart-initcalls-{safe}", f"initcall timeline of {kernel}")


def relative_performance(rel: dict) -> str | None:
    """Workload metrics as performance relative to the first kernel (1 = the same, >1
    better, whatever the metric's direction), a bar per other kernel with its 95 %
    interval (report/workloads.relative); the view Phoronix readers know."""
    rows, ks = rel.get("rows") or [], rel.get("kernels") or []
    if not rows or not ks:
        return None
    n = len(rows)
    fig, ax = plt.subplots(figsize=(6.4, 0.6 + 0.28 * n * max(1, len(ks)) ** 0.5 + 0.4))
    h = 0.8 / len(ks)
    for j, k in enumerate(ks):
        ys, xs, lo, hi = [], [], [], []
        for i, r in enumerate(rows):
            v = r["ratios"].get(k)
            if v is None:
                continue
            ys.append(n - 1 - i + (len(ks) - 1 - j - (len(ks) - 1) / 2) * h)
            xs.append(v["ratio"])
            lo.append(v["ratio"] - v["lo"])
            hi.append(v["hi"] - v["ratio"])
        ax.barh(ys, [x - 1 for x in xs], left=1, height=h * 0.9, color=COLORS[(j + 1) % len(COLORS)], label=k)
        ax.errorbar(xs, ys, xerr=[lo, hi], fmt="none", ecolor="#333", elinewidth=0.8, capsize=2)
    ax.axvline(1, color="#333", lw=0.8)
    ax.set_yticks(range(n), [r["label"] for r in reversed(rows)])
    ax.set_xlabel(f"performance relative to {rel.get('base')} (>1: better; bars: 95 % interval)")
    ax.legend(fontsize=7, frameon=False, loc="lower right")
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    return _svg(fig, "chart-workloads", "workload performance relative to the first kernel")
