"""The management summary: findings generated from the records, in the voice of
seed 002 ("slow to build: +31 % real time", "compressed image +27 %").

Rules (docs/report.md says the same, for readers):
- Deterministic quantities (image and section sizes of a reproducible build,
  the kernel's own `Memory:` line, MemTotal) are stated as they are when they
  differ by at least SIZE_PCT %, else "about the same".
- Quantities measured several times per kernel (boot milestones over the runs,
  lmbench when run repeatedly) are stated as a difference only when a two-sided
  Mann-Whitney U test over the runs gives p < ALPHA.  Otherwise the finding reads
  "no significant difference (n=5)".
- Quantities measured once per kernel (build time, mem_eat, lmbench quick) cannot
  be tested: the finding gives the delta and says "one run each: not tested".

Each finding is a dict: kind (size|tested|untested), claim (the sentence),
significant (bool or None when not tested), and the numbers behind it.
"""

from __future__ import annotations

from bringup import records
from bringup.records import BootTiming, Build, Footprint, Lmbench
from bringup.records.boot import MilestoneStats
from bringup.records.measure import Metric
from bringup import stats
from bringup.report.tables import pct

ALPHA = 0.05
SIZE_PCT = 1.0
# build times compare only when both builds were (nearly) cold: a cold ccache still gives some hits
# (about 8-11 % for qemu-arm's two kernels: files the first build already compiled)
CCACHE_COLD = 0.25
CCACHE_GAP = 0.10


def signed(d: float) -> str:
    return f"{'+' if d >= 0 else '-'}{abs(d):.1f} %" if abs(d) < 10 else f"{'+' if d >= 0 else '-'}{abs(d):.0f} %"


def mag(d: float) -> str:
    """|d| as a percentage: one decimal under 10 %."""
    return f"{abs(d):.1f} %" if abs(d) < 10 else f"{abs(d):.0f} %"


def _run_values(st: MilestoneStats | None) -> list | None:
    """Per-run values of a milestone; a single run's median when older records kept none."""
    if st is None:
        return None
    if st.values:
        return st.values
    return [st.host.median] if st.host.n == 1 else None


def size_finding(what: str, a: float, b: float, unit: str, link: str = "") -> dict:
    d = pct(a, b)
    f = {
        "kind": "size",
        "what": what,
        "significant": None if d is None else abs(d) >= SIZE_PCT,
        "delta_pct": d,
        "a": a,
        "b": b,
        "unit": unit,
        "link": link,
    }
    if d is None:
        f["verdict"] = "not comparable"
    elif abs(d) < SIZE_PCT:
        f.update(verdict="about the same", detail=f"{signed(d)}, {a:.0f} → {b:.0f} {unit}")
    else:
        f.update(verdict=f"{signed(d)}, {'larger' if d > 0 else 'smaller'}", detail=f"{a:.0f} → {b:.0f} {unit}")
    return _claim(f)


def _claim(f: dict) -> dict:
    f["claim"] = f"{f['what']}: {f['verdict']} ({f['detail']})" if f.get("detail") else f"{f['what']}: {f['verdict']}"
    return f


def tested_finding(
    what: str,
    a_vals: list,
    b_vals: list,
    unit: str,
    better: str,
    slower: str = "slower",
    faster: str = "faster",
    link: str = "",
) -> dict:
    """Medians compared; a difference is claimed only when Mann-Whitney says p < ALPHA."""
    import statistics

    a_vals = [v for v in a_vals if v is not None]
    b_vals = [v for v in b_vals if v is not None]
    ma = statistics.median(a_vals) if a_vals else None
    mb = statistics.median(b_vals) if b_vals else None
    d = pct(ma, mb)
    n = f"n={len(a_vals)}" if len(a_vals) == len(b_vals) else f"n={len(a_vals)}/{len(b_vals)}"
    if len(a_vals) < 2 or len(b_vals) < 2:
        return untested_finding(
            what,
            ma,
            mb,
            unit,
            better,
            slower,
            faster,
            link,
            runs="one run each" if len(a_vals) == len(b_vals) == 1 else n,
        )
    test = stats.mann_whitney(a_vals, b_vals)
    assert test is not None  # two values or more on each side
    f = {
        "kind": "tested",
        "what": what,
        "delta_pct": d,
        "a": ma,
        "b": mb,
        "unit": unit,
        "p": test["p"],
        "test": f"Mann-Whitney U ({test['method']})",
        "n": [len(a_vals), len(b_vals)],
        "link": link,
    }
    if test["p"] < ALPHA and d is not None:
        f["worse"] = (d > 0) == (better == "lower")
        f.update(
            significant=True,
            verdict=f"{mag(d)} {slower if f['worse'] else faster}",
            detail=f"{_num(ma)} → {_num(mb)} {unit}, p={test['p']:.3f}, {n}",
        )
    else:
        f.update(
            significant=False,
            verdict="no significant difference",
            detail=f"{n}; medians {_num(ma)} → {_num(mb)} {unit}, p={test['p']:.2f}",
        )
    return _claim(f)


