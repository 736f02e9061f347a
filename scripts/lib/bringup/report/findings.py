"""The management summary: findings generated from the records, in the voice of
seed 002 ("slow to build: +31 % real time", "compressed image +27 %").

Rules (docs/report.md says the same, for readers):
- Deterministic quantities (image and section sizes of a reproducible build,
  the kernel's own `Memory:` line, MemTotal) are stated as they are when they
  differ by at least SIZE_PCT %, else "about the same".
- Quantities measured in rounds of boots on the host clock (boot milestones, mem_eat,
  lmbench: one value per kernel per boot) are tested: Student's t-test of the per-round
  log ratios when the values pair by round, else Welch's t-test of the logs (a rank
  test cannot pass the correction with the default 5 rounds).  All
  the tests of one kernel against the base form one family, corrected with
  Benjamini-Hochberg: a difference is claimed only when its q-value < ALPHA, and
  it is stated with its Hodges-Lehmann shift and bootstrap 95 % interval.
  Otherwise the finding reads "no significant difference" and gives the smallest
  difference the run could have claimed (the t-test's threshold at alpha/family).
- Quantities measured once per kernel (build time, a single round) cannot be
  tested: the finding gives the delta and says "one run each: not tested".
- Quantities measured on the instruction clock (model/clocks.py: QEMU icount; boot
  milestones as printk times, lmbench, mem_eat, the workloads) are deterministic up to
  the A/A floor: the largest relative spread one kernel showed against itself (the
  board's own A/A check on that clock, logs/<board>-aa/aa.json, else the floors of
  configs/clock.toml, and never less than the spread between a kernel's own boots).
  A difference of at least FLOOR_MULTIPLE times that floor, and at least SIZE_PCT %,
  is a deterministic finding, stated without a test in seed 002's voice
  ("context switch 2p/0K: 56 → 104 µs, +86 %, instruction clock"); one boot per
  kernel is enough.
- When the host-load guard saw a disturbed host, the summary says so.
- A kernel imported from a boot log or an lmbench result made elsewhere
  (docs/import.md) is never tested, whatever its number of runs: its section
  says where it came from and gives values side by side, "imported, not tested".

Each finding is a dict: kind (size|tested|deterministic|untested|imported), claim (the sentence),
significant (bool or None when not tested), and the numbers behind it.
"""

from __future__ import annotations

from bringup import records, stats
from bringup.model.clocks import FLOOR_MULTIPLE
from bringup.records import BootTiming, Build, BuildCost, Footprint, Lmbench
from bringup.records.boot import MilestoneStats
from bringup.records.measure import Metric
from bringup.report import workloads
from bringup.report.tables import pct

