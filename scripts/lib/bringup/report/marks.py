"""What the summary decides, carried back into the tables: a delta is marked * only
when the summary's corrected family says so, and the boot explained's significant
attributions become summary bullets."""

from __future__ import annotations

from bringup import records


def explained_findings(model: dict) -> None:
    """A summary bullet per kernel pair whose attribution is significant after the correction; none otherwise."""
    be = model.get("boot_explained")
    if not be:
        return
    for p in be["pairs"]:
        if not p["claim"]:
            continue
        for f in model["findings"]:
            if f["kernel"] == p["b"] and f["against"] == p["a"]:
                item = {"kind": "tested", "significant": True, "claim": p["claim"], "link": "#boot-explained"}
                f["sections"].append(("Boot time explained", [item]))


def mark_from_family(model: dict) -> None:
    """Table marks from the summary's corrected family: a delta is marked * only when
    the summary tested it and its Benjamini-Hochberg q-value < ALPHA; a value the
    summary did not test gets no mark (its p alone would overstate it).  On the
    instruction clock the summary decided it against the A/A floor (findings.decide,
    stats/deterministic.py): marked * when that decision states it, (n.s.) when not."""
    tested = {f["kernel"]: f.get("tested", {}) for f in model["findings"]}
    decided = {f["kernel"]: f.get("deterministic", {}) for f in model["findings"]}

    def mark(deltas: list, ks: list[str], key: str) -> None:
        for k, d in zip(ks[1:], deltas, strict=False):
            if not d:
                continue
            t = tested.get(k, {}).get(key)
            det = decided.get(k, {}).get(key)
            d["q"] = None if t is None else t["q"]
            d["significant"] = t["significant"] if t is not None else None if det is None else det["significant"]

    boot = model.get("boot")
    if boot:
        ks = [k for k in model["kernels"] if k in boot.kernels]
        for row in model["boot_rows"]:
            mark(row["deltas"], ks, f"{records.boot_timing_name()}:{row['name']}")
    nfs = model.get("boot_nfs")
    if nfs:
        ks = [k for k in model["kernels"] if k in nfs["summary"].kernels]
        for row in nfs["rows"]:
            mark(row["deltas"], ks, f"{records.boot_timing_name('nfs')}:{row['name']}")
    lm = model.get("lmbench_groups") or {}
    for g in lm.get("groups", []):
        for row in g["rows"]:
            mark(row["deltas"], lm["kernels"], f"lmbench:{row['name']}")
    wt = model.get("workload_tables") or {}
    for w in wt.get("workloads", []):
        for row in w["rows"]:
            mark(row["deltas"], wt["kernels"], row["key"])
