"""The management summary of each kernel against the first (the base): its sections
(Kernels, Build, Boot, Footprint, lmbench, Workloads, Host), each a list of findings
of the kinds report/findings.py makes and decides; the tested findings of one kernel
form one family (Benjamini-Hochberg)."""

from __future__ import annotations

from bringup import records
from bringup.records import BootTiming, Build, BuildCost, Footprint, Lmbench
from bringup.records.boot import MilestoneStats
from bringup.records.measure import Metric
from bringup.report import workloads
from bringup.report.findings import (
    IMPORTED,
    decide_all,
    imported_finding,
    lmbench_groups,
    resolve,
    same_clock,
    signed,
    size_finding,
    tested_finding,
    untested_finding,
)
from bringup.report.tables import pct

# build times compare only when both builds were (nearly) cold: a cold ccache still gives some hits
# (about 8-11 % for qemu-arm's two kernels: files the first build already compiled)
CCACHE_COLD = 0.25
CCACHE_GAP = 0.10


def _run_values(st: MilestoneStats | None) -> list | None:
    """Per-run values of a milestone; a single run's median when older records kept none."""
    if st is None:
        return None
    if st.values:
        return st.values
    return [st.host.median] if st.host is not None and st.host.n == 1 else None


def summarize(model: dict) -> list[dict]:
    """Findings for each kernel after the first, against the first: a list of
    {'kernel', 'against', 'sections': [(title, [finding, ...])], 'family', 'host'}.
    The tested findings of one kernel form one family (Benjamini-Hochberg)."""
    kern = model["kernels"]
    if not kern:
        return []
    base = kern[0]
    imported = model.get("imported") or {}
    out: list[dict] = []
    for k in kern[1:]:
        if k in imported or base in imported:
            sections = imported_sections(model, base, k)
            out.append({"kernel": k, "against": base, "sections": sections, "family": 0, "tested": {}})
        else:
            out.append(kernel_summary(model, base, k))
    return out


def _measured_sections(model: dict, base: str, k: str) -> list[tuple[str, list[dict]]]:
    """The sections of kernel k whose findings are made one by one: kernels, build, boots, footprint."""
    sections: list[tuple[str, list[dict]]] = []
    b = model["build"]
    era = era_findings(b, [base, k])
    if era:
        sections.append(("Kernels", era))
    if b.get(base) and b.get(k):
        sections.append(("Build", build_findings(b[base], b[k], k, model.get("build_cost"))))
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
    return sections


def kernel_summary(model: dict, base: str, k: str) -> dict:
    """The summary of a live kernel against a live base: its sections, its family corrected."""
    sections = _measured_sections(model, base, k)
    lm = model["lmbench"]
    metrics: list[dict] = []
    if base in lm and k in lm and lm[base].measured and lm[k].measured:
        metrics = lmbench_metric_findings(lm[base], lm[k], k)
    wmetrics = workloads.kernel_findings(model, base, k)
    every = [f for _, fs in sections for f in fs] + metrics + wmetrics
    family = [f for f in every if f["kind"] == "tested"]
    resolve(family)
    decided = decide_all(model, every)
    if metrics:
        sections.append(("lmbench", lmbench_groups(metrics, k)))
    sections += workloads.sections(wmetrics, k)
    host = host_findings(model, [base, k])
    if host:
        sections.append(("Host", host))
    deterministic = ("delta_pct", "a", "b", "own_spread_pct", "significant")
    return {
        "kernel": k,
        "against": base,
        "sections": sections,
        "family": len(family),
        "tested": {f["key"]: {"p": f["p"], "q": f["q"], "significant": f["significant"]} for f in family},
        "deterministic": {f["key"]: {x: f[x] for x in deterministic} for f in decided},
    }


def era_findings(builds: dict[str, Build], kernels: list[str]) -> list[dict]:
    """A note for every era fix that changes the running kernel (not only its build):
    the numbers of that kernel are not those of the release as it was shipped; and for
    every fix that builds a kernel outside what its authors supported (2.4 with gcc 12)."""
    out = []
    for k in kernels:
        r = builds.get(k)
        for fix in r.fixes if r else []:
            if fix.overrides:
                claim = (
                    f"{k} is built outside what its authors supported ({fix.name}; marked † in every "
                    f"table): {fix.overrides} (docs/eras.md)"
                )
                out.append(_note("era", claim, ""))
            if fix.changes:
                claim = (
                    f"{k} carries an era fix that changes the running kernel, {fix.name}: {fix.changes} (docs/eras.md)"
                )
                out.append(_note("era", claim, ""))
    return out


def _note(kind: str, claim: str, link: str) -> dict:
    """A finding that is a sentence only: no values, no verdict."""
    return {"kind": kind, "significant": None, "delta_pct": None, "claim": claim, "link": link}