ALPHA = stats.ALPHA  # the one definition is stats.py's
SIZE_PCT = 1.0
DEFAULT_FLOOR_PCT = 0.1  # the A/A floor of a metric without a measured one (configs/clock.toml overrides)
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
    return [st.host.median] if st.host is not None and st.host.n == 1 else None


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
    a_rounds: list | None = None,
    b_rounds: list | None = None,
    key: str = "",
    clock: str = "host",
) -> dict:
    """A tested comparison; its verdict waits for the family's correction (resolve()).
    On the instruction clock: a deterministic comparison, decided against the A/A floor (decide())."""
    import statistics

    if clock == "instructions":
        return deterministic_finding(what, a_vals, b_vals, unit, better, slower, faster, link, key or what)
    if clock == "mixed":  # one kernel on the instruction clock, the other on the host's: never compared
        return untested_finding(
            what,
            statistics.median(a_clean) if (a_clean := [v for v in a_vals if v is not None]) else None,
            statistics.median(b_clean) if (b_clean := [v for v in b_vals if v is not None]) else None,
            unit,
            better,
            slower,
            faster,
            link,
            runs="measured on different clocks",
            why="not comparable (docs/clock.md)",
        )
    pairs = _pairs(a_vals, a_rounds, b_vals, b_rounds)
    a_clean = [v for v in a_vals if v is not None]
    b_clean = [v for v in b_vals if v is not None]
    ma = statistics.median(a_clean) if a_clean else None
    mb = statistics.median(b_clean) if b_clean else None
    d = pct(ma, mb)
    paired = pairs is not None and len(pairs[0]) >= 2
    n = (
        f"n={len(pairs[0])} rounds"
        if paired and pairs
        else f"n={len(a_clean)}"
        if len(a_clean) == len(b_clean)
        else f"n={len(a_clean)}/{len(b_clean)}"
    )
    if len(a_clean) < 2 or len(b_clean) < 2:
        return untested_finding(
            what,
            ma,
            mb,
            unit,
            better,
            slower,
            faster,
            link,
            runs="one run each" if len(a_clean) == len(b_clean) == 1 else n,
        )
    c = stats.compare(pairs[0], pairs[1], paired=True) if paired and pairs else stats.compare(a_clean, b_clean, False)
    assert c is not None  # two values or more on each side
    f = {
        "kind": "tested",
        "key": key or what,
        "what": what,
        "delta_pct": d,
        "a": ma,
        "b": mb,
        "unit": unit,
        "better": better,
        "words": (slower, faster),
        "p": c["p"],
        "q": None,
        "test": f"{c['test']} ({c['method']})",
        "paired": paired,
        "rounds": len(pairs[0]) if paired and pairs else min(len(a_clean), len(b_clean)),
        "shift": c["shift"],
        "shift_ci95": c["shift_ci95"],
        "t": {"se": c.get("se"), "df": c.get("df"), "scale": c.get("scale")},
        "n": [len(a_clean), len(b_clean)],
        "n_text": n,
        "link": link,
        "significant": None,
    }
    return f


def _pairs(a_vals, a_rounds, b_vals, b_rounds) -> tuple[list, list] | None:
    """The values of both kernels joined by round, when both carry their rounds."""
    if not a_rounds or not b_rounds or len(a_rounds) != len(a_vals) or len(b_rounds) != len(b_vals):
        return None
    bmap = dict(zip(b_rounds, b_vals, strict=True))
    joined = [(v, bmap[r]) for r, v in zip(a_rounds, a_vals, strict=True) if r in bmap]
    return [x for x, _ in joined], [y for _, y in joined]


def same_clock(a: str, b: str) -> str:
    """The clock two kernels' records compare on: theirs, or "mixed" (never compared)."""
    return a if a == b else "mixed"


def _spread(vals: list[float]) -> float:
    """The relative spread (max - min) / median of one kernel's boots, in %."""
    import statistics

    if len(vals) < 2:
        return 0.0
    med = statistics.median(vals)
    return (max(vals) - min(vals)) / abs(med) * 100 if med else 0.0


def deterministic_finding(what, a_vals, b_vals, unit, better, slower, faster, link, key) -> dict:
    """A difference measured on the instruction clock; decide() states it or not."""
    import statistics

    a_clean = [v for v in a_vals if v is not None]
    b_clean = [v for v in b_vals if v is not None]
    ma = statistics.median(a_clean) if a_clean else None
    mb = statistics.median(b_clean) if b_clean else None
    return {
        "kind": "deterministic",
        "key": key,
        "what": what,
        "delta_pct": pct(ma, mb),
        "a": ma,
        "b": mb,
        "unit": unit,
        "better": better,
        "words": (slower, faster),
        "n": [len(a_clean), len(b_clean)],
        "own_spread_pct": max(_spread(a_clean), _spread(b_clean)),
        "link": link,
        "significant": None,
    }


