"""The instruction clock (model/clocks.py, docs/clock.md): QEMU's arguments, the
board's choice and the command line's, the A/A floors, deterministic findings,
the host clock's t-test, and the A/A and sensitivity checks' judgements."""

import json
import math

import pytest

from bringup import aa, stats
from bringup.model import clocks
from bringup.model.base import DataError
from bringup.model.board import load_board
from bringup.report import findings
from bringup.targets.qemu import QemuSpec, qemu_argv

# --- the clock a board measures with ----------------------------------------


def test_the_instruction_clock_gives_qemu_icount_a_virtual_rtc_and_a_seed():
    c = clocks.Clock("instructions", 3)
    args = c.qemu_args()
    assert args[args.index("-icount") + 1] == "shift=3,sleep=off,align=off"
    assert args[args.index("-rtc") + 1] == f"base={clocks.RTC_BASE},clock=vm"
    assert args[args.index("-seed") + 1] == str(clocks.SEED)
    assert c.ns_per_instruction == 8 and c.deterministic
    assert clocks.HOST.qemu_args() == [] and not clocks.HOST.deterministic


def test_qemu_argv_follows_the_board_s_clock():
    board = load_board("qemu-arm")
    assert isinstance(board.target, QemuSpec) and board.target.clock == "instructions"
    files = {"kernel": "zImage", "initrd": None, "dtb": None}
    on = qemu_argv(board, 1234, "direct", files, "console=ttyAMA0")
    assert "-icount" in on and "shift=3,sleep=off,align=off" in on
    host = clocks.with_clock(board, "host")
    off = qemu_argv(host, 1234, "direct", files, "console=ttyAMA0")
    assert "-icount" not in off and "-seed" not in off and "-rtc" not in off
    assert board.target.clock == "instructions"  # with_clock makes a new board; the loaded one is unchanged


def test_the_shift_sets_the_instruction_rate():
    board = load_board("qemu-arm")
    assert isinstance(board.target, QemuSpec)
    b1 = clocks.with_clock(board, "instructions")
    assert clocks.clock_of(b1).ns_per_instruction == 2**board.target.icount_shift
    q = board.target.model_copy(update={"icount_shift": 1})

    assert clocks.clock_of(board.model_copy(update={"target": q})).qemu_args()[1].startswith("shift=1,")


def test_a_board_without_qemu_cannot_have_the_instruction_clock():
    bench = load_board("labgrid-example")
    assert not isinstance(bench.target, QemuSpec)
    with pytest.raises(DataError, match=r"--clock instructions: board labgrid-example is not a QEMU board"):
        clocks.with_clock(bench, "instructions")
    assert clocks.with_clock(bench, "host") is bench
    with pytest.raises(DataError, match=r"--clock 'wall': use host or instructions"):
        clocks.with_clock(bench, "wall")


def test_the_guard_and_the_default_rounds_follow_the_clock():
    board = load_board("qemu-arm")
    host = clocks.with_clock(board, "host")
    assert not clocks.guard_needed(board) and clocks.guard_needed(host)
    assert clocks.default_runs(board, None, clocks.DEFAULT_RUNS) == 1
    assert clocks.default_runs(host, None, clocks.DEFAULT_RUNS) == 5
    assert clocks.default_runs(board, 7, clocks.DEFAULT_RUNS) == 7


# --- the A/A floors -----------------------------------------------------------


def test_floors_are_the_shipped_ones_raised_by_the_board_s_own_aa(tmp_path):
    shipped = clocks.load_floors()
    out = clocks.floors("qemu-arm", tmp_path)
    assert out["default_pct"] == shipped.default_floor_pct and out["source"] == "configs/clock.toml"
    d = tmp_path / "qemu-arm-aa"
    d.mkdir()
    rec = {"clock": {"kind": "instructions"}, "spread": {"lmbench:Simple syscall": 0.4, "bad": "x"}}
    (d / "aa.json").write_text(json.dumps(rec))
    own = clocks.floors("qemu-arm", tmp_path)
    assert own["metrics"]["lmbench:Simple syscall"] == max(0.4, shipped.floors.get("lmbench:Simple syscall", 0))
    assert "bad" not in own["metrics"] and own["source"] == "configs/clock.toml and logs/qemu-arm-aa/aa.json"
    # a metric the A/A found identical keeps the default floor: never a floor of 0
    (d / "aa.json").write_text(json.dumps({**rec, "spread": {"lmbench:new metric": 0.0}}))
    assert clocks.floors("qemu-arm", tmp_path)["metrics"]["lmbench:new metric"] == shipped.default_floor_pct
    assert "lmbench:Simple syscall" not in clocks.floors("qemu-arm", tmp_path, own=False)["metrics"] or (
        shipped.floors.get("lmbench:Simple syscall") is not None
    )
    # an A/A measured on the host clock is no floor of the instruction clock
    (d / "aa.json").write_text(json.dumps({**rec, "clock": {"kind": "host"}}))
    assert clocks.floors("qemu-arm", tmp_path)["metrics"] == dict(shipped.floors)