def _side_note(claim: str, link: str = "") -> dict:
    """An imported kernel's sentence: values side by side, never tested."""
    return {"kind": "imported", "significant": None, "delta_pct": None, "link": link, "claim": claim}


def imported_sections(model: dict, base: str, k: str) -> list[tuple[str, list[dict]]]:
    """The summary of a kernel when it or the base is imported: where the imported
    records came from, then values side by side; no test, no claim of a difference."""
    imported = model.get("imported") or {}
    marks = [_note("imported", f"{kk}: {e['mark']}", e["copy"]) for kk in (base, k) for e in imported.get(kk, [])]
    sections: list[tuple[str, list[dict]]] = [("Imported", marks)]
    for title, make in (("Boot", _imported_boot), ("Footprint", _imported_footprint), ("lmbench", _imported_lmbench)):
        fs = make(model, base, k)
        if fs:
            sections.append((title, fs))
    return sections


def _imported_boot(model: dict, base: str, k: str) -> list[dict]:
    boot = model.get("boot")
    if not boot or base not in boot.kernels or k not in boot.kernels:
        return []
    ka, kb = boot.kernels[base], boot.kernels[k]
    if ka.reference != kb.reference:
        why = (
            f"boot times not compared: {base}'s are from {ka.reference or 'nothing'}, "
            f"{k}'s from {kb.reference or 'nothing (the log has no times)'} ({IMPORTED})"
        )
        return [_side_note(why)]
    fs = []
    for m in model.get("boot_milestones", []):
        sa, sb = ka.milestones.get(m["name"]), kb.milestones.get(m["name"])
        if m["summary"] and sa and sb and sa.host and sb.host:
            fs.append(imported_finding(f"boot to {m['label']}", sa.host.median, sb.host.median, "s"))
    return fs


def _imported_footprint(model: dict, base: str, k: str) -> list[dict]:
    fa, fb = model["footprint"].get(base), model["footprint"].get(k)
    if not fa or not fb:
        return []
    link = f"../{k}/footprint.json"
    return [
        imported_finding(what, getattr(fa, key), getattr(fb, key), "kB", link)
        for what, key in (
            ("kernel code + data", "kernel_code_data_kb"),
            ('total "free" memory', "total_free_kb"),
            ("memory available to malloc()", "malloc_kb"),
        )
        if getattr(fa, key) is not None and getattr(fb, key) is not None
    ]


def _imported_lmbench(model: dict, base: str, k: str) -> list[dict]:
    la, lb = model["lmbench"].get(base), model["lmbench"].get(k)
    if not (la and lb and la.measured and lb.measured):
        return []
    fs = []
    for group, pairs in _metric_pairs(la, lb).items():
        ds = [d for ma, mb in pairs if (d := pct(ma.value, mb.value)) is not None]
        if ds:
            span = signed(ds[0]) if len(ds) == 1 else f"{signed(min(ds))} … {signed(max(ds))}"
            claim = f"{group}: {len(ds)} metric(s) side by side, {span} ({IMPORTED})"
            fs.append(_side_note(claim, f"../{k}/lmbench.json"))
    return fs or [_side_note(f"no lmbench metric in common ({IMPORTED})")]


def host_findings(model: dict, kernels: list[str]) -> list[dict]:
    """A warning when the host-load guard saw a disturbed host during the runs."""
    notes = []
    boot = model.get("boot")
    if boot:
        redone = sum(len(boot.kernels[k].disturbed) for k in kernels if k in boot.kernels)
        if redone:
            notes.append(f"{redone} boot run(s) were done again because the host was busy")
    for k in kernels:
        f = model["footprint"].get(k)
        if f is None:
            continue
        if f.disturbed:
            notes.append(f"{k}: {f.disturbed} footprint round(s) done again because the host was busy")
        kept = [h.disturbed for h in f.host if h.disturbed]
        if kept:
            notes.append(f"{k}: {len(kept)} footprint round(s) kept on a busy host ({kept[0]})")
    if not notes:
        return []
    return [_note("host", f"the host was not quiet: {'; '.join(notes)} (docs/boot-timing.md: the host-load guard)", "")]


def cost_findings(cost: BuildCost | None, base: str, k: str) -> list[dict]:
    """The cold build cost (build-cost.json): CPU and wall time of the rounds of cold builds,
    paired by round, tested in the kernel's family like the boot times."""
    if cost is None or base not in cost.kernels or k not in cost.kernels:
        return []
    out = []
    for metric, what, unit in (
        ("cpu", "build CPU time, cold (no ccache)", "CPU s"),
        ("real", "build wall time, cold", "s"),
    ):
        a = [(r.round, getattr(r, metric)) for r in cost.kernels[base].runs if not r.redone]
        b = [(r.round, getattr(r, metric)) for r in cost.kernels[k].runs if not r.redone]
        out.append(
            tested_finding(
                what,
                [v for _, v in a],
                [v for _, v in b],
                unit,
                "lower",
                link="../build-cost.json",
                a_rounds=[r for r, _ in a],
                b_rounds=[r for r, _ in b],
                key=f"build-cost.json:{metric}",
            )
        )
    return out


