"""The study's one test (stats.study_test) and every place that compares kernels.

Properties (Hypothesis, derandomized: the same examples on every run):
  - a kernel against itself (the same values) is never a difference, at any place;
  - samples of one distribution (an A/A) rarely pass the test, and a corrected
    family of them rarely claims anything;
  - a known large difference is seen by every place that compares kernels: the
    summary, the terminal's boot table, compare --boot, the initcall explanation,
    the places, the cold build cost and the workloads' relative chart;
and the wiring: every place calls stats.study_test, so switching the study's test
is a change to that one function (a stand-in test switched in there is what
every place then reports).
"""

from __future__ import annotations

import ast
import dataclasses
import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recordfactory as rf
from bringup import records, stats
from bringup.boot import timingtable
from bringup.model.milestones import load_rules
from bringup.report import bootcompare, bootexplain, findings, places, summary
from bringup.report import buildcost as costreport
from bringup.report import workloads as wlreport
from bringup.util import paths
from test_bootexplain import block, call
from test_buildcost import record as cost_record

PROPERTY = settings(derandomize=True, max_examples=25, deadline=None)


def sample(seed: int, n: int, sigma: float, base: float = 10.0) -> list[float]:
    """n positive values around base, log-normal with spread sigma."""
    return [float(x) for x in base * np.exp(np.random.default_rng(seed).normal(0.0, sigma, n))]


# --- the one function ----------------------------------------------------------


@PROPERTY
@given(
    values=st.lists(st.floats(0.001, 1e6), min_size=2, max_size=12),
    paired=st.booleans(),
)
def test_a_kernel_against_itself_is_never_a_difference(values, paired):
    rounds = list(range(1, len(values) + 1)) if paired else None
    c = stats.study_test(values, values, rounds, rounds)
    assert c is not None and c.paired == paired
    assert c.p == 1.0 and c.ratio == pytest.approx(1.0) and c.shift == 0
    assert stats.correct([c.p] * 30) == pytest.approx([1.0] * 30)


@PROPERTY
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(3, 10),
    sigma=st.floats(0.002, 0.3),
    paired=st.booleans(),
    drift=st.floats(0.0, 0.5),
)
def test_samples_of_one_distribution_rarely_pass(seed, n, sigma, paired, drift):
    """200 A/A comparisons: about 5 % pass uncorrected (at most 12 %: binomial, 200 draws); of
    30 corrected families of 20 such tests, hardly any claims anything (Benjamini-Hochberg
    keeps that to 5 % of families under the null: at most 6 of 30).  Paired runs share a
    round's drift (a host settling down), which the pairing removes."""
    rng = np.random.default_rng(seed)
    rounds = list(range(1, n + 1))
    ps = []
    for _ in range(600):
        shared = np.exp(drift * rng.normal(0.0, 1.0, n)) if paired else 1.0
        a = 10.0 * shared * np.exp(rng.normal(0.0, sigma, n))
        b = 10.0 * shared * np.exp(rng.normal(0.0, sigma, n))
        c = stats.study_test(list(a), list(b), rounds if paired else None, rounds if paired else None)
        ps.append(c.p)
    assert sum(p < stats.ALPHA for p in ps[:200]) / 200 <= 0.12
    families = [ps[i : i + 20] for i in range(0, 600, 20)]
    assert sum(any(stats.claimed(q) for q in stats.correct(f)) for f in families) <= 6


# --- values counted in steps (mem_eat's chunks) ----------------------------------


def test_two_rounds_of_the_same_chunk_difference_are_noise_with_the_resolution_and_none_without():
    """CI's sensitivity check of one 6.12 kernel against itself: mem_eat gave 497664 kB in
    both of arm a's rounds and 500736 kB in both of arm b's (an earlier run of arm a alone
    gave 497664 and 500736).  Without the resolution the two equal differences have no
    spread: p = 0, claimed.  With 1024 kB chunks: p about 0.06 on one degree of freedom."""
    a, b, r = [497664, 497664], [500736, 500736], [1, 2]
    assert stats.study_test(a, b, r, r).p < 1e-3  # their printed step alone, 1 kB: claimed
    c = stats.study_test(a, b, r, r, resolution=1024)
    assert c is not None and c.df == 1 and 0.05 < c.p < 0.07
    assert not stats.claimed(stats.correct([c.p])[0])