def untested_finding(
    what, a, b, unit, better, slower="slower", faster="faster", link="", runs="one run each", why="not tested"
):
    d = pct(a, b)
    f = {
        "kind": "untested",
        "what": what,
        "significant": None,
        "delta_pct": d,
        "a": a,
        "b": b,
        "unit": unit,
        "link": link,
    }
    if d is None:
        f["verdict"] = "not comparable"
    else:
        f["worse"] = (d > 0) == (better == "lower")
        f.update(
            verdict=f"{mag(d)} {slower if f['worse'] else faster}",
            detail=f"{_num(a)} → {_num(b)} {unit}; {runs}: {why}",
        )
    return _claim(f)


def _num(x) -> str:
    if x is None:
        return "-"
    return f"{x:.3g}" if abs(x) < 100 else f"{x:.0f}"


def summarize(model: dict) -> list[dict]:
    """Findings for each kernel after the first, against the first: a list of
    {'kernel', 'against', 'sections': [(title, [finding, ...])]}."""
    out: list[dict] = []
    kern = model["kernels"]
    if not kern:
        return out
    base = kern[0]
    for k in kern[1:]:
        sections = []
        b = model["build"]
        if b.get(base) and b.get(k):
            sections.append(("Build", build_findings(b[base], b[k], k)))
        nfs = model.get("boot_nfs") or {}
        for title, boot, mil, fname in (
            ("Boot", model.get("boot"), model.get("boot_milestones", []), records.boot_timing_name()),
            ("Boot, root over NFS", nfs.get("summary"), nfs.get("milestones", []), records.boot_timing_name("nfs")),
        ):
            fs = boot_findings(boot, mil, base, k, fname) if boot else []
            if fs:
                sections.append((title, fs))
        fp = model["footprint"]
        if fp.get(base) and fp.get(k):
            sections.append(("Footprint", footprint_findings(fp[base], fp[k], k)))
        lm = model["lmbench"]
        if base in lm and k in lm and lm[base].measured and lm[k].measured:
            sections.append(("lmbench", lmbench_findings(lm[base], lm[k], k)))
        out.append({"kernel": k, "against": base, "sections": sections})
    return out


def build_findings(ra: Build, rb: Build, k: str) -> list[dict]:
    ha, hb = (r.ccache.hit_rate if r.ccache else None for r in (ra, rb))
    if max(ha or 0, hb or 0) > CCACHE_COLD or abs((ha or 0) - (hb or 0)) > CCACHE_GAP:
        why = (
            f"not comparable: ccache hits {(ha or 0) * 100:.0f} % vs {(hb or 0) * 100:.0f} %; "
            f"rebuild both cold (BRINGUP_CCACHE=0 make build-all FORCE=1) to compare"
        )
    else:
        why = "not tested"
    link = f"../{k}/build.json"
    return [
        untested_finding("build time", ra.time.real, rb.time.real, "s real", "lower", link=link, why=why),
        size_finding(
            f"compressed image ({rb.sizes.compressed_image.file})",
            ra.sizes.compressed_image.bytes / 1024,
            rb.sizes.compressed_image.bytes / 1024,
            "kB",
            link,
        ),
        size_finding(
            "uncompressed kernel (vmlinux text+data+bss)",
            ra.sizes.berkeley.dec / 1024,
            rb.sizes.berkeley.dec / 1024,
            "kB",
            link,
        ),
    ]


