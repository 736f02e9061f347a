"""Compare the boots of two kernels from boot-timing records: two kernels of one
board, one kernel on two boards, or the same kernel on two days (a copy of logs/
kept elsewhere).  `bringup compare A B --boot` (docs/boot-timing.md).

A side is `<record>:<kernel>` (a boot-timing*.json and a kernel id in it), or
`<board>/<kernel>` under the logs directory, which reads the board's
boot-timing-initcalls.json (the initcalls profile: milestones and initcalls) when
it has that kernel, else its boot-timing.json.  The result: each milestone both
sides reached, medians, the Hodges-Lehmann shift with its 95 % interval and the
study's test over the boots (the unit of replication; stats.study_test, paired by
round when both sides are kernels of one record), Benjamini-Hochberg over the
milestones; and, when both sides ran with initcall_debug, the same initcall
attribution as the report's "Boot time explained" (report/bootexplain.py).  On the
instruction clock (both records' clock.kind) nothing is tested: a milestone or an
initcall differs when its difference is beyond the A/A floor (stats/deterministic.py;
the floors of model/clocks.py for the side a's board, its aa.json read beside the
record).  A kernel compared with itself shows no difference."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from bringup import records, stats
from bringup.errors import BringupError
from bringup.model import clocks
from bringup.records import BootTiming
from bringup.report import bootexplain, findings, setcheck
from bringup.report.reading import present


def resolve(ref: str, logs: Path) -> tuple[Path, str]:
    """A side: (record file, kernel id)."""
    path, sep, kid = ref.rpartition(":")
    if sep and path.endswith(".json"):
        f = Path(path)
        if not present(f) or not f.is_file():
            raise BringupError(f"compare --boot: {path}: no such file")
        return f, kid
    board, sep, kid = ref.partition("/")
    if not sep or not board or not kid or "/" in kid:
        raise BringupError(
            f"compare --boot: {ref!r} is neither <record>.json:<kernel> nor <board>/<kernel> under {logs}"
        )
    for name in (records.boot_timing_name(profile="initcalls"), records.boot_timing_name()):
        f = Path(logs) / board / name
        if present(f) and f.is_file() and kid in records.read(f, BootTiming).kernels:
            return f, kid
    raise BringupError(f"compare --boot: {ref}: no boot-timing record under {Path(logs) / board} has kernel {kid!r}")


def check_sets(a_ref: tuple[Path, str], b_ref: tuple[Path, str], say) -> None:
    """The two sides checked (their records read and have the kernel; each record is the file
    its set wrote), then the sets read said (report/setcheck.py)."""
    for f, kid in (a_ref, b_ref):
        _side(f, kid)
    setcheck.check("compare --boot", [a_ref[0], b_ref[0]], say)


def _side(f: Path, kid: str) -> tuple[BootTiming, Any]:
    rec = records.read(f, BootTiming)
    k = rec.kernels.get(kid)
    if k is None:
        known = ", ".join(rec.kernels) or "none"
        raise BringupError(f"{f}: field 'kernels': no kernel {kid!r} (known: {known})")
    if not k.ok:
        raise BringupError(f"{f}: field 'kernels.{kid}.ok': 0: no good boot to compare")
    return rec, k


def _milestone_row(name: str, label: str, times: tuple, values: tuple, rounds: tuple, floor: float | None) -> dict:
    """One milestone both sides reached: the medians (times), and the study's test of the values
    (rounds: None when they do not pair), or on the instruction clock (floor, in %) the rule."""
    (sa, sb), (va, vb) = times, values
    t = stats.study_test(va, vb, *rounds) if floor is None else None
    rule = None if floor is None else stats.judge_pct(va, vb, floor)
    ci = None if t is None else t.shift_ci95
    return {
        "milestone": name,
        "label": label,
        "a_s": sa.median,
        "b_s": sb.median,
        "n": [len(va), len(vb)],
        "shift_s": rule.delta if rule is not None else None if t is None else t.shift,
        "ci95_s": list(ci) if ci else None,
        "test": "beyond the A/A floor" if floor is not None else None if t is None else t.name,
        "p": None if t is None else t.p,
        "q": None,
        "threshold_s": None if rule is None else rule.threshold,
        "significant": bool(rule and rule.claimed),
    }


def compare(a_ref: tuple[Path, str], b_ref: tuple[Path, str], floors: dict | None = None) -> dict:
    """The two sides compared (module); floors: the A/A floors for records on the instruction
    clock (None: model/clocks.py floors() of side a's board, its logs the record's parent's parent)."""
    (fa, ka), (fb, kb) = a_ref, b_ref
    ra, a = _side(fa, ka)
    rb, b = _side(fb, kb)
    la, lb = f"{ra.board}/{ka}", f"{rb.board}/{kb}"
    if la == lb and fa.resolve() != fb.resolve():
        la, lb = f"{la} ({fa})", f"{lb} ({fb})"
    if ra.clock.kind != rb.clock.kind:
        raise BringupError(
            f"{fa} and {fb}: one was measured on the {ra.clock.kind} clock, the other on the {rb.clock.kind} "
            "clock; their times do not compare (docs/clock.md)"
        )
    # two kernels of one record ran in the same rounds: their boots pair by round; other sides do not
    same = fa.resolve() == fb.resolve()
    deterministic = ra.clock.kind == "instructions"
    if deterministic and floors is None:
        floors = clocks.floors(ra.board, fa.resolve().parent.parent)
    rows: list[dict[str, Any]] = []
    for name, ma in a.milestones.items():
        mb = b.milestones.get(name)
        sa, sb = ra.times(ma), rb.times(mb) if mb is not None else None
        if mb is None or sa is None or sb is None:
            continue
        rounds = (ma.rounds, mb.rounds) if same else (None, None)
        floor = findings.milestone_floor(floors or {}, name) if deterministic else None
        values = (list(ma.values or []), list(mb.values or []))
        rows.append(_milestone_row(name, ma.label, (sa, sb), values, rounds, floor))
    if not deterministic:
        for r, q in zip(rows, stats.correct([r["p"] for r in rows]), strict=True):
            r["q"] = q
            r["significant"] = stats.claimed(q)
    out: dict[str, Any] = {
        "a": {"label": la, "record": str(fa), "profile": ra.profile, "runs": a.ok},
        "b": {"label": lb, "record": str(fb), "profile": rb.profile, "runs": b.ok},
        "milestones": rows,
        "initcalls": None,
        "clock": ra.clock.kind,
    }
    if a.initcalls is not None and b.initcalls is not None:
        ia, ib = a.initcalls.model_dump(), b.initcalls.model_dump()
        floor = findings.milestone_floor(floors or {}, ia["end_milestone"] or ib["end_milestone"])
        out["initcalls"] = bootexplain.attribute(ia, ib, la, lb, same, floor if deterministic else None)
    elif a.initcalls is not None or b.initcalls is not None:
        out["initcalls_left_out"] = "only one side booted with initcall_debug (the initcalls profile)"
    return out


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x * 1000:.1f}"