def test_a_large_difference_in_chunks_is_still_seen_with_the_resolution():
    """2.4 against 2.6 on one board: MBs apart, the same in every round (or one chunk off)."""
    r = [1, 2, 3, 4, 5]
    a = [28672] * 5
    b = [24576, 24576, 25600, 24576, 24576]
    c = stats.study_test(a, b, r, r, resolution=1024)
    assert c is not None and c.p < 1e-4
    welch = stats.study_test(a, b, resolution=1024)
    assert welch is not None and not welch.paired and welch.p < 1e-4


@PROPERTY
@given(
    a=st.lists(st.integers(400, 520), min_size=2, max_size=8),
    shift=st.integers(-4, 4),
    resolution=st.sampled_from([256, 1024, 4096]),
    paired=st.booleans(),
)
def test_the_resolution_never_makes_a_difference_more_certain(a, shift, resolution, paired):
    """The rounding's spread is a floor, never a gain: p with the resolution >= p without."""
    xs = [v * 1024 for v in a]
    ys = [v + shift * 1024 for v in xs]
    rounds = list(range(1, len(xs) + 1)) if paired else None
    without = stats.study_test(xs, ys, rounds, rounds)
    with_it = stats.study_test(xs, ys, rounds, rounds, resolution=resolution)
    assert without is not None and with_it is not None
    assert with_it.p >= without.p - 1e-12


def test_the_summary_tests_malloc_with_mem_eat_s_chunk_and_old_records_mean_1024(tmp_path):
    r = [1, 2]
    fa = rf.footprint("a", malloc_kb=497664, rounds=r, malloc_kb_values=[497664, 497664])
    fb = rf.footprint("b", malloc_kb=500736, rounds=r, malloc_kb_values=[500736, 500736])
    assert fa.mem_eat is not None and fa.mem_eat.chunk_kb == 1024  # the factory's record names no chunk
    [f] = [f for f in summary.footprint_findings(fa, fb, "b") if f["kind"] == "tested"]
    findings.resolve([f])
    assert f["significant"] is False and f["p"] > 0.05
    # the same values counted in 1 kB steps: 3 kB apart twice, p < 0.001 and claimed
    fine = {"mem_eat": {"bytes": 1, "kb": 1, "completed": False, "chunk_kb": 1}}
    ga = rf.footprint("a", malloc_kb=497664, rounds=r, malloc_kb_values=[497664, 497664], **fine)
    gb = rf.footprint("b", malloc_kb=500736, rounds=r, malloc_kb_values=[500736, 500736], **fine)
    [g] = [g for g in summary.footprint_findings(ga, gb, "b") if g["kind"] == "tested"]
    findings.resolve([g])
    assert g["significant"] is True


# --- every place ---------------------------------------------------------------
#
# Each place as a function of two kernels' per-round values: does it mark (claim) b's
# difference from a?  Its own inputs are made from the values; its own verdict is read.


def summary_claims(a: list[float], b: list[float]) -> bool:
    r = list(range(1, len(a) + 1))
    f = findings.tested_finding("boot to login", a, b, "s", "lower", a_rounds=r, b_rounds=r)
    findings.resolve([f])
    return f["significant"]


def terminal_table_claims(a: list[float], b: list[float]) -> bool:
    rules = load_rules()
    end = next(m for m in rules.milestones if m.end)
    r = list(range(1, len(a) + 1))

    def kernel(values: list[float]) -> dict:
        st_ = {"values": values, "rounds": r, "host": stats.summarize(values), "printk": None}
        return {
            "reference": "t0",
            "ok": len(values),
            "milestones": {end.name: st_},
            "hidden_at_zero_s": None,
            "printk_lag_ms": None,
            "failed": 0,
            "failures": [],
        }

    summary = {"board": "b", "path": "direct", "clock": {"kind": "host"}, "kernels": {"A": kernel(a), "B": kernel(b)}}
    row = next(line for line in timingtable.render_table(summary, rules).splitlines() if end.label in line)
    return row.rstrip(" |").endswith("*")


