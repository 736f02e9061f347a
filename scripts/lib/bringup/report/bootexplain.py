"""Boot time explained: which initcalls make one kernel boot slower than another.

Reads the initcalls profile's boot-timing record only (boot-timing-initcalls.json,
`kernels.<id>.initcalls`: per run, every initcall's printed duration, the time to the
after_initcalls milestone and the time before the kernel's clock started).

Per kernel (`kernel_view`): the total time in initcalls (median over the runs), the
top N initcalls by median duration, and the time per level (early ... late) where the
System.map gave the levels.

Between two kernels (`attribute`), the rules:
  - the difference to explain, D, is the difference of the medians of the time from
    the reference to the after_initcalls milestone ("Freeing unused kernel memory"),
    measured in these same runs (initcall_debug slows a boot; the timing profile's
    numbers are not mixed in);
  - each initcall's time in a run is its printed duration, 0 in a run where it did not
    run: so an initcall only one kernel has (appeared, vanished) is compared with 0;
  - a row's share is the difference of its medians; the time before the kernel clock
    (host time at the kernel's clock zero, from the reference) is two rows like the
    others: loading and starting the kernel until its first console line (the
    bootloader's load, decompression, early boot), and the time its lines stamped
    [0.000000] hid (from that first line to the clock's zero); one row, "time before
    the kernel clock", in records without the split (before boot-timing/6);
  - unexplained = D minus the sum of every row's share: the kernel's own work outside
    initcalls (start_kernel before the first initcall, the work between them), the
    console output of the initcall lines themselves, and the error of summing medians;
  - significance: the study's test over the runs (stats.study_test: paired by round
    when both kernels' runs are of one record's rounds; on the values themselves
    when a run printed 0) for each row whose median is at least MIN_TESTED_US in
    either kernel (a filter on size, not on the difference), Benjamini-Hochberg over
    those rows (stats.correct); a row is significant when its q-value is below stats.ALPHA;
  - on the instruction clock (the record's clock.kind; stats/deterministic.py) no row
    is tested: the runs of one kernel give the same durations, or durations a few
    icount steps apart, and a t-test would claim one step.  A row (of the same size
    filter) is significant when its difference is beyond the rule's threshold, its
    floor in us being the end milestone's A/A floor (floor_pct, in %) applied to that
    milestone's time; the time to the milestone itself is judged by the same rule
    with the same floor;
  - clock ticks: until its real clocksource runs, a kernel times initcalls with the
    jiffy, and prints 0 or one tick (10000 us at HZ=100) and nothing between.  A
    kernel's tick is the duration of 1 ms or more it prints most often (at least 5
    times, 3 times as often as any other); a row whose every duration in both
    kernels is a whole number of ticks, and whose difference is no more than a tick,
    is marked `tick` and not tested; a larger one is tested with the tick as its
    resolution (stats.study_test).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from bringup import stats
from bringup.stats import FLOOR_MULTIPLE, SIZE_PCT

MIN_TESTED_US = 1000  # rows smaller than this in both kernels are shown, never tested
LEVEL_ORDER = ("early", "pure", "core", "postcore", "arch", "subsys", "fs", "rootfs", "device", "late")


def _median(values: list[float | None]) -> float | None:
    v = [x for x in values if x is not None]
    return statistics.median(v) if v else None


def clock_tick(ic: dict) -> int | None:
    """The jiffy a kernel timed its early initcalls with, seen as the one duration of
    1 ms or more it prints far more often than any other; None when there is none."""
    counts: dict[int, int] = {}
    for c in ic.get("calls") or []:
        for x in c["us"]:
            if x is not None and x >= 1000:
                counts[x] = counts.get(x, 0) + 1
    if not counts:
        return None
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    value, n = ranked[0]
    if n >= 5 and (len(ranked) == 1 or n >= 3 * ranked[1][1]):
        return value
    return None


def _in_ticks(values: list[float], tick: int | None) -> bool:
    return tick is not None and all(x % tick == 0 for x in values)


def median_of(values: list[float | None]) -> float | None:
    """The median of the values that are there (None when none is)."""
    return _median(values)


def key(call: dict) -> str:
    return call["fn"] + (f" [{call['module']}]" if call.get("module") else "")


def _per_run(call: dict) -> list[float]:
    return [float(x or 0) for x in call["us"]]


def kernel_view(ic: dict, top: int = 10) -> dict[str, Any]:
    """One kernel's initcalls: total, top N by median duration, time per level."""
    calls = ic.get("calls") or []
    rows = []
    for c in calls:
        med = _median([float(x) for x in c["us"] if x is not None])
        if med is None:
            continue
        rows.append(
            {
                "key": key(c),
                "fn": c["fn"],
                "module": c.get("module"),
                "level": c.get("level"),
                "median_us": med,
                "runs": sum(1 for x in c["us"] if x is not None),
                "start_s": _median(c["start_s"]),
            }
        )
    rows.sort(key=lambda r: -r["median_us"])
    n = len(ic.get("runs") or [])
    levels: dict[str, float] = {}
    for i in range(n):
        per: dict[str, float] = {}
        for c in calls:
            lv = c.get("level") or "unknown"
            per[lv] = per.get(lv, 0.0) + float(c["us"][i] or 0)
        for lv, v in per.items():
            levels.setdefault(lv, 0.0)
            levels[lv] = levels[lv] + v / n
    order = {lv: i for i, lv in enumerate((*LEVEL_ORDER, "unknown"))}
    return {
        "runs": n,
        "count": _median([float(x) for x in ic.get("count") or []]),
        "total_us": _median([float(x) for x in ic.get("total_us") or []]),
        "end_s": _median(ic.get("end_s") or []),
        "end_milestone": ic.get("end_milestone"),
        "before_clock_s": _median(ic.get("before_clock_s") or []),
        "unresolved": ic.get("unresolved", 0),
        "format": ic.get("format"),
        "top": rows[:top],
        "by_level": [{"level": lv, "mean_us": levels[lv]} for lv in sorted(levels, key=lambda x: order.get(x, 99))],
        "levels_known": any(c.get("level") for c in calls),
    }


