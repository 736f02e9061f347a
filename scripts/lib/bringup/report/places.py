"""Place as a factor: the report's "Places" section.

A study spread over several labgrid places (identical boards, docs/labgrid.md)
runs whole rounds per place, so the kernel comparison pairs boots of one round
on one board and no difference between boards enters it.  Whether the boards
*are* identical is a question of its own, asked here and reported apart: for
each kernel and headline milestone (the milestones the management summary
states), each place against the first place of the record, over that kernel's
runs on each:

  - the study's test (stats.study_test), unpaired: the places' runs are
    different boots, not pairs,
  - the Hodges-Lehmann shift with its bootstrap 95 % interval, also in % of the
    first place's median,
  - Benjamini-Hochberg over the family of these place tests (stats.correct; their
    own family: the kernel comparison's family is not made larger by them, nor
    they by it).

A difference is claimed only when q < ALPHA and the interval excludes 0; with
identical places none should be.  On the instruction clock (the record's clock.kind)
no place is tested: a difference is claimed by the rule of stats/deterministic.py,
beyond the milestone's A/A floor.  Records only (boot-timing.json /5:
`places`, `milestones.<name>.places`).
"""

from __future__ import annotations

import statistics
from typing import Any

from bringup import stats
from bringup.parse import milestones as ms
from bringup.records import BootTiming
from bringup.report import findings


def headline_milestones(rules: ms.Rules) -> list[ms.Milestone]:
    """The milestones the summary states (flagged `summary`; the end milestone when none is)."""
    return rules.flagged("summary") or rules.flagged("end")


def compare_places(
    values: list[float], places: list[str], order: list[str], floor_pct: float | None = None
) -> list[dict[str, Any]]:
    """Each place of `order` after the first against the first, over the values
    measured on each (values[i] ran on places[i]).  Rows without p/q adjustment:
    p is the test's; resolve() adds q and the verdict.  floor_pct: on the instruction
    clock, the milestone's A/A floor in %: each row is decided by the rule (`claimed`)
    and not tested."""
    base = order[0]
    by: dict[str, list[float | None]] = {p: [v for v, q in zip(values, places, strict=True) if q == p] for p in order}
    out = []
    for p in order[1:]:
        a, b = by[base], by[p]
        c = stats.study_test(a, b) if floor_pct is None else None
        rule = None if floor_pct is None else stats.judge_pct(a, b, floor_pct)
        row: dict[str, Any] = {
            "base": base,
            "place": p,
            "n_base": len(a),
            "n_place": len(b),
            "median_base": statistics.median([x for x in a if x is not None]) if a else None,
            "median_place": statistics.median([x for x in b if x is not None]) if b else None,
            "p": None,
            "shift": None,
            "shift_ci95": None,
            "relative": None,
            "relative_ci95": None,
            "test": None,
            "claimed": None if rule is None else rule.claimed,
        }
        if rule is not None and row["median_base"]:
            row.update(test="beyond the A/A floor", relative=(rule.delta or 0) / row["median_base"])
        if c is not None:
            row.update(
                p=c.p,
                test=c.name,
                shift=c.shift,
                shift_ci95=list(c.shift_ci95) if c.shift_ci95 else None,
                relative=c.relative,
                relative_ci95=list(c.relative_ci95) if c.relative_ci95 else None,
            )
        out.append(row)
    return out


def resolve(rows: list[dict[str, Any]], alpha: float = stats.ALPHA) -> None:
    """Benjamini-Hochberg over the rows that were tested (their own family); a row is
    `significant` when q < alpha and its shift interval excludes 0."""
    for r, q in zip(rows, stats.correct([r["p"] for r in rows]), strict=True):
        ci = r["shift_ci95"]
        r["q"] = q
        tested = r["p"] is not None
        r["significant"] = (stats.claimed(q, alpha) and ci is not None and (ci[0] > 0 or ci[1] < 0)) if tested else None
        if r.get("claimed") is not None:  # the instruction clock: the rule decided
            r["significant"] = r["claimed"]
        r["verdict"] = (
            "not tested (fewer than 2 runs on a place)"
            if r["significant"] is None
            else "differs"
            if r["significant"]
            else "no difference shown"
        )


def section(
    boot: BootTiming | None, kernels: list[str], rules: ms.Rules, floors: dict | None = None
) -> dict[str, Any] | None:
    """The "Places" section of a boot-timing record spread over two places or more;
    None otherwise.  floors: the A/A floors an instruction-clock record is judged against."""
    if boot is None or len(boot.places) < 2:
        return None
    order = list(boot.places)
    rows: list[dict[str, Any]] = []
    for k in kernels:
        kt = boot.kernels.get(k)
        if kt is None:
            continue
        for m in headline_milestones(rules):
            st = kt.milestones.get(m.name)
            if st is None or not st.values or not st.places or len(st.places) != len(st.values):
                continue
            floor = findings.milestone_floor(floors or {}, m.name) if boot.clock.kind == "instructions" else None
            for r in compare_places(list(st.values), list(st.places), order, floor):
                rows.append({"kernel": k, "name": m.name, "label": m.label, **r})
    resolve(rows)
    runs = {p: boot.round_places.count(p) for p in order}
    claims = [
        f"{r['kernel']}, boot to {r['label']}: {r['place']} {_pct(r['relative'])} against {r['base']} "
        + (
            f"(95 % CI {_pct(r['relative_ci95'][0])} .. {_pct(r['relative_ci95'][1])}, q = {r['q']:.2g})"
            if r["relative_ci95"]
            else "(instruction clock: beyond the A/A floor)"
        )
        for r in rows
        if r["significant"] and (r["relative_ci95"] or r.get("claimed"))
    ]
    return {
        "places": order,
        "rounds": runs,
        "rows": rows,
        "tests": sum(1 for r in rows if r["p"] is not None),
        "claims": claims,
    }


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x * 100:+.1f} %"