def build_findings(ra: Build, rb: Build, k: str, cost: BuildCost | None = None) -> list[dict]:
    ha, hb = (r.ccache.hit_rate if r.ccache else None for r in (ra, rb))
    if max(ha or 0, hb or 0) > CCACHE_COLD or abs((ha or 0) - (hb or 0)) > CCACHE_GAP:
        why = (
            f"not comparable: ccache hits {(ha or 0) * 100:.0f} % vs {(hb or 0) * 100:.0f} %; "
            f"rebuild both cold (BRINGUP_CCACHE=0 make build-all FORCE=1) to compare"
        )
    else:
        why = "not tested"
    link = f"../{k}/build.json"
    cold = cost_findings(cost, ra.kernel, k)
    if cold:
        why = (
            f"not comparable: ccache hits {(ha or 0) * 100:.0f} % vs {(hb or 0) * 100:.0f} %; "
            "the cold builds above compare"
        )
    what = "build time (the study's build, through ccache)" if cold else "build time"
    return [
        *cold,
        untested_finding(what, ra.time.real, rb.time.real, "s real", "lower", link=link, why=why),
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
        sa, sb = boot.kernels[base].milestones.get(m["name"]), boot.kernels[k].milestones.get(m["name"])
        va, vb = _run_values(sa), _run_values(sb)
        if va and vb and m["summary"]:
            fs.append(
                tested_finding(
                    f"boot to {m['label']}",
                    va,
                    vb,
                    "s",
                    "lower",
                    link=f"../{fname}",
                    a_rounds=sa.rounds if sa else None,
                    b_rounds=sb.rounds if sb else None,
                    key=f"{fname}:{m['name']}",
                    clock=boot.clock.kind,
                )
            )
    return fs


def _chunk_kb(fa: Footprint, fb: Footprint) -> int | None:
    """The resolution of both kernels' mem_eat totals: the larger chunk (None: no mem_eat)."""
    chunks = [f.mem_eat.chunk_kb for f in (fa, fb) if f.mem_eat is not None]
    return max(chunks) if chunks else None


def footprint_findings(fa: Footprint, fb: Footprint, k: str) -> list[dict]:
    link = f"../{k}/footprint.json"
    fs = []
    if fa.kernel_code_data_kb is not None and fb.kernel_code_data_kb is not None:
        fs.append(size_finding("kernel code + data", fa.kernel_code_data_kb, fb.kernel_code_data_kb, "kB", link))
    if fa.total_free_kb is not None and fb.total_free_kb is not None:
        fs.append(size_finding('total "free" memory', fa.total_free_kb, fb.total_free_kb, "kB", link))
    fs.append(
        tested_finding(
            "memory available to malloc()",
            fa.malloc_kb_values or [fa.malloc_kb],
            fb.malloc_kb_values or [fb.malloc_kb],
            "kB",
            "higher",
            slower="less",
            faster="more",
            link=link,
            a_rounds=fa.rounds or None,
            b_rounds=fb.rounds or None,
            key="footprint:malloc_kb",
            clock=same_clock(fa.clock.kind, fb.clock.kind),
            resolution=_chunk_kb(fa, fb),
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


def _metric_finding(ma: Metric, mb: Metric, k: str, group: str, clock: str = "host") -> dict:
    word = ("slower", "faster") if mb.unit != "MB/s" and mb.better == "lower" else ("lower", "higher")
    va, vb = ma.values or [ma.value], mb.values or [mb.value]
    link = f"../{k}/lmbench.json"
    if clock != "host" or (len(va) >= 2 and len(vb) >= 2):
        f = tested_finding(
            mb.name,
            va,
            vb,
            mb.unit,
            mb.better,
            *word,
            link=link,
            a_rounds=ma.rounds,
            b_rounds=mb.rounds,
            key=f"lmbench:{mb.name}",
            clock=clock,
        )
    else:
        f = untested_finding(mb.name, ma.value, mb.value, mb.unit, mb.better, *word, link=link)
    f["group"] = group
    return f


def lmbench_metric_findings(a: Lmbench, b: Lmbench, k: str) -> list[dict]:
    """Every metric both kernels have, as a finding (tested when each has >= 2 rounds; deterministic
    when both were measured on the instruction clock)."""
    clock = same_clock(a.clock.kind, b.clock.kind)
    return [
        f
        for group, pairs in _metric_pairs(a, b).items()
        for f in (_metric_finding(ma, mb, k, group, clock) for ma, mb in pairs)
        if f["delta_pct"] is not None
    ]
