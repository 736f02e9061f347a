"""The report's Workloads section (docs/workloads.md): one table per workload
(medians, deltas to the first kernel), and the findings of each kernel's
workload metrics, tested like lmbench's in the kernel's family (findings.py)."""

from __future__ import annotations

import statistics

from bringup import stats
from bringup.records import Workloads
from bringup.records.workloads import WorkloadFile, WorkloadMetric
from bringup.report.model import WorkloadSection
from bringup.report.tables import pct

KEY = "workload:{w}:{m}"  # the key of a tested metric in the family (findings.summarize)


def tables(wl: dict[str, Workloads], kernels: list[str]) -> dict:
    """{kernels, missing, workloads: [{name, description, not_measured, rows}]}: the
    rows' deltas carry worse/pct; findings mark significance from the family."""
    ks = [k for k in kernels if k in wl]
    names = list(dict.fromkeys(n for k in ks for n in wl[k].workloads))
    out: dict = {
        "kernels": ks,
        "missing": [k for k in kernels if k not in wl],
        "mode": sorted({wl[k].mode for k in ks}),
        "runs": {k: wl[k].runs for k in ks},
        "disk": next((disk.model_dump() for k in ks if (disk := wl[k].disk) is not None), None),
        "workloads": [],
    }
    for n in names:
        res = {k: wl[k].workloads.get(n) for k in ks}
        desc = next((r.description for r in res.values() if r is not None), "")
        rows: dict[str, dict] = {}
        for k in ks:
            r = res[k]
            for m in r.metrics if r else []:
                row = rows.setdefault(m.name, {"name": m.name, "unit": m.unit, "better": m.better, "values": {}})
                row["values"][k] = m.value
                row.setdefault("runs", {})[k] = m.values
                row.setdefault("rounds", {})[k] = m.rounds
        for row in rows.values():
            vals = [row["values"].get(k) for k in ks]
            row["cells"] = [
                {
                    "kernel": k,
                    "value": v,
                    "link": f"../{k}/workloads.json",
                    "title": f"workloads.json: workloads.{n}; values {row['runs'].get(k)}",
                }
                for k, v in zip(ks, vals, strict=True)
            ]
            deltas: list[dict | None] = []
            for v in vals[1:]:
                d = pct(vals[0], v)
                deltas.append(
                    None
                    if d is None
                    else {"pct": round(d, 1), "worse": (d > 0) == (row["better"] == "lower"), "significant": None}
                )
            row["deltas"] = deltas
            row["key"] = KEY.format(w=n, m=row["name"])
        out["workloads"].append(
            {
                "name": n,
                "description": desc,
                "not_measured": {k: r.reason for k, r in res.items() if r is not None and not r.measured},
                "failures": {k: len(r.failures) for k, r in res.items() if r is not None and r.failures},
                "rows": list(rows.values()),
            }
        )
    return out


def relative(wt: dict, floors: dict | None = None, clock: str = "host") -> dict:
    """Each workload metric of each kernel as performance relative to the first kernel
    (>1: better, whatever the metric's direction; Phoronix's relative-performance
    view), with a 95 % interval: the study's test's ratio b/a and its interval
    (stats.study_test, paired by round), turned over when lower is better.  On the
    instruction clock (clock) nothing is tested: the ratio of the medians, and
    as its band the rule's threshold around b (stats/deterministic.py, the metric's A/A
    floor from floors), so a band excludes 1 exactly when the rule claims the
    difference.  A metric with a value at or below 0 has no ratio.  {kernels (the
    others), rows: [{label, ratios: {k: {ratio, lo, hi}}}]}."""
    ks = wt.get("kernels") or []
    rows = []
    for w in wt.get("workloads") or []:
        for r in w["rows"]:
            runs, rounds = r.get("runs") or {}, r.get("rounds") or {}
            out = {}
            for k in ks[1:]:
                a, b = runs.get(ks[0]) or [], runs.get(k) or []
                if clock == "instructions":
                    band = _floor_band(a, b, _findings().floor_pct(floors or {}, r["key"]))
                else:
                    t = stats.study_test(a, b, rounds.get(ks[0]), rounds.get(k))
                    ok = t is not None and t.ratio is not None and t.ratio_ci95 is not None
                    band = (t.ratio, *t.ratio_ci95) if ok else None  # type: ignore[union-attr, misc]
                if band is None:
                    continue
                flip = r["better"] != "higher"
                ratio = 1 / band[0] if flip else band[0]
                lo, hi = sorted(1 / x if flip else x for x in band[1:])
                out[k] = {"ratio": round(ratio, 4), "lo": round(lo, 4), "hi": round(hi, 4)}
            if out:
                rows.append({"label": f"{w['name']}: {r['name']}", "ratios": out})
    return {"base": ks[0] if ks else None, "kernels": ks[1:], "rows": rows}


