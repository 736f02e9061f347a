"""The management summary: findings generated from the records, in the voice of
seed 002 ("slow to build: +31 % real time", "compressed image +27 %").

Rules (docs/report.md says the same, for readers):
- Deterministic quantities (image and section sizes of a reproducible build,
  the kernel's own `Memory:` line, MemTotal) are stated as they are when they
  differ by at least SIZE_PCT %, else "about the same".
- Quantities measured in rounds of boots on the host clock (boot milestones, mem_eat,
  lmbench: one value per kernel per boot) are tested by the study's test
  (stats.study_test: paired by round when the values carry their rounds).  All
  the tests of one kernel against the base form one family, corrected with
  Benjamini-Hochberg (stats.correct): a difference is claimed only when its q-value
  < ALPHA, and it is stated with its Hodges-Lehmann shift and bootstrap 95 % interval.
  Otherwise the finding reads "no significant difference" and gives the smallest
  difference the run could have claimed (the test's threshold at alpha/family).
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

from bringup import stats
from bringup.report.tables import pct
from bringup.stats import FLOOR_MULTIPLE, SIZE_PCT

ALPHA = stats.ALPHA  # the one definition is stats/study.py's
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


def _values(kind: str, what: str, a: float | None, b: float | None, unit: str) -> dict:
    """A finding of two values and their delta (its significance, verdict and detail follow)."""
    return {"kind": kind, "what": what, "significant": None, "delta_pct": pct(a, b), "a": a, "b": b, "unit": unit}


def size_finding(what: str, a: float, b: float, unit: str, link: str = "") -> dict:
    f = _values("size", what, a, b, unit)
    d = f["delta_pct"]
    f.update(significant=None if d is None else abs(d) >= SIZE_PCT, link=link)
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
    resolution: float | None = None,
) -> dict:
    """A tested comparison; its verdict waits for the family's correction (resolve()).
    On the instruction clock: a deterministic comparison, decided against the A/A floor (decide()).
    resolution: the values' quantum when they are counted in steps (stats.study_test)."""
    if clock == "instructions":
        return deterministic_finding(what, a_vals, b_vals, unit, better, slower, faster, link, key or what)
    a_clean, b_clean, ma, mb = _medians(a_vals, b_vals)
    words = (unit, better, slower, faster, link)
    if clock == "mixed":  # one kernel on the instruction clock, the other on the host's: never compared
        why = "not comparable (docs/clock.md)"
        return untested_finding(what, ma, mb, *words, runs="measured on different clocks", why=why)
    c = stats.study_test(a_vals, b_vals, a_rounds, b_rounds, resolution)
    n = _n_text(c, a_clean, b_clean)
    if c is None:
        return untested_finding(what, ma, mb, *words, runs="one run each" if len(a_clean) == len(b_clean) == 1 else n)
    return {
        "kind": "tested",
        "key": key or what,
        **_compared(what, ma, mb, unit, better, (slower, faster)),
        "p": c.p,
        "q": None,
        "test": c.name,
        "paired": c.paired,
        "rounds": c.n,
        "shift": c.shift,
        "shift_ci95": c.shift_ci95,
        "t": {"se": c.se, "df": c.df, "scale": c.scale},
        "n": [len(a_clean), len(b_clean)],
        "n_text": n,
        "link": link,
        "significant": None,
    }


def _compared(what: str, ma: float | None, mb: float | None, unit: str, better: str, words: tuple) -> dict:
    """What a compared finding says of its two medians: the delta, the unit, which way is better."""
    return {"what": what, "delta_pct": pct(ma, mb), "a": ma, "b": mb, "unit": unit, "better": better, "words": words}


def _medians(a_vals: list, b_vals: list) -> tuple[list, list, float | None, float | None]:
    """Both kernels' values without the missing ones, and their medians (None: no value)."""
    import statistics

    a_clean = [v for v in a_vals if v is not None]
    b_clean = [v for v in b_vals if v is not None]
    return (
        a_clean,
        b_clean,
        statistics.median(a_clean) if a_clean else None,
        statistics.median(b_clean) if b_clean else None,
    )