def boot_findings(boot: BootTiming, milestones: list[dict], base: str, k: str, fname: str) -> list[dict]:
    if base not in boot.kernels or k not in boot.kernels:
        return []
    fs = []
    for m in milestones:
        va = _run_values(boot.kernels[base].milestones.get(m["name"]))
        vb = _run_values(boot.kernels[k].milestones.get(m["name"]))
        if va and vb and m["summary"]:
            fs.append(tested_finding(f"boot to {m['label']}", va, vb, "s", "lower", link=f"../{fname}"))
    return fs


def footprint_findings(fa: Footprint, fb: Footprint, k: str) -> list[dict]:
    link = f"../{k}/footprint.json"
    fs = []
    if fa.kernel_code_data_kb is not None and fb.kernel_code_data_kb is not None:
        fs.append(size_finding("kernel code + data", fa.kernel_code_data_kb, fb.kernel_code_data_kb, "kB", link))
    if fa.total_free_kb is not None and fb.total_free_kb is not None:
        fs.append(size_finding('total "free" memory', fa.total_free_kb, fb.total_free_kb, "kB", link))
    fs.append(
        untested_finding(
            "memory available to malloc()",
            fa.malloc_kb,
            fb.malloc_kb,
            "kB",
            "higher",
            slower="less",
            faster="more",
            link=link,
        )
    )
    return fs


def _metric_pairs(a: Lmbench, b: Lmbench) -> dict[str, list[tuple[Metric, Metric]]]:
    """The metrics both kernels have, by lmbench group: (a's, b's)."""
    groups: dict[str, list[tuple[Metric, Metric]]] = {}
    for bname, bench in b.benchmarks.items():
        other = a.benchmarks.get(bname)
        if not other:
            continue
        ma = {m.name: m for m in other.metrics}
        for m in bench.metrics:
            if m.name in ma:
                groups.setdefault(bench.group or "other", []).append((ma[m.name], m))
    return groups


def _metric_finding(ma: Metric, mb: Metric, k: str) -> dict:
    word = ("slower", "faster") if mb.unit != "MB/s" and mb.better == "lower" else ("lower", "higher")
    va, vb = ma.values or [ma.value], mb.values or [mb.value]
    link = f"../{k}/lmbench.json"
    if len(va) >= 2 and len(vb) >= 2:
        return tested_finding(mb.name, va, vb, mb.unit, mb.better, *word, link=link)
    return untested_finding(mb.name, ma.value, mb.value, mb.unit, mb.better, *word, link=link)


def lmbench_findings(a: Lmbench, b: Lmbench, k: str) -> list[dict]:
    """Per lmbench group, the metric that got most worse ("up to 96 % slower")
    and the one that got most better; tested when each metric has >= 2 runs."""
    out = []
    for group, pairs in _metric_pairs(a, b).items():
        fs = [f for f in (_metric_finding(ma, mb, k) for ma, mb in pairs) if f["delta_pct"] is not None]
        if not fs:
            continue
        tested = [f for f in fs if f["kind"] == "tested"]
        if tested and all(f["kind"] == "tested" for f in fs):
            sig = [f for f in tested if f["significant"]]
            if not sig:
                n = tested[0]["n"][0]
                out.append(
                    {
                        "kind": "tested",
                        "significant": False,
                        "delta_pct": None,
                        "claim": f"{group}: no significant difference (n={n})",
                        "link": f"../{k}/lmbench.json",
                    }
                )
                continue
            fs = sig
        worst = max((f for f in fs if f.get("worse")), key=lambda f: abs(f["delta_pct"]), default=None)
        best = max((f for f in fs if not f.get("worse")), key=lambda f: abs(f["delta_pct"]), default=None)
        for f in (worst, best):
            if f is not None:
                out.append({**f, "claim": f"{group}: up to {f['verdict']} ({f['what']}: {f['detail']})"})
    return out