def compare_boot_claims(a: list[float], b: list[float]) -> bool:
    rules = load_rules()
    end = next(m for m in rules.milestones if m.end)
    r = list(range(1, len(a) + 1))

    def kt(values: list[float]) -> dict:
        return rf.kernel_timing(
            {end.name: {**rf.milestone_stats(end.label, values), "rounds": r}}, [f"r{i}" for i in r]
        )

    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "boot-timing.json"
        records.write(f, rf.boot_timing(kernels={"A": kt(a), "B": kt(b)}))
        (row,) = bootcompare.compare((f, "A"), (f, "B"))["milestones"]
    return row["significant"]


def initcall_claims(a: list[float], b: list[float]) -> bool:
    n = len(a)
    ka = block(n, [call("x_init", [x * 1000 for x in a], [0.3] * n)], end=[x / 10 for x in a])
    kb = block(n, [call("x_init", [x * 1000 for x in b], [0.3] * n)], end=[x / 10 for x in b])
    att = bootexplain.attribute(ka, kb, "A", "B")
    return "x_init" in [r["key"] for r in att["significant"]] and stats.claimed(att["delta_p"])


def places_claim(a: list[float], b: list[float]) -> bool:
    rows = places.compare_places(a + b, ["p1"] * len(a) + ["p2"] * len(b), ["p1", "p2"])
    places.resolve(rows)
    return rows[0]["significant"]


def build_cost_claims(a: list[float], b: list[float]) -> bool:
    (c,) = costreport.compare(cost_record({"a": [x * 10 for x in a], "b": [x * 10 for x in b]}))
    return c["cpu"]["claimed"]


def workloads_chart_sees(a: list[float], b: list[float]) -> bool:
    r = list(range(1, len(a) + 1))
    row = {"name": "m", "better": "lower", "runs": {"A": a, "B": b}, "rounds": {"A": r, "B": r}}
    rel = wlreport.relative({"kernels": ["A", "B"], "workloads": [{"name": "w", "rows": [row]}]})
    if not rel["rows"]:
        return False
    iv = rel["rows"][0]["ratios"]["B"]
    return iv["hi"] < 1 or iv["lo"] > 1  # the interval of relative performance excludes "the same"


PLACES = {
    "summary": summary_claims,
    "terminal table": terminal_table_claims,
    "compare --boot": compare_boot_claims,
    "initcall explanation": initcall_claims,
    "places": places_claim,
    "build cost": build_cost_claims,
    "workloads chart": workloads_chart_sees,
}


@pytest.mark.parametrize("place", sorted(PLACES))
@settings(derandomize=True, max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(3, 8), sigma=st.floats(0.001, 0.03), factor=st.floats(1.5, 3.0))
def test_a_large_difference_is_seen_and_a_kernel_against_itself_is_not(place, seed, n, sigma, factor):
    a = sample(seed, n, sigma)
    b = [x * factor * math.exp(e) for x, e in zip(a, np.random.default_rng(seed + 1).normal(0, sigma, n), strict=True)]
    assert PLACES[place](a, b), f"{place} missed a x{factor:.2f} difference over {n} rounds"
    assert not PLACES[place](a, list(a)), f"{place} claimed a kernel against itself"


# --- one function: the wiring --------------------------------------------------


def test_switching_the_study_s_test_switches_every_place(monkeypatch):
    """A stand-in test, switched in at stats.study_test, is what every place reports: one
    that finds a difference everywhere makes each place claim the A/A case (a kernel against
    itself), one that finds nothing silences the large difference.  No place keeps a test
    of its own."""
    real = stats.study_test
    a = sample(7, 6, 0.01)
    b = [x * 2 for x in a]

    def always(x, y, rx=None, ry=None, resolution=None):
        c = real(x, y, rx, ry)
        return None if c is None else dataclasses.replace(c, p=0.0, mean=0.7, se=0.01)

    def never(x, y, rx=None, ry=None, resolution=None):
        c = real(x, y, rx, ry)
        return None if c is None else dataclasses.replace(c, p=1.0, mean=0.0, se=1.0)

    for fake, left, right, want in ((always, a, list(a), True), (never, a, b, False)):
        monkeypatch.setattr(stats, "study_test", fake)
        for name, place in PLACES.items():
            if name == "places" and fake is always:
                continue  # places also ask that the shift's interval exclude 0: the values' own, 0 here
            assert place(left, right) is want, f"{name} did not follow the switched test"