LOADING = "loading and starting the kernel (until its first line)"
HIDDEN = "time hidden at [0.000000] (before its clock ran)"
BEFORE_CLOCK = "time before the kernel clock"


def _before_clock(a: dict, b: dict) -> list[tuple[str, list[float], list[float]]]:
    """The rows before the kernel's clock zero, in us per run: split into the time until
    the kernel's first line (bootloader load, decompression, early boot) and the time
    its lines stamped [0.000000] hid, when both kernels' runs say both; else one row."""

    def split(ic: dict) -> tuple[list[float], list[float], list[float]]:
        before = ic.get("before_clock_s") or []
        hidden = ic.get("hidden_at_zero_s") or []
        whole = [x * 1e6 for x in before if x is not None]
        if len(hidden) != len(before) or any(x is None for x in before + hidden):
            return whole, [], []
        return whole, [(x - h) * 1e6 for x, h in zip(before, hidden, strict=True)], [h * 1e6 for h in hidden]

    wa, la, ha = split(a)
    wb, lb, hb = split(b)
    if not (wa and wb):
        return []
    if la and lb:
        return [(LOADING, la, lb), (HIDDEN, ha, hb)]
    return [(BEFORE_CLOCK, wa, wb)]


@dataclass(frozen=True)
class Sides:
    """What every row of one attribution shares: each kernel's clock tick, each kernel's
    round of every run (None: the runs do not pair by round), and on the instruction
    clock the rows' floor in us (None: the host clock, the study's test)."""

    ticks: tuple[int | None, int | None]
    rounds: tuple[list[int] | None, list[int] | None]
    floor_us: float | None = None

    def test(self, va: list, vb: list) -> stats.Comparison | None:
        """The study's test of one row's runs; durations in whole clock ticks are known to
        a tick (the resolution: 0 → 2 ticks in two runs each is not 20 ms for certain)."""
        ticks = [t for t, v in zip(self.ticks, (va, vb), strict=True) if t is not None and _in_ticks(v, t)]
        return stats.study_test(va, vb, *self.rounds, resolution=max(ticks, default=None))

    def judge(self, va: list, vb: list) -> stats.Decision | None:
        """The instruction clock's rule for one row's runs (its floor: floor_us)."""
        return stats.judge(va, vb, self.floor_us or 0.0)


