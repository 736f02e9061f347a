"""On the instruction clock every place that compares kernels decides with one rule
(stats/deterministic.py: beyond FLOOR_MULTIPLE x the A/A floor and SIZE_PCT %), not the
t-test: values with no spread that differ by one icount step claim nothing, a known
difference of 5 % or more is claimed.  The data: realistic instruction-clock values
(the same in every run, or a few 82 us icount steps apart, FACTS.md) and a real A/A
record (tests/data/aa-icount/SOURCE.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import recordfactory as rf
from bringup import records, stats
from bringup.model.board import load_board
from bringup.records import BootTiming
from bringup.report import bootcompare, bootdetail, bootexplain, findings, marks, measuresection, page, places
from bringup.report import workloads as wlreport

DATA = Path(__file__).parent / "data" / "aa-icount"
REAL = DATA / "boot-timing-initcalls.json"
STEP = 82e-6  # one icount step seen between boots of one kernel, in s (FACTS.md)
INSTRUCTIONS = {"kind": "instructions", "shift": 3, "ns_per_instruction": 8, "seed": None}
SHIPPED = {"default_pct": 0.1, "metrics": {}}  # configs/clock.toml's default floor, no A/A of the board


# --- the rule itself --------------------------------------------------------------------------


def test_one_icount_step_with_no_spread_is_not_claimed_but_the_t_test_would():
    a = [0.545526] * 5
    b = [0.545526 + STEP] * 5  # the same step in every round: only the µs rounding's spread
    assert stats.study_test(a, b, [1, 2, 3, 4, 5], [1, 2, 3, 4, 5]).p < 1e-6
    d = stats.judge_pct(a, b, 0.1)
    assert d is not None and not d.claimed
    # the threshold: 3 x the floor (1.6 ms), but at least SIZE_PCT = 1 % of the base (5.5 ms)
    assert d.threshold == pytest.approx(max(3 * 0.1 / 100, 0.01) * 0.545526)
    assert stats.beyond_floor(0.02, 100.0, 0.5).threshold == pytest.approx(1.5)  # in %: 3 x a 0.5 % floor


def test_a_five_percent_difference_is_claimed_and_the_kernels_own_spread_raises_the_floor():
    a = [0.545526, 0.545526 + STEP, 0.545526]
    assert stats.judge_pct(a, [x * 1.05 for x in a], 0.1).claimed
    assert stats.judge_pct(a, [x * 0.95 for x in a], 0.1).claimed
    # a kernel that spreads 4 % against itself: 5 % is within 3 x its own spread
    noisy = [0.50, 0.52, 0.51]
    assert not stats.judge_pct(noisy, [x * 1.05 for x in noisy], 0.1).claimed


def test_the_summarys_findings_decide_with_the_same_rule():
    words = ("s", "lower", "slower", "faster", "", "k")
    f = findings.deterministic_finding("boot", [0.5455] * 3, [0.5455 + STEP] * 3, *words)
    findings.decide(f, {}, 0.1)
    assert f["significant"] is False and f["threshold_pct"] == stats.SIZE_PCT
    g = findings.deterministic_finding("boot", [0.5455] * 3, [0.5455 * 1.05] * 3, *words)
    findings.decide(g, {"k": 0.5}, 0.1)
    assert g["significant"] is True and g["threshold_pct"] == pytest.approx(3 * 0.5)


# --- the boot explained and compare --boot ---------------------------------------------------------


def _call(fn: str, us: list[int]) -> dict:
    start = [0.3] * len(us)
    return {"fn": fn, "module": None, "object": None, "level": "device", "us": us, "start_s": start, "rc": None}


def _block(calls: list[dict], end: list[float]) -> dict:
    n = len(end)
    return {
        "runs": [f"r{i}" for i in range(n)],
        "rounds": list(range(1, n + 1)),
        "count": [len(calls)] * n,
        "total_us": [sum(c["us"][i] for c in calls) for i in range(n)],
        "end_s": end,
        "before_clock_s": [None] * n,
        "hidden_at_zero_s": [0.4] * n,
        "unresolved": 0,
        "format": "usecs",
        "end_milestone": "freeing_init",
        "calls": calls,
    }


# kernel a: every run the same (the instruction clock); b: `virtio` one icount step longer in every
# run, `pty_init` 15 % longer (a known difference of 30 ms)
A = _block([_call("virtio_mmio_init", [13731] * 3), _call("pty_init", [200000] * 3)], [0.545526] * 3)
B_STEP = _block([_call("virtio_mmio_init", [13813] * 3), _call("pty_init", [200000] * 3)], [0.545608] * 3)
B_KNOWN = _block([_call("virtio_mmio_init", [13731] * 3), _call("pty_init", [230000] * 3)], [0.575526] * 3)


def test_an_initcall_one_icount_step_longer_is_claimed_by_the_t_test_but_not_by_the_rule():
    host = bootexplain.attribute(A, B_STEP, "a", "b")  # the t-test: p = 0 on a step with no spread
    assert [r["key"] for r in host["significant"]] == ["virtio_mmio_init"]
    att = bootexplain.attribute(A, B_STEP, "a", "b", floor_pct=0.1)
    assert att["rule"] == "floor" and att["significant"] == [] and not att["delta_significant"]
    assert att["floor_us"] == pytest.approx(545.526) and att["tested"] == 2
    assert all(r["p"] is None and r["q"] is None for r in att["rows"])
    assert bootexplain.claim(att) is None


def test_a_known_initcall_difference_is_claimed_with_the_milestone():
    att = bootexplain.attribute(A, B_KNOWN, "a", "b", floor_pct=0.1)
    assert [r["key"] for r in att["significant"]] == ["pty_init"]
    assert att["delta_significant"]  # 30 ms on 545 ms: 5.5 %
    text = bootexplain.claim(att, "user space")
    assert text is not None and "`pty_init` +30.0 ms" in text and "30.0 ms later" in text and "A/A floor" in text


def _icount_record(tmp_path: Path, b: dict) -> Path:
    def kt(blk: dict) -> dict:
        label = '"Freeing unused kernel memory"'
        ms = {**rf.milestone_stats(label, blk["end_s"]), "printk": stats.summarize(blk["end_s"])}
        t = rf.kernel_timing({"freeing_init": ms}, blk["runs"])
        t["initcalls"] = blk
        return t

    rec = rf.boot_timing(kernels={"a": kt(A), "b": kt(b)}, profile="initcalls", clock=INSTRUCTIONS)
    f = tmp_path / "logs" / "qemu-arm" / "boot-timing-initcalls.json"
    records.write(f, rec)
    return f


def test_compare_boot_on_the_instruction_clock_uses_the_rule(tmp_path):
    f = _icount_record(tmp_path, B_STEP)
    c = bootcompare.compare((f, "a"), (f, "b"))
    (row,) = c["milestones"]
    assert row["p"] is None and not row["significant"] and row["shift_s"] == pytest.approx(STEP)
    assert c["initcalls"]["significant"] == [] and "nothing tested" in bootcompare.render(c)
    known = _icount_record(tmp_path, B_KNOWN)
    c = bootcompare.compare((known, "a"), (known, "b"))
    assert c["milestones"][0]["significant"] and [r["key"] for r in c["initcalls"]["significant"]] == ["pty_init"]


# --- the real A/A ---------------------------------------------------------------------------


def test_the_real_aa_record_claims_nothing_in_the_report_nor_in_compare_boot(tmp_path):
    rec = records.read(REAL, BootTiming)
    assert rec.clock.kind == "instructions" and list(rec.kernels) == ["a", "b"]
    explained = bootdetail._boot_explained(rec, ["a", "b"], REAL.name, {}, SHIPPED)
    (pair,) = explained["pairs"]
    assert pair["rule"] == "floor" and pair["tested"] >= 10 and pair["significant"] == [] and pair["claim"] is None
    c = bootcompare.compare((REAL, "a"), (REAL, "b"), SHIPPED)
    assert not any(r["significant"] for r in c["milestones"]) and c["initcalls"]["significant"] == []


def test_the_real_aa_reports_summary_claims_nothing(tmp_path):
    logs = tmp_path / "logs"
    (logs / "qemu-arm-aa").mkdir(parents=True)
    for f in (REAL, DATA / "boot-timing.json"):
        shutil.copy(f, logs / "qemu-arm-aa" / f.name)
    text = (Path(__file__).parents[1] / "boards" / "qemu-arm.toml").read_text()
    six = text[text.rindex("[[kernels]]") :]
    head = text[: text.index("[[kernels]]")].replace('name = "qemu-arm"', 'name = "qemu-arm-aa"')
    board_file = tmp_path / "qemu-arm-aa.toml"
    board_file.write_text(head + six.replace('id = "6.12"', 'id = "a"') + six.replace('id = "6.12"', 'id = "b"'))
    model = page.collect(load_board(str(board_file)), logs)
    assert model["boot_explained"]["pairs"][0]["claim"] is None
    sections = {title: fs for f in model["findings"] for title, fs in f["sections"]}
    assert "Boot time explained" not in sections
    boot = sections["Boot"]
    assert boot and all(f["kind"] == "deterministic" and f["significant"] is False for f in boot)
    # the page renders the tables' marks the summary decided, titled with the rule, not a q-value
    html, md = page.render(model, {name: None for name in page.make_charts(model)})
    assert 'class="ns" title="within the A/A floor (instruction clock)">(n.s.)' in html
    assert "q=None" not in html and "A/A floor" in md


def test_in_the_real_aa_the_t_test_finds_what_the_rule_does_not():
    # the real A/A's timing runs (3 rounds): b reached "Freeing unused kernel memory" 0.2-0.35 ms
    # after a in every round (0.05 %); the paired t-test gives p = 0.025, the rule claims nothing
    rec = json.loads((DATA / "boot-timing.json").read_text())
    a, b = (rec["kernels"][k]["milestones"]["freeing_init"] for k in ("a", "b"))
    assert stats.study_test(a["values"], b["values"], a["rounds"], b["rounds"]).p < 0.05
    assert not stats.judge_pct(a["values"], b["values"], 0.1).claimed


# --- console cost, places, tables, the workloads chart ------------------------------------------


def test_console_cost_on_the_instruction_clock_uses_the_rule():
    rec = records.read(REAL, BootTiming)
    quiet = [0.545526] * 3
    step = bootdetail._console_judged(rec, rec, "freeing_init", quiet, [x + STEP for x in quiet], SHIPPED)
    known = bootdetail._console_judged(rec, rec, "freeing_init", quiet, [x * 1.05 for x in quiet], SHIPPED)
    assert step == {"test": "beyond the A/A floor", "significant": False}
    assert known["significant"] is True and "p" not in known


def test_places_on_the_instruction_clock_use_the_rule():
    values, where = [0.5455, 0.5455 + STEP] * 4, ["p1", "p2"] * 4
    (step,) = places.compare_places(values, where, ["p1", "p2"], floor_pct=0.1)
    (known,) = places.compare_places([0.5455, 0.5455 * 1.05] * 4, where, ["p1", "p2"], floor_pct=0.1)
    places.resolve([step, known])
    assert step["p"] is None and step["significant"] is False and step["verdict"] == "no difference shown"
    assert known["significant"] is True and known["verdict"] == "differs"
    (host,) = places.compare_places(values, where, ["p1", "p2"])  # the host clock: the t-test still runs
    assert host["p"] is not None and host["p"] < 0.05


def test_the_tables_are_marked_from_the_summarys_decision_on_the_instruction_clock():
    deltas = [{"pct": 0.01, "p": None, "significant": None}, {"pct": 5.0, "p": None, "significant": None}]
    rows = [{"deltas": [deltas[0]], "name": "lat_syscall"}, {"deltas": [deltas[1]], "name": "lat_pipe"}]
    decided = {"lmbench:lat_syscall": {"significant": False}, "lmbench:lat_pipe": {"significant": True}}
    model = {
        "findings": [{"kernel": "b", "tested": {}, "deterministic": decided}],
        "lmbench_groups": {"kernels": ["a", "b"], "groups": [{"rows": rows}]},
    }
    marks.mark_from_family(model)
    assert [d["significant"] for d in deltas] == [False, True]


def test_lmbench_deltas_on_the_instruction_clock_are_not_tested():
    lm = {k: rf.lmbench(k, clock=INSTRUCTIONS) for k in ("5.10", "6.12")}
    row = {"runs": {"5.10": [1.0, 1.0], "6.12": [1.001, 1.001]}, "rounds": {"5.10": [1, 2], "6.12": [1, 2]}}
    d = measuresection._lmbench_delta(lm, ["5.10", "6.12"], {**row, "better": "lower"}, "6.12", 0.1)
    assert d is not None and d["p"] is None
    host = {k: rf.lmbench(k) for k in ("5.10", "6.12")}
    host_p = measuresection._lmbench_delta(host, ["5.10", "6.12"], {**row, "better": "lower"}, "6.12", 0.1)["p"]
    assert host_p == stats.study_test([1.0, 1.0], [1.001, 1.001], [1, 2], [1, 2]).p < 1  # tested on the host clock


def test_the_workloads_chart_band_excludes_1_exactly_when_the_rule_claims():
    def wt(b: list[float]) -> dict:
        row = {"name": "ops", "key": "workload:w:ops", "better": "higher", "runs": {"a": [100.0], "b": b}}
        return {"kernels": ["a", "b"], "workloads": [{"name": "w", "rows": [row]}]}

    (step,) = wlreport.relative(wt([100.02]), SHIPPED, "instructions")["rows"]
    (known,) = wlreport.relative(wt([105.0]), SHIPPED, "instructions")["rows"]
    s, k = step["ratios"]["b"], known["ratios"]["b"]
    assert s["lo"] < 1 < s["hi"] and s["ratio"] == pytest.approx(1.0002)
    assert k["lo"] > 1 and k["ratio"] == pytest.approx(1.05)
    assert wlreport.relative(wt([100.02]), SHIPPED, "host")["rows"] == []  # one run each: no test, no bar


def test_the_real_record_round_trips_as_a_record():
    raw = json.loads(REAL.read_text())
    assert raw["profile"] == "initcalls" and raw["clock"]["kind"] == "instructions"