def _tests(rows: list[dict]) -> str:
    """The tests the rows used, by name ("paired t-test (log ratios)")."""
    return " / ".join(dict.fromkeys(r["test"] for r in rows if r.get("test"))) or "no test"


def _how(c: dict) -> str:
    """How the milestones were compared, for the table's head."""
    if c.get("clock") == "instructions":
        return (
            "instruction clock: shift B-A the difference of the medians; * beyond "
            f"{stats.FLOOR_MULTIPLE:g} x the A/A floor and {stats.SIZE_PCT:g} % (docs/clock.md), nothing tested"
        )
    return (
        "shift B-A: Hodges-Lehmann with its 95 % interval; "
        f"{_tests(c['milestones'])} over the boots, Benjamini-Hochberg over the milestones; * q < 0.05"
    )


def render(c: dict, top: int = 20) -> str:
    a, b = c["a"], c["b"]
    how = _how(c)
    lines = [
        f"A = {a['label']} ({a['runs']} boots, profile {a['profile']}), "
        f"B = {b['label']} ({b['runs']} boots, profile {b['profile']})",
        "",
        f"Milestones (ms after the reference; {how}):",
    ]
    w = max([len(r["label"]) for r in c["milestones"]] + [10])
    lines.append(f"  {'':<{w}} {'A':>9} {'B':>9} {'shift':>9}  {'95 % interval':<21} {'p':>6} {'q':>6}")
    for r in c["milestones"]:
        ci = r["ci95_s"]
        ci_t = f"{_ms(ci[0])} … {_ms(ci[1])}" if ci else "-"
        p = "-" if r["p"] is None else f"{r['p']:.3f}"
        q = "-" if r["q"] is None else f"{r['q']:.3f}"
        lines.append(
            f"  {r['label']:<{w}} {_ms(r['a_s']):>9} {_ms(r['b_s']):>9} {_ms(r['shift_s']):>9}  {ci_t:<21} "
            f"{p:>6} {q:>6}{' *' if r['significant'] else ''}"
        )
    if not c["milestones"]:
        lines.append("  (no milestone reached on both sides)")
    att = c.get("initcalls")
    if att:
        lines += [
            "",
            f"Initcalls (initcall_debug; time to {att['end_milestone']}: "
            f"{_ms(att['end_a_s'])} → {_ms(att['end_b_s'])} ms, {att['delta_us'] / 1000:+.1f} ms"
            + ("" if att["delta_p"] is None else f", p={att['delta_p']:.3f}")
            + "):",
            f"  initcalls in total: {(att['initcalls_total']['a_us'] or 0) / 1000:.1f} → "
            f"{(att['initcalls_total']['b_us'] or 0) / 1000:.1f} ms; "
            f"appeared {len(att['appeared'])}, vanished {len(att['vanished'])}; "
            f"{att['tested']} {'judged' if att.get('rule') == 'floor' else 'tested'}, "
            f"{len(att['significant'])} significant "
            + (
                f"(* beyond {stats.FLOOR_MULTIPLE:g} x the A/A floor of {att['floor_us'] / 1000:.2g} ms)"
                if att.get("rule") == "floor"
                else "(* q < 0.05)"
            ),
        ]
        kw = max([len(r["key"]) for r in bootexplain.top_changes(att, top)] + [10])
        for r in bootexplain.top_changes(att, top):
            q = "-" if r["q"] is None else f"{r['q']:.3f}"
            lines.append(
                f"  {r['key']:<{kw}} {r['a_us'] / 1000:>9.2f} {r['b_us'] / 1000:>9.2f} "
                f"{r['delta_us'] / 1000:>+9.2f} ms  {r['status']:<8} q={q}{' *' if r['significant'] else ''}"
            )
        lines.append(
            f"  explained by these rows: {att['explained_us'] / 1000:+.1f} ms; "
            f"left unexplained: {att['unexplained_us'] / 1000:+.1f} ms"
        )
    elif c.get("initcalls_left_out"):
        lines += ["", f"Initcalls left out: {c['initcalls_left_out']}"]
    return "\n".join(lines) + "\n"


def to_csv(c: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["kind", "what", "a", "b", "delta", "unit", "p", "q", "significant"])
    for r in c["milestones"]:
        d = None if r["shift_s"] is None else r["shift_s"]
        w.writerow(["milestone", r["milestone"], r["a_s"], r["b_s"], d, "s", r["p"], r["q"], r["significant"]])
    for r in (c.get("initcalls") or {}).get("rows", []):
        w.writerow([r["kind"], r["key"], r["a_us"], r["b_us"], r["delta_us"], "us", r["p"], r["q"], r["significant"]])
    return buf.getvalue()


def to_json(c: dict) -> str:
    return json.dumps(c, indent=2) + "\n"