def decide(f: dict, floors: dict[str, float], default_floor: float) -> None:
    """A deterministic finding's verdict: a difference of at least FLOOR_MULTIPLE x its
    floor (the A/A floor of its key, or the default, and at least the kernels' own
    spread) and at least SIZE_PCT % is stated; else "about the same"."""
    d, unit = f["delta_pct"], f["unit"]
    floor = max(floors.get(f["key"], default_floor), f["own_spread_pct"])
    threshold = max(SIZE_PCT, FLOOR_MULTIPLE * floor)
    f["floor_pct"] = round(floor, 4)
    f["threshold_pct"] = round(threshold, 4)
    runs = "one boot each" if f["n"] == [1, 1] else f"n={f['n'][0]}/{f['n'][1]} boots"
    if d is None:
        f.update(significant=False, verdict="not comparable")
    elif abs(d) >= threshold:
        slower, faster = f["words"]
        f["worse"] = (d > 0) == (f["better"] == "lower")
        f.update(
            significant=True,
            verdict=f"{mag(d)} {slower if f['worse'] else faster}",
            detail=f"{_num(f['a'])} → {_num(f['b'])} {unit}, {signed(d)}, instruction clock; {runs}, "
            f"A/A floor {floor:.2g} %",
        )
    else:
        f.update(
            significant=False,
            verdict="about the same",
            detail=f"{_num(f['a'])} → {_num(f['b'])} {unit}, {signed(d)}, within {threshold:.2g} % "
            f"({FLOOR_MULTIPLE:g} x the A/A floor {floor:.2g} %, at least {SIZE_PCT:g} %); instruction clock, {runs}",
        )
    _claim(f)


def decide_all(model: dict, fs: list[dict]) -> list[dict]:
    """decide() every deterministic finding of fs against the model's floors; those findings."""
    floors = model.get("floors") or {}
    decided = [f for f in fs if f["kind"] == "deterministic"]
    for f in decided:
        decide(f, floors.get("metrics", {}), floors.get("default_pct", DEFAULT_FLOOR_PCT))
    return decided


def resolve(family: list[dict]) -> None:
    """Benjamini-Hochberg over a family of tested findings, then each one's verdict."""
    qs = stats.fdr([f["p"] for f in family])
    for f, q in zip(family, qs, strict=True):
        f["q"] = q
        _verdict(f, len(family))