def test_a_bad_floor_file_is_one_line(tmp_path):
    f = tmp_path / "clock.toml"
    f.write_text("default_floor_pct = -1\n")
    with pytest.raises(DataError, match=r"default_floor_pct"):
        clocks.load_floors(f)


# --- deterministic findings ---------------------------------------------------


def decided(a, b, floors=None, default=0.1, what="ctx 2p/0K", unit="us"):
    f = findings.tested_finding(what, a, b, unit, "lower", key=f"lmbench:{what}", clock="instructions")
    assert f["kind"] == "deterministic"
    findings.decide(f, floors or {}, default)
    return f


def test_a_difference_above_three_floors_and_one_percent_is_claimed_in_seed_002_s_voice():
    f = decided([56.0], [104.0])
    assert f["significant"] is True and f["worse"] is True
    assert f["claim"].startswith("ctx 2p/0K: 86 % slower (56 → 104 us, +86 %, instruction clock; one boot each")


def test_a_difference_below_the_threshold_is_about_the_same():
    f = decided([100.0], [100.9])  # 0.9 %: below the 1 % minimum
    assert f["significant"] is False and f["verdict"] == "about the same"
    g = decided([100.0], [105.0], floors={"lmbench:ctx 2p/0K": 2.0})  # 5 % < 3 x 2 %
    assert g["significant"] is False and g["threshold_pct"] == 6.0
    h = decided([100.0], [107.0], floors={"lmbench:ctx 2p/0K": 2.0})
    assert h["significant"] is True


def test_a_kernel_s_own_spread_raises_its_floor():
    f = decided([100.0, 104.0], [110.0, 112.0])  # a's own boots spread 3.9 %: 3 x that > the 9 % difference
    assert f["own_spread_pct"] == pytest.approx(4 / 102 * 100)
    assert f["significant"] is False
    g = decided([100.0, 100.0], [110.0, 110.0])
    assert g["significant"] is True and g["floor_pct"] == 0.1


def test_the_aa_judge_counts_deterministic_claims():
    f = decided([56.0], [104.0])
    model = {"findings": [{"sections": [("lmbench", [f])], "tested": {}}]}
    assert aa.judge(model)["claims"] == [f["claim"]]


# --- the host clock's test ----------------------------------------------------


R = [1, 2, 3, 4, 5]  # the rounds of a test's values


def test_five_rounds_of_a_consistent_difference_pass_a_family_s_correction():
    a = [14.8, 15.1, 14.5, 15.3, 14.9]
    b = [43.0, 41.0, 44.0, 42.5, 43.2]
    t = stats.study_test(a, b, R[:5], R[:5])
    assert t is not None and t.scale == "log" and t.df == 4
    assert t.p < 0.05 / 80  # the signed-rank test's smallest p with 5 rounds is 0.0625
    assert stats.smallest_p(5, paired=True) > 0.05


def test_the_paired_t_test_by_hand():
    a, b = [1.0, 2.0, 4.0], [2.0, 4.0, 12.0]  # log ratios: ln 2, ln 2, ln 3
    d = [math.log(2), math.log(2), math.log(3)]
    mean = sum(d) / 3
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / 2)
    t = stats.study_test(a, b, R[:3], R[:3])
    assert t is not None and t.se == pytest.approx(sd / math.sqrt(3))
    from scipy import stats as sps

    assert t.p == pytest.approx(2 * sps.t.sf(mean / (sd / math.sqrt(3)), 2))