def _row(kind: str, label: str, va: list[float], vb: list[float], sides: Sides, status: str | None) -> dict[str, Any]:
    """One row of the attribution: the medians of a and b, the change, and the study's test
    when it is large enough to test and not a clock tick's step."""
    ticks = sides.ticks
    ma, mb = _median(list(va)) or 0.0, _median(list(vb)) or 0.0
    tick = (
        kind == "initcall"
        and _in_ticks(va, ticks[0])
        and _in_ticks(vb, ticks[1])
        and abs(mb - ma) <= max(t or 0 for t in ticks)
    )
    row = {
        "kind": kind,
        "key": label,
        "a_us": ma,
        "b_us": mb,
        "delta_us": mb - ma,
        "status": status or ("grew" if mb > ma else "shrank" if mb < ma else "same"),
        "p": None,
        "q": None,
        "significant": False,
        "tick": tick,
        "tested": max(abs(ma), abs(mb)) >= MIN_TESTED_US and not tick,
    }
    if row["tested"] and sides.floor_us is not None:
        rule = sides.judge(va, vb)
        row["significant"] = rule is not None and rule.claimed
        row["threshold_us"] = None if rule is None else rule.threshold
    elif row["tested"]:
        t = sides.test(va, vb)
        row["p"] = None if t is None else t.p
    return row


def _rows(a: dict, b: dict, sides: Sides) -> list[dict[str, Any]]:
    """The time before the kernel's clock, then every initcall of either kernel (one that
    ran in one kernel only counts 0 in the other's runs)."""
    rows = [_row("clock", label, va, vb, sides, None) for label, va, vb in _before_clock(a, b)]
    ca = {key(c): c for c in a.get("calls") or []}
    cb = {key(c): c for c in b.get("calls") or []}
    na, nb = len(a.get("runs") or []), len(b.get("runs") or [])
    for k in list(ca) + [k for k in cb if k not in ca]:
        va = _per_run(ca[k]) if k in ca else [0.0] * na
        vb = _per_run(cb[k]) if k in cb else [0.0] * nb
        status = "appeared" if k not in ca else "vanished" if k not in cb else None
        rows.append(_row("initcall", k, va, vb, sides, status))
    return rows


def attribute(
    a: dict, b: dict, name_a: str, name_b: str, by_round: bool = True, floor_pct: float | None = None
) -> dict[str, Any] | None:
    """What makes kernel b's time to the after_initcalls milestone differ from kernel a's
    (see the module's rules); None when either has no runs with that milestone, or
    printed no initcall (a 2.4 kernel: every initcall of the other would look new).
    by_round: a and b are kernels of one record, their runs pair by round.  floor_pct:
    measured on the instruction clock, the end milestone's A/A floor in % (the rule of
    stats/deterministic.py instead of the test); None on the host clock."""
    end_a, end_b = _median(a.get("end_s") or []), _median(b.get("end_s") or [])
    if end_a is None or end_b is None:
        return None
    if not any(a.get("total_us") or []) or not any(b.get("total_us") or []):
        return None  # a kernel that printed no initcall at all (2.4 has no initcall_debug): nothing to attribute
    d_us = (end_b - end_a) * 1e6
    ticks = (clock_tick(a), clock_tick(b))
    floor_us = None if floor_pct is None else floor_pct / 100 * end_a * 1e6
    rounds = (a.get("rounds") or None, b.get("rounds") or None) if by_round else (None, None)
    sides = Sides(ticks, rounds, floor_us)
    rows = _rows(a, b, sides)
    na, nb = len(a.get("runs") or []), len(b.get("runs") or [])
    if floor_us is None:
        for r, q in zip(rows, stats.correct([r["p"] for r in rows]), strict=True):
            r["q"] = q
            r["significant"] = stats.claimed(q)
    explained = sum(r["delta_us"] for r in rows)
    ta = [float(x) for x in a.get("total_us") or []]
    tb = [float(x) for x in b.get("total_us") or []]
    total = sides.test(ta, tb) if floor_us is None else None
    initcall_rows = [r for r in rows if r["kind"] == "initcall"]
    return {
        "a": name_a,
        "b": name_b,
        "end_milestone": a.get("end_milestone") or b.get("end_milestone"),
        "runs": [na, nb],
        "delta_us": d_us,
        **_end_delta(a.get("end_s") or [], b.get("end_s") or [], sides, floor_pct),
        "end_a_s": end_a,
        "end_b_s": end_b,
        "explained_us": explained,
        "unexplained_us": d_us - explained,
        "initcalls_delta_us": sum(r["delta_us"] for r in initcall_rows),
        "initcalls_total": {
            "a_us": _median(list(ta)),
            "b_us": _median(list(tb)),
            "p": None if total is None else total.p,
        },
        "rows": rows,
        "tested": sum(1 for r in rows if r["p"] is not None or r.get("threshold_us") is not None),
        "significant": [r for r in rows if r["significant"]],
        "ticks_us": list(ticks),
        "appeared": [r for r in initcall_rows if r["status"] == "appeared"],
        "vanished": [r for r in initcall_rows if r["status"] == "vanished"],
    }