def _verdict(f: dict, family: int) -> None:
    d, q, unit = f["delta_pct"], f["q"], f["unit"]
    slower, faster = f["words"]
    where = f"{f['test']}, {f['n_text']}, q={q:.3f} over {family} test{'s' if family != 1 else ''}"
    if q < ALPHA and d is not None:
        f["worse"] = (d > 0) == (f["better"] == "lower")
        shift = f["shift"]
        ci = f["shift_ci95"]
        effect = (
            f"shift {_num(shift)} {unit}" + (f" (95 % CI {_num(ci[0])} … {_num(ci[1])})" if ci else "")
            if shift is not None
            else ""
        )
        f.update(
            significant=True,
            verdict=f"{mag(d)} {slower if f['worse'] else faster}",
            detail=f"{_num(f['a'])} → {_num(f['b'])} {unit}; {effect}; {where}",
        )
    else:
        # the smallest difference this run could have claimed: the first test of a Benjamini-
        # Hochberg family passes at alpha/family
        det = stats.detectable(f["t"], ALPHA / max(1, family)) if f.get("t") else None
        short = f"; smallest difference this run could claim: ±{det:.2g} %" if det is not None else ""
        f.update(
            significant=False,
            verdict="no significant difference",
            detail=f"{f['n_text']}; medians {_num(f['a'])} → {_num(f['b'])} {unit}, p={f['p']:.2f}, q={q:.2f}{short}",
        )
    _claim(f)


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
    {'kernel', 'against', 'sections': [(title, [finding, ...])], 'family', 'host'}.
    The tested findings of one kernel form one family (Benjamini-Hochberg)."""
    out: list[dict] = []
    kern = model["kernels"]
    if not kern:
        return out
    base = kern[0]
    imported = model.get("imported") or {}
    for k in kern[1:]:
        if k in imported or base in imported:
            out.append(
                {"kernel": k, "against": base, "sections": imported_sections(model, base, k), "family": 0, "tested": {}}
            )
            continue
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
        lm = model["lmbench"]
        metrics: list[dict] = []
        if base in lm and k in lm and lm[base].measured and lm[k].measured:
            metrics = lmbench_metric_findings(lm[base], lm[k], k)
        wmetrics = workloads.kernel_findings(model, base, k)
        family = [f for _, fs in sections for f in fs if f["kind"] == "tested"]
        family += [f for f in metrics if f["kind"] == "tested"]
        family += [f for f in wmetrics if f["kind"] == "tested"]
        resolve(family)
        decided = decide_all(model, [f for _, fs in sections for f in fs] + metrics + wmetrics)
        if metrics:
            sections.append(("lmbench", lmbench_groups(metrics, k)))
        sections += workloads.sections(wmetrics, k)
        host = host_findings(model, [base, k])
        if host:
            sections.append(("Host", host))
        out.append(
            {
                "kernel": k,
                "against": base,
                "sections": sections,
                "family": len(family),
                "tested": {f["key"]: {"p": f["p"], "q": f["q"], "significant": f["significant"]} for f in family},
                "deterministic": {
                    f["key"]: {
                        "delta_pct": f["delta_pct"],
                        "a": f["a"],
                        "b": f["b"],
                        "own_spread_pct": f["own_spread_pct"],
                        "significant": f["significant"],
                    }
                    for f in decided
                },
            }
        )
    return out


def era_findings(builds: dict[str, Build], kernels: list[str]) -> list[dict]:
    """A note for every era fix that changes the running kernel (not only its build):
    the numbers of that kernel are not those of the release as it was shipped; and for
    every fix that builds a kernel outside what its authors supported (2.4 with gcc 12)."""
    out = []
    for k in kernels:
        r = builds.get(k)
        for fix in r.fixes if r else []:
            if fix.overrides:
                out.append(
                    {
                        "kind": "era",
                        "significant": None,
                        "delta_pct": None,
                        "claim": f"{k} is built outside what its authors supported ({fix.name}; marked † in every "
                        f"table): {fix.overrides} (docs/eras.md)",
                        "link": "",
                    }
                )
            if fix.changes:
                out.append(
                    {
                        "kind": "era",
                        "significant": None,
                        "delta_pct": None,
                        "claim": f"{k} carries an era fix that changes the running kernel, {fix.name}: {fix.changes}"
                        " (docs/eras.md)",
                        "link": "",
                    }
                )
    return out


IMPORTED = "imported, not tested"


def imported_finding(what: str, a: float | None, b: float | None, unit: str, link: str = "") -> dict:
    """Values of an imported kernel beside another's: the numbers and their difference,
    never a verdict (one log or one result set, from another machine and another time)."""
    d = pct(a, b)
    f = {"kind": "imported", "what": what, "significant": None, "delta_pct": d, "a": a, "b": b, "unit": unit}
    f["link"] = link
    f["verdict"] = "not comparable" if d is None else f"{_num(a)} → {_num(b)} {unit}, {signed(d)}"
    f["detail"] = IMPORTED
    return _claim(f)


def imported_sections(model: dict, base: str, k: str) -> list[tuple[str, list[dict]]]:
    """The summary of a kernel when it or the base is imported: where the imported
    records came from, then values side by side; no test, no claim of a difference."""
    imported = model.get("imported") or {}
    sections: list[tuple[str, list[dict]]] = []
    marks = [
        {"kind": "imported", "significant": None, "delta_pct": None, "claim": f"{kk}: {e['mark']}", "link": e["copy"]}
        for kk in (base, k)
        for e in imported.get(kk, [])
    ]
    sections.append(("Imported", marks))
    boot = model.get("boot")
    if boot and base in boot.kernels and k in boot.kernels:
        ka, kb = boot.kernels[base], boot.kernels[k]
        fs = []
        for m in model.get("boot_milestones", []):
            sa, sb = ka.milestones.get(m["name"]), kb.milestones.get(m["name"])
            if m["summary"] and sa and sb and sa.host and sb.host:
                fs.append(imported_finding(f"boot to {m['label']}", sa.host.median, sb.host.median, "s"))
        if ka.reference != kb.reference:
            fs = [
                {
                    "kind": "imported",
                    "significant": None,
                    "delta_pct": None,
                    "link": "",
                    "claim": f"boot times not compared: {base}'s are from {ka.reference or 'nothing'}, "
                    f"{k}'s from {kb.reference or 'nothing (the log has no times)'} ({IMPORTED})",
                }
            ]
        if fs:
            sections.append(("Boot", fs))
    fa, fb = model["footprint"].get(base), model["footprint"].get(k)
    if fa and fb:
        link = f"../{k}/footprint.json"
        fs = [
            imported_finding(what, getattr(fa, key), getattr(fb, key), "kB", link)
            for what, key in (
                ("kernel code + data", "kernel_code_data_kb"),
                ('total "free" memory', "total_free_kb"),
                ("memory available to malloc()", "malloc_kb"),
            )
            if getattr(fa, key) is not None and getattr(fb, key) is not None
        ]
        if fs:
            sections.append(("Footprint", fs))
    la, lb = model["lmbench"].get(base), model["lmbench"].get(k)
    if la and lb and la.measured and lb.measured:
        fs = []
        for group, pairs in _metric_pairs(la, lb).items():
            ds = [d for ma, mb in pairs if (d := pct(ma.value, mb.value)) is not None]
            if ds:
                span = signed(ds[0]) if len(ds) == 1 else f"{signed(min(ds))} … {signed(max(ds))}"
                fs.append(
                    {
                        "kind": "imported",
                        "significant": None,
                        "delta_pct": None,
                        "link": f"../{k}/lmbench.json",
                        "claim": f"{group}: {len(ds)} metric(s) side by side, {span} ({IMPORTED})",
                    }
                )
        if not fs:
            fs.append(
                {
                    "kind": "imported",
                    "significant": None,
                    "delta_pct": None,
                    "link": "",
                    "claim": f"no lmbench metric in common ({IMPORTED})",
                }
            )
        sections.append(("lmbench", fs))
    return sections


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
    return [
        {
            "kind": "host",
            "significant": None,
            "delta_pct": None,
            "claim": "the host was not quiet: " + "; ".join(notes) + " (docs/boot-timing.md: the host-load guard)",
            "link": "",
        }
    ]


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


def lmbench_groups(metrics: list[dict], k: str, record: str = "lmbench.json") -> list[dict]:
    """Per lmbench group (or workload: record workloads.json), after the family's
    correction: the metric that got most worse ("up to 96 % slower") and the one that
    got most better, or "no significant difference" when no tested metric of the group
    passed."""
    out = []
    groups: dict[str, list[dict]] = {}
    for f in metrics:
        groups.setdefault(f["group"], []).append(f)
    for group, fs in groups.items():
        tested = [f for f in fs if f["kind"] == "tested"]
        fixed = [f for f in fs if f["kind"] == "deterministic"]
        if fixed and len(fixed) == len(fs):
            sig = [f for f in fixed if f["significant"]]
            if not sig:
                near = max(fixed, key=lambda f: abs(f["delta_pct"] or 0))
                out.append(
                    {
                        "kind": "deterministic",
                        "significant": False,
                        "delta_pct": None,
                        "claim": f"{group}: no difference beyond the A/A floor (largest: {near['what']}, "
                        f"{near['detail']})",
                        "link": f"../{k}/{record}",
                    }
                )
                continue
            fs = sig
        elif tested and len(tested) == len(fs):
            sig = [f for f in tested if f["significant"]]
            if not sig:
                best_q = min(tested, key=lambda f: f["q"])
                out.append(
                    {
                        "kind": "tested",
                        "significant": False,
                        "delta_pct": None,
                        "claim": f"{group}: no significant difference (closest: {best_q['what']}, {best_q['detail']})",
                        "link": f"../{k}/{record}",
                    }
                )
                continue
            fs = sig
        worst = max((f for f in fs if f.get("worse")), key=lambda f: abs(f["delta_pct"]), default=None)
        best = max((f for f in fs if not f.get("worse")), key=lambda f: abs(f["delta_pct"]), default=None)
        for top in (worst, best):
            if top is not None:
                out.append({**top, "claim": f"{group}: up to {top['verdict']} ({top['what']}: {top['detail']})"})
    return out