def _n_text(c: stats.Comparison | None, a_clean: list, b_clean: list) -> str:
    """How many values the test has: rounds when paired, else each side's count."""
    if c is not None and c.paired:
        return f"n={c.n} rounds"
    return f"n={len(a_clean)}" if len(a_clean) == len(b_clean) else f"n={len(a_clean)}/{len(b_clean)}"


def same_clock(a: str, b: str) -> str:
    """The clock two kernels' records compare on: theirs, or "mixed" (never compared)."""
    return a if a == b else "mixed"


def deterministic_finding(what, a_vals, b_vals, unit, better, slower, faster, link, key) -> dict:
    """A difference measured on the instruction clock; decide() states it or not."""
    a_clean, b_clean, ma, mb = _medians(a_vals, b_vals)
    return {
        "kind": "deterministic",
        "key": key,
        **_compared(what, ma, mb, unit, better, (slower, faster)),
        "n": [len(a_clean), len(b_clean)],
        "own_spread_pct": max(stats.spread_pct(a_clean), stats.spread_pct(b_clean)),
        "link": link,
        "significant": None,
    }


def floor_pct(floors: dict, key: str) -> float:
    """A metric's A/A floor in %, from the report's floors (model/clocks.py floors(): its
    own, else the default)."""
    return float((floors.get("metrics") or {}).get(key, floors.get("default_pct", DEFAULT_FLOOR_PCT)))


def milestone_floor(floors: dict, milestone: str | None) -> float:
    """A boot milestone's A/A floor in % (its key in the floors: boot-timing.json:<name>)."""
    return floor_pct(floors, f"boot-timing.json:{milestone}")


def decide(f: dict, floors: dict[str, float], default_floor: float) -> None:
    """A deterministic finding's verdict by the instruction clock's rule (stats.beyond_floor,
    in % of a's value): a difference of at least FLOOR_MULTIPLE x its floor (the A/A floor
    of its key, or the default, and at least the kernels' own spread) and at least
    SIZE_PCT % is stated; else "about the same"."""
    d, unit = f["delta_pct"], f["unit"]
    rule = stats.beyond_floor(d, 100.0, floors.get(f["key"], default_floor), f["own_spread_pct"])
    floor, threshold = rule.floor, rule.threshold
    f["floor_pct"] = round(floor, 4)
    f["threshold_pct"] = round(threshold, 4)
    runs = "one boot each" if f["n"] == [1, 1] else f"n={f['n'][0]}/{f['n'][1]} boots"
    if d is None:
        f.update(significant=False, verdict="not comparable")
    elif rule.claimed:
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
    for f, q in zip(family, stats.correct([f["p"] for f in family]), strict=True):
        f["q"] = q
        _verdict(f, len(family))


def _verdict(f: dict, family: int) -> None:
    d, q, unit = f["delta_pct"], f["q"], f["unit"]
    slower, faster = f["words"]
    where = f"{f['test']}, {f['n_text']}, q={q:.3f} over {family} test{'s' if family != 1 else ''}"
    if stats.claimed(q) and d is not None:
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
    f = {**_values("untested", what, a, b, unit), "link": link}
    d = f["delta_pct"]
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


IMPORTED = "imported, not tested"


def imported_finding(what: str, a: float | None, b: float | None, unit: str, link: str = "") -> dict:
    """Values of an imported kernel beside another's: the numbers and their difference,
    never a verdict (one log or one result set, from another machine and another time)."""
    f = {**_values("imported", what, a, b, unit), "link": link}
    d = f["delta_pct"]
    f["verdict"] = "not comparable" if d is None else f"{_num(a)} → {_num(b)} {unit}, {signed(d)}"
    f["detail"] = IMPORTED
    return _claim(f)


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