def test_no_module_outside_stats_computes_a_test_of_its_own():
    """scipy (and its tests) are imported in bringup/stats/ only; the places import stats."""
    pkg = paths.ROOT / "scripts" / "lib" / "bringup"
    users = []
    for f in sorted(pkg.rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(n.split(".")[0] == "scipy" for n in names):
                users.append(str(f.relative_to(pkg)))
    assert users and all(u.startswith("stats/") for u in users), users


# --- the A/A through the whole page --------------------------------------------


def _page(logs: Path, factor: float):
    """The report of test_report's records with 6.12's boots, initcalls and quiet runs made
    5.10's times `factor` (1: a kernel against itself), every value carrying its round."""
    from bringup.model.board import load_board
    from bringup.report import page as report
    from test_bootexplain import A5, initcalls_record

    d = logs / "qemu-arm"
    r = [1, 2, 3, 4, 5]
    base = {"freeing_init": [0.400, 0.420, 0.410, 0.430, 0.415], "login": [0.700, 0.710, 0.705, 0.715, 0.708]}
    labels = {"freeing_init": '"Freeing unused kernel memory"', "login": '"login:" prompt'}

    def timing(scale: float, quiet: float = 0.0) -> dict:
        ms = {
            name: {**rf.milestone_stats(labels[name], [v * scale - quiet for v in vs]), "rounds": r}
            for name, vs in base.items()
        }
        t = rf.kernel_timing(ms, [f"r{i}" for i in range(5)])
        t["console"] = {"until": "freeing_init", "bytes": stats.summarize([20000] * 5), "kernel_bytes": None}
        t["console"].update(baud=115200, cost_s=20000 * 10 / 115200)
        return t

    records.write(d / "boot-timing.json", rf.boot_timing(kernels={"5.10": timing(1.0), "6.12": timing(factor)}))
    quiet = rf.boot_timing(kernels={"5.10": timing(1.0, 0.2), "6.12": timing(1.0, 0.2)}, profile="quiet")
    records.write(d / "boot-timing-quiet.json", quiet)
    slower = {**A5, "calls": [{**c, "us": [round(x * factor) for x in c["us"]]} for c in A5["calls"]]}
    slower["end_s"] = [x * factor for x in A5["end_s"]]
    records.write(d / "boot-timing-initcalls.json", initcalls_record(A5, slower))
    return report.write(load_board("qemu-arm"), logs, say=lambda m: None)


def test_a_kernel_against_itself_claims_nothing_on_the_page_and_a_large_difference_is_marked(tmp_path):
    """Every section of the page that compares kernels (the summary, the boot table's marks,
    Boot time explained) says nothing of a kernel against itself and sees a 1.5 x slower one;
    the console cost (timing against quiet runs of one kernel) sees its 0.2 s either way."""
    from bringup import aa
    from test_report import logs as canned_logs

    same = _page(canned_logs.__wrapped__(tmp_path / "same"), 1.0).model
    assert [c for c in aa.judge(same)["claims"] if "boot" in c or "initcall" in c] == []
    assert all(not d["significant"] for row in same["boot_rows"] for d in row["deltas"] if d)
    assert all(d["p"] == 1.0 for row in same["boot_rows"] for d in row["deltas"] if d)
    assert same["boot_explained"]["pairs"][0]["significant"] == [] and not same["boot_explained"]["pairs"][0]["claim"]
    assert all(stats.claimed(row["q"]) for row in same["console_cost"]["rows"])

    slow = _page(canned_logs.__wrapped__(tmp_path / "slow"), 1.5).model
    login = next(row for row in slow["boot_rows"] if row["name"] == "login")
    assert login["deltas"][0]["significant"] and login["deltas"][0]["p"] < 1e-4
    assert slow["boot_explained"]["pairs"][0]["claim"]
    assert any("boot to" in c for c in aa.judge(slow)["claims"])
