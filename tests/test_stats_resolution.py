"""Values printed with few digits (stats.study: printed_step, steps, the rounding's floor).

Every value the study tests was printed somewhere with a fixed number of decimals, and
carries that rounding.  Without a floor, rounds that give the same difference have no
spread and p = 0: the real qemu-i386-eras records claimed "lat_mmap 1M: 28 → 43 µs,
95 % CI 15 … 15, q = 0.000" for 2.4 against 5.10 from two rounds of 28 and two of 43.
The values here are the real records' (logs/qemu-i386-eras, logs/qemu-arm-ab).
"""

from __future__ import annotations

import pytest

from bringup import stats
from bringup.report import findings
from bringup.stats import study
from test_stats_study import PLACES

R2, R5 = [1, 2], [1, 2, 3, 4, 5]


@pytest.mark.parametrize(
    ("values", "step"),
    [
        ([0.1043, 0.1044], 1e-4),  # lmbench's "Simple syscall", 4 decimals
        ([0.504554, 0.504257, 0.504319], 1e-6),  # boot times rounded to the µs
        ([16.44, 17.65], 1e-2),  # lat_ctx
        ([28.0, 28.0], 1.0),  # lat_mmap's whole µs
        ([497664, 500736], 1.0),  # kB: never coarser than 1 (mem_eat's chunk is the caller's)
        ([0.5, 0.25], 1e-2),
        ([1 / 3, 0.5], 0.0),  # computed, not printed: no step
        ([0.377736 * 1e6, 0.37936 * 1e6], 1.0),  # a change of unit keeps the printed µs
        ([0.0, 0.0], None),  # zeros show no step
    ],
)
def test_the_printed_step_is_the_coarsest_power_of_ten_that_holds_every_value(values, step):
    got = study.printed_step(values)
    assert got == (None if step is None else pytest.approx(step))


def test_one_metric_has_one_step_and_the_caller_s_resolution_is_a_floor():
    """Both kernels' values of a metric come from one printer: a kernel whose values are
    round (1.0 twice) or zero is not printed coarser than the other's."""
    assert study.steps([0.0, 0.0], [0.001, 0.002], None) == (0.001, 0.001)
    assert study.steps([1.0, 1.0], [1.001, 1.002], None) == (0.001, 0.001)
    assert study.steps([0.0], [0.0], None) == (0.0, 0.0)
    assert study.steps([497664.0, 500736.0], [497664.0], 1024) == (1024, 1024)
    assert study.steps([28.0, 28.0], [43.0, 43.0], None) == (1.0, 1.0)


def test_two_rounds_of_the_same_whole_microsecond_difference_are_noise_now_and_were_certain_before(monkeypatch):
    """lat_mmap 1M, qemu-i386-eras: 2.4 gave 28 µs twice, 5.10 43 µs twice."""
    a, b = [28.0, 28.0], [43.0, 43.0]
    c = stats.study_test(a, b, R2, R2)
    assert c is not None and c.steps == (1.0, 1.0) and c.df == 1
    assert 0.01 < c.p < 0.02  # t = 49 on one degree of freedom
    assert not stats.claimed(stats.correct([c.p] + [0.5] * 54)[0])  # its family: 55 lmbench tests
    assert c.shift == 15 and c.shift_ci95 == (14, 16)  # known to ± 1 µs, not "15 … 15"
    monkeypatch.setattr(study, "printed_step", lambda values: None)  # before: no floor
    old = stats.study_test(a, b, R2, R2)
    assert old is not None and old.p == 0.0 and old.shift_ci95 == (15, 15)


def test_a_kernel_against_itself_in_whole_steps_or_zeros_is_p_one():
    assert stats.study_test([43.0, 43.0], [43.0, 43.0], R2, R2).p == 1.0
    kernel_load = [0.0] * 8  # qemu-arm-ab: the kernel is loaded at t = 0 in every boot
    assert stats.study_test(kernel_load, kernel_load, list(range(1, 9)), list(range(1, 9))).p == 1.0
    c = stats.study_test([43.0, 44.0, 43.0], [44.0, 43.0, 43.0])  # unpaired: the same values
    assert c is not None and c.p == pytest.approx(1.0)


@pytest.mark.parametrize("place", ["summary", "terminal table", "compare --boot", "places", "workloads chart"])
def test_no_place_claims_two_rounds_of_one_printed_step_and_each_did_without_the_floor(place, monkeypatch):
    """The places whose values are the ones given (the others rescale them): 43 → 44 µs in
    both rounds."""
    a, b = [43.0, 43.0], [44.0, 44.0]
    assert not PLACES[place](a, b)
    monkeypatch.setattr(study, "printed_step", lambda values: None)
    assert PLACES[place](a, b)


def test_a_large_difference_at_printed_precision_is_still_claimed_in_5_rounds():
    """qemu-i386-eras, boot to the login prompt: 2.4.37.11 against 2.6.32 (5 rounds, µs);
    and 2.4 against 2.6 on a small board, malloc MBs apart in every round, no caller's chunk."""
    a = [1.229322, 1.203419, 1.086307, 1.193195, 1.142208]
    b = [0.743, 0.831595, 0.715969, 0.932179, 0.71993]
    c = stats.study_test(a, b, R5, R5)
    assert c is not None and c.steps == (pytest.approx(1e-6), pytest.approx(1e-6)) and c.p < 1e-3
    mb = stats.study_test([28672.0] * 5, [24576.0] * 5, R5, R5)
    assert mb is not None and mb.steps == (1.0, 1.0) and mb.p < 1e-6
    f = findings.tested_finding("boot to login", a, b, "s", "lower", a_rounds=R5, b_rounds=R5)
    g = findings.tested_finding("malloc", [28672.0] * 5, [24576.0] * 5, "kB", "higher", a_rounds=R5, b_rounds=R5)
    findings.resolve([f, g, *(findings.tested_finding(f"m{i}", a, a, "s", "lower") for i in range(58))])
    assert f["significant"] and g["significant"]


def test_initcall_durations_in_whole_ticks_are_tested_with_the_tick():
    """Boot time explained: an early initcall timed with the jiffy, 0 in kernel a's two runs
    and two ticks (20 ms) in b's.  Known to a tick, not to the µs it is printed in."""
    from bringup.report import bootexplain
    from test_bootexplain import block, call

    def kernel(us: int, end: float) -> dict:
        early = [call(f"e{i}_init", [10000, 10000], [0.01] * 2, level="core") for i in range(5)]
        calls = [*early, call("vfp_init", [us, us], [0.02] * 2, level="core")]
        return block(2, [*calls, call("late_init", [40000, 40000], [0.3] * 2)], end=[end, end])

    a, b = kernel(0, 1.0), kernel(20000, 1.02)
    assert bootexplain.clock_tick(a) == bootexplain.clock_tick(b) == 10000
    rows = {r["key"]: r for r in bootexplain.attribute(a, b, "a", "b")["rows"]}
    vfp = rows["vfp_init"]
    assert vfp["tested"] and not vfp["tick"] and 0.05 < vfp["p"] < 0.2 and not vfp["significant"]
    c = stats.study_test([0.0, 0.0], [20000.0, 20000.0], R2, R2)  # the µs alone: certain
    assert c is not None and c.p < 1e-3