def _end_delta(a: list, b: list, sides: Sides, floor_pct: float | None) -> dict[str, Any]:
    """Whether the time to the end milestone differs: its test alone (p < ALPHA), or on the
    instruction clock (floor_pct) the rule; and which of the two decided."""
    test = sides.test(a, b) if floor_pct is None else None
    rule = None if floor_pct is None else stats.judge_pct(a, b, floor_pct)
    p = None if test is None else test.p
    return {
        "delta_p": p,
        "delta_significant": stats.claimed(p) or bool(rule and rule.claimed),
        "rule": "test" if floor_pct is None else "floor",
        "floor_pct": floor_pct,
        "floor_us": sides.floor_us,
    }


def top_changes(att: dict, n: int = 10) -> list[dict]:
    """The rows with the largest differences, largest first (grown and shrunk)."""
    return sorted((r for r in att["rows"] if r["delta_us"]), key=lambda r: -abs(r["delta_us"]))[:n]


def claim(att: dict, label: str | None = None) -> str | None:
    """The summary's sentence, in seed 002's voice, only when a row is significant after
    the correction; None otherwise (nothing is claimed).  The difference in the time to
    the milestone is stated as a finding only when it is itself significant (the study's
    test over the runs, alone: p < stats.ALPHA; on the instruction clock: beyond the A/A
    floor).  label: the after_initcalls milestone's label, else its name."""
    sig = sorted(att["significant"], key=lambda r: -abs(r["delta_us"]))
    if not sig:
        return None
    what = label or att["end_milestone"]
    d = att["delta_us"] / 1000
    rows = ", ".join(f"`{r['key']}` {r['delta_us'] / 1000:+.1f} ms" for r in sig[:4])
    more = f" and {len(sig) - 4} more" if len(sig) > 4 else ""
    tested = (
        f"beyond {FLOOR_MULTIPLE:g} x the A/A floor ({att['floor_us'] / 1000:.2g} ms) and {SIZE_PCT:g} %, "
        f"instruction clock, {att['tested']} rows judged"
        if att.get("rule") == "floor"
        else f"significant after Benjamini-Hochberg over {att['tested']} tests"
    )
    if att.get("delta_significant", stats.claimed(att.get("delta_p"))):
        when = "later" if d > 0 else "sooner"
        head = f"with initcall_debug, {att['b']} reaches {what} {abs(d):.1f} ms {when} than {att['a']}"
        return f"{head}; in initcalls: {rows}{more} ({tested})"
    return (
        f"with initcall_debug, {att['b']}'s initcalls differ from {att['a']}'s: {rows}{more} ({tested}); "
        f"the time to {what} differs by {d:+.1f} ms, "
        + ("within the A/A floor" if att.get("rule") == "floor" else "not significantly")
    )