def _findings():
    from bringup.report import findings

    return findings


def _floor_band(a: list, b: list, floor_pct: float) -> tuple[float, float, float] | None:
    """On the instruction clock: the ratio of the medians b/a and the rule's band around it
    ((b's median -+ the threshold) / a's median); None without a positive ratio."""
    rule = stats.judge_pct(a, b, floor_pct)
    xa = sorted(x for x in a if x is not None)
    if rule is None or rule.delta is None or not xa:
        return None
    ma = statistics.median(xa)
    mb = ma + rule.delta
    lo, hi = (mb - rule.threshold) / ma, (mb + rule.threshold) / ma
    if ma <= 0 or mb <= 0 or lo <= 0:
        return None
    return mb / ma, lo, hi


def _pairs(a: Workloads, b: Workloads) -> list[tuple[str, WorkloadMetric, WorkloadMetric]]:
    out = []
    for n, rb in b.workloads.items():
        ra = a.workloads.get(n)
        if ra is None:
            continue
        ma = {m.name: m for m in ra.metrics}
        out += [(n, ma[m.name], m) for m in rb.metrics if m.name in ma]
    return out


def metric_findings(a: Workloads, b: Workloads, k: str) -> list[dict]:
    """Every metric both kernels measured, as a finding: tested (in the family) when each
    has two rounds or more, else untested."""
    from bringup.report import findings as fnd

    out = []
    clock = fnd.same_clock(a.clock.kind, b.clock.kind)
    for n, ma, mb in _pairs(a, b):
        what = mb.name  # the summary says it under its workload's name (sections)
        link = f"../{k}/workloads.json"
        if clock != "host" or (len(ma.values) >= 2 and len(mb.values) >= 2):
            f = fnd.tested_finding(
                what,
                ma.values,
                mb.values,
                mb.unit,
                mb.better,
                link=link,
                a_rounds=ma.rounds,
                b_rounds=mb.rounds,
                key=KEY.format(w=n, m=mb.name),
                clock=clock,
            )
        else:
            f = fnd.untested_finding(what, ma.value, mb.value, mb.unit, mb.better, link=link)
        if f["delta_pct"] is not None:
            out.append({**f, "group": n})
    return out


def kernel_findings(model: dict, base: str, k: str) -> list[dict]:
    """The workload findings of kernel k against the base (none when either has no record)."""
    wl = model.get("workloads") or {}
    return metric_findings(wl[base], wl[k], k) if base in wl and k in wl else []


def sections(metrics: list[dict], k: str) -> list[tuple[str, list[dict]]]:
    """The summary's Workloads section, one line per workload as for lmbench's groups:
    its largest significant differences, or "no significant difference" with the
    closest metric and how many rounds could show one."""
    from bringup.report import findings as fnd

    return [("Workloads", fnd.lmbench_groups(metrics, k, "workloads.json"))] if metrics else []


def summary(metrics: list[dict]) -> list[dict]:
    """After the family's correction: the significant differences only, largest first."""
    sig = [f for f in metrics if f["kind"] in ("tested", "deterministic") and f["significant"]]
    return sorted(sig, key=lambda f: -abs(f["delta_pct"]))


def left_out(recs: dict[str, Workloads], wt: dict) -> list[dict]:
    """The workload files that no kernel's record holds, with why, from the files the records
    saw when they ran (`available`, /4; older records say nothing): a workload outside the
    default set runs only when named.  Said only beside a Workloads section."""
    if not wt.get("workloads"):
        return []
    seen: dict[str, WorkloadFile] = {}
    for rec in recs.values():
        seen.update(rec.available or {})
    ran = {w["name"] for w in wt["workloads"]}
    out = []
    for name, f in sorted(seen.items()):
        if name in ran:
            continue
        if f.default_set is None:
            out.append({"name": name, "why": f"its file does not load: {f.error}"})
        elif f.default_set:
            out.append({"name": name, "why": f"not in these records (make workloads WORKLOADS={name} runs it)"})
        else:
            why = f"runs only when named (default_set = false): WORKLOADS={name} or WORKLOADS=all"
            out.append({"name": name, "why": why})
    return out


def section(wl: dict[str, Workloads], kernels: list[str], floors: dict | None = None) -> WorkloadSection:
    """The report's Workloads section: the tables, the shipped workloads no record holds, the chart's
    values (floors: the A/A floors the chart's instruction-clock bands are drawn from)."""
    wt = tables(wl, kernels)
    wt["left_out"] = left_out(wl, wt)
    ks = wt["kernels"]
    clock = "instructions" if ks and all(wl[k].clock.kind == "instructions" for k in ks) else "host"
    return WorkloadSection(workload_tables=wt, workload_relative=relative(wt, floors, clock))
