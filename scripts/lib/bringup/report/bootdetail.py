"""The boot sections' details: "Boot time explained" from the initcalls profile's
record (report/bootexplain.py), the console's cost before user space (timing runs
against quiet runs) and the deferred probes each kernel's good runs printed."""

from __future__ import annotations

from typing import Any

from bringup import records, stats
from bringup.model.board import Board
from bringup.records import BootTiming
from bringup.report import bootexplain, findings
from bringup.report.inputs import Gathered


def details(board: Board, g: Gathered, rules, floors: dict | None = None) -> dict[str, Any]:
    """The BootSection's boot_explained, console_cost and deferred.  floors: the A/A floors
    (model/clocks.py floors()) records on the instruction clock are judged against
    (stats/deterministic.py); None: the shipped default's."""
    bdir, boot, kernels = g.bdir, g.inputs.boot, g.kernels
    icname = records.boot_timing_name(profile="initcalls")
    ic = g.reader.read(bdir / icname, BootTiming)
    labels = {m.name: m.label for m in rules.milestones}
    explained = _boot_explained(ic, kernels, icname, labels, floors or {}) if ic else None
    quiet = g.reader.read(bdir / records.boot_timing_name(profile="quiet"), BootTiming)
    return {
        "boot_explained": explained,
        "console_cost": _console_cost(board, boot, quiet, kernels, rules, floors or {}),
        "deferred": _deferred({"timing": boot, "initcalls": ic}, kernels),
    }


def initcall_floor(rec: BootTiming, floors: dict, a: dict, b: dict) -> float | None:
    """The floor the initcall attribution of two kernels' blocks (a, b) of an initcalls record
    is judged against: on the instruction clock the end milestone's A/A floor in %; None on the
    host clock (the study's test)."""
    if rec.clock.kind != "instructions":
        return None
    return findings.milestone_floor(floors, a.get("end_milestone") or b.get("end_milestone"))


def _boot_explained(
    ic: BootTiming, kernels: list[str], fname: str, labels: dict, floors: dict, top: int = 10
) -> dict | None:
    """The "Boot time explained" section from the initcalls profile's record
    (report/bootexplain.py): per kernel its initcalls, against the first kernel the
    initcalls that grew, shrank, appeared or vanished."""
    blocks = {}
    for k in kernels:
        block = ic.kernels[k].initcalls if k in ic.kernels else None
        if block is not None and block.runs:
            blocks[k] = block.model_dump()
    if not blocks:
        return None
    ks = list(blocks)
    views = {k: bootexplain.kernel_view(blocks[k], top) for k in ks}
    for v in views.values():
        v["end_label"] = labels.get(v["end_milestone"] or "", v["end_milestone"])
    timeline = {
        k: [
            {
                "key": bootexplain.key(c),
                "level": c["level"],
                "start_s": bootexplain.median_of(c["start_s"]),
                "us": bootexplain.median_of([float(x) for x in c["us"] if x is not None]),
            }
            for c in blocks[k]["calls"]
        ]
        for k in ks
    }
    pairs = []
    for k in ks[1:]:
        floor = initcall_floor(ic, floors, blocks[ks[0]], blocks[k])
        att = bootexplain.attribute(blocks[ks[0]], blocks[k], ks[0], k, floor_pct=floor)
        if att is not None:
            label = labels.get(att["end_milestone"] or "")
            pairs.append(
                {
                    **att,
                    "end_label": label or att["end_milestone"],
                    "top": bootexplain.top_changes(att, top),
                    "claim": bootexplain.claim(att, label),
                }
            )
    return {
        "file": fname,
        "cmdline_args": dict(ic.cmdline_args),
        "kernels": views,
        "pairs": pairs,
        "timeline": timeline,
        "levels": list(bootexplain.LEVEL_ORDER) + ["unknown"],
    }


def _deferred(recs: dict[str, BootTiming | None], kernels: list[str]) -> dict | None:
    """The deferred probes each kernel's good runs printed, per profile record that
    keeps them (boot-timing /6); None when no record does (older records)."""
    rows, seen = [], []
    for profile, rec in recs.items():
        for k in kernels:
            t = rec.kernels.get(k) if rec else None
            if t is None or t.deferred is None:
                continue
            seen.append({"kernel": k, "profile": profile, "runs": t.ok})
            rows += [{"kernel": k, "profile": profile, "of": t.ok, **d.model_dump()} for d in t.deferred]
    return {"rows": rows, "seen": seen} if seen else None


def _console_cost(
    board: Board, boot: BootTiming | None, quiet: BootTiming | None, kernels: list[str], rules, floors: dict
) -> dict | None:
    """Console output before user space per kernel (the timing profile's runs), its cost
    at the console's baud rate, and the end milestone's time in quiet runs against the
    timing runs when both records exist: the study's test (stats.study_test; unpaired: the
    two profiles' runs are different boots), Benjamini-Hochberg over the kernels' rows; on
    the instruction clock (both records) the rule of stats/deterministic.py instead, against
    the end milestone's A/A floor (`significant`; no p)."""
    end = next((m for m in rules.milestones if m.end), None)
    rows = []
    for k in kernels:
        t = boot.kernels.get(k) if boot else None
        q = quiet.kernels.get(k) if quiet else None
        c = t.console if t else None
        if c is None and q is None:
            continue
        row: dict[str, Any] = {
            "kernel": k,
            "bytes": c.bytes.median if c else None,
            "kernel_bytes": c.kernel_bytes.median if c and c.kernel_bytes else None,
            "baud": c.baud if c else None,
            "cost_s": c.cost_s if c else None,
            "timing_s": None,
            "quiet_s": None,
            "p": None,
            "q": None,
            "test": None,
            "significant": None,
        }
        if end is not None and t and q and end.name in t.milestones and end.name in q.milestones:
            a, b = t.milestones[end.name], q.milestones[end.name]
            assert boot is not None and quiet is not None
            ha, hb = boot.times(a), quiet.times(b)
            row["timing_s"] = ha.median if ha else None
            row["quiet_s"] = hb.median if hb else None
            row.update(_console_judged(boot, quiet, end.name, a.values or [], b.values or [], floors))
        rows.append(row)
    if not rows:
        return None
    for row, qvalue in zip(rows, stats.correct([r["p"] for r in rows]), strict=True):
        row["q"] = qvalue
        if row["p"] is not None:
            row["significant"] = stats.claimed(qvalue)
    return {
        "rows": rows,
        "end": end.label if end else None,
        "qemu": not board.target.console_rate_limited,
        "until": next((m.label for m in rules.milestones if m.after_initcalls), None),
    }


def _console_judged(boot: BootTiming, quiet: BootTiming, end: str, a: list, b: list, floors: dict) -> dict:
    """The quiet runs' time to the end milestone against the timing runs': on the instruction
    clock (both records) by the rule of stats/deterministic.py, else the study's test (its p)."""
    if boot.clock.kind != quiet.clock.kind:
        return {}  # times on two clocks do not compare (docs/clock.md)
    if boot.clock.kind == "instructions":
        rule = stats.judge_pct(a, b, findings.milestone_floor(floors, end))
        return {"test": "beyond the A/A floor", "significant": None if rule is None else rule.claimed}
    test = stats.study_test(a, b)
    return {} if test is None else {"p": test.p, "test": test.name}