def test_no_difference_is_p_one_and_detectable_grows_with_the_noise():
    same = stats.study_test([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], R[:3], R[:3])
    assert same is not None and same.p == 1.0
    quiet = stats.study_test([1.0, 1.01, 0.99, 1.0], [1.0, 1.0, 1.01, 0.99], R[:4], R[:4])
    noisy = stats.study_test([1.0, 1.2, 0.8, 1.0], [1.0, 0.9, 1.2, 1.1], R[:4], R[:4])
    assert quiet is not None and noisy is not None
    dq, dn = quiet.detectable(0.05), noisy.detectable(0.05)
    assert dq is not None and dn is not None and 0 < dq < dn
    assert stats.detectable({"scale": "raw", "se": 1.0, "df": 3}, 0.05) is None


def test_a_value_at_or_below_zero_is_tested_on_the_raw_scale():
    t = stats.study_test([0.0, 1.0, 2.0], [1.0, 2.0, 3.5], R[:3], R[:3])
    assert t is not None and t.scale == "raw" and t.ratio is None and t.detectable(0.05) is None


# --- the sensitivity check ----------------------------------------------------


def test_the_ab_board_gives_both_arms_command_lines_of_one_length():
    board = load_board("qemu-arm")
    ab = aa.aa_board(board, "6.12", delay_ms=500)
    a, b = ab.kernels
    assert ab.name == "qemu-arm-ab"
    assert a.cmdline.endswith("bringup.delay_ms=000") and b.cmdline.endswith("bringup.delay_ms=500")
    assert len(a.cmdline) == len(b.cmdline)
    assert aa.aa_board(board, "6.12").name == "qemu-arm-aa"
    assert "delay_ms" not in aa.aa_board(board, "6.12").kernels[1].cmdline


def claim(key, a, b, kind="deterministic", shift=None, ci=None):
    return {
        "kind": kind,
        "significant": True,
        "key": key,
        "a": a,
        "b": b,
        "shift": shift,
        "shift_ci95": ci,
        "claim": key,
    }


U, L = "boot-timing.json:userspace", "boot-timing.json:login"


@pytest.mark.parametrize(
    ("items", "clock", "passed"),
    [
        ([claim(U, 0.5, 1.0)], "instructions", True),
        ([claim(U, 0.5, 0.9)], "instructions", False),  # 400 ms: more than 10 % off
        ([claim(U, 1.0, 0.5)], "instructions", False),  # the wrong sign
        ([claim(U, 0.5, 1.0), claim("lmbench:Simple syscall", 1, 2)], "instructions", False),
        ([claim("boot-timing.json:freeing_init", 0.5, 1.0)], "instructions", False),  # before the delay
        ([claim(L, 0, 0, kind="tested", shift=0.52)], "host", True),
        # the host clock's guest sleep overshoots: 13 % over is the known cost there, not on the other clock
        ([claim(L, 0, 0, kind="tested", shift=0.565)], "host", True),
        ([claim(U, 0.5, 1.065)], "instructions", False),
        ([claim(L, 0, 0, kind="tested", shift=0.65)], "host", False),  # 30 % over
        # a noisy clock: 30 % off, but its own interval holds the known cost
        ([claim(L, 0, 0, kind="tested", shift=0.65, ci=(0.45, 0.8))], "host", True),
        ([claim(L, 0, 0, kind="tested", shift=0.7, ci=(0.6, 0.8))], "host", False),  # it does not
        ([claim(L, 0, 0, kind="tested", shift=-0.45, ci=(-0.6, 0.6))], "host", False),  # the wrong sign
        ([claim(L, 0, 0, kind="tested", shift=0.7, ci=(0.4, None))], "host", False),  # half an interval
        ([], "host", False),  # the known cost not seen
    ],
)
def test_the_sensitivity_verdict(items, clock, passed):
    model = {"findings": [{"sections": [("x", items)]}], "delayed_milestones": ["userspace", "login"]}
    assert aa.sensitivity(model, 500, clock)["passed"] is passed


def test_an_nfs_root_is_measured_on_the_host_clock():
    board = load_board("qemu-arm")
    said: list[str] = []
    nfs = clocks.for_root(board, "nfs", said.append)
    assert clocks.clock_of(nfs).kind == "host" and said and "host clock" in said[0]
    assert clocks.for_root(board, "ramdisk", said.append) is board and len(said) == 1
    host = clocks.with_clock(board, "host")
    assert clocks.for_root(host, "nfs") is host
