"""bringup.stats against values known without scipy (worked by hand or from the
tests' definitions), the study's one test (stats.study_test: its pairing, its
interval, its family's correction), and the property that drift over time does not
become a kernel difference when runs are paired and interleaved."""

import math

import pytest

from bringup import stats


def test_t95_known_quantiles():
    assert stats.t95(4) == pytest.approx(2.776, abs=1e-3)
    assert stats.t95(10) == pytest.approx(2.228, abs=1e-3)
    assert stats.t95(0) == math.inf


def test_summary_of_known_values():
    s = stats.summarize([1.0, 2.0, 3.0, 4.0, 5.0])
    assert (s["n"], s["median"], s["mean"], s["min"], s["max"]) == (5, 3.0, 3.0, 1.0, 5.0)
    assert s["stdev"] == pytest.approx(math.sqrt(2.5), abs=1e-6)
    half = 2.776445 * math.sqrt(2.5) / math.sqrt(5)
    assert s["ci95"] == pytest.approx([3 - half, 3 + half], abs=1e-5)


def test_the_study_test_pairs_by_round_number_not_by_position():
    """The rounds given, the values join by round: b's list in another order pairs the same."""
    a, b = [1.0, 2.0, 4.0, 3.0], [2.1, 4.0, 8.3, 6.2]
    c = stats.study_test(a, b, [1, 2, 3, 4], [1, 2, 3, 4])
    shuffled = stats.study_test(a, [b[2], b[0], b[3], b[1]], [1, 2, 3, 4], [3, 1, 4, 2])
    assert c is not None and c.paired and c.name == "paired t-test (log ratios)"
    assert shuffled == c and c.n == 4


def test_without_rounds_or_with_fewer_than_two_pairs_the_test_is_welch_s():
    a, b = [1.0, 1.1, 0.9], [2.0, 2.2, 1.8]
    assert stats.study_test(a, b).name == "Welch t-test (logs)"
    one_pair = stats.study_test(a, b, [1, 2, 3], [3, 4, 5])  # only round 3 in both
    assert one_pair is not None and not one_pair.paired and one_pair.n == 3
    assert stats.study_test([1.0], [2.0, 3.0]) is None
    assert stats.study_test([0.0, 1.0], [1.0, 2.0]).name == "Welch t-test (values)"


def test_the_ratio_s_interval_is_the_test_s():
    """exp(mean ± t·se): the interval excludes 1 exactly when p < 0.05."""
    a = [10.0, 10.5, 9.8, 10.1, 10.3]
    for factor in (1.0, 1.004, 1.02, 1.3):
        b = [x * factor + 0.05 * (-1) ** i for i, x in enumerate(a)]
        c = stats.study_test(a, b, [1, 2, 3, 4, 5], [1, 2, 3, 4, 5])
        lo, hi = c.ratio_ci95
        assert lo <= c.ratio <= hi
        assert (lo > 1 or hi < 1) == (c.p < 0.05)


def test_correct_leaves_untested_values_out_of_the_family():
    assert stats.correct([0.01, None, 0.04]) == pytest.approx([0.02, None, 0.04])
    assert stats.correct([None, None]) == [None, None] and stats.correct([]) == []
    assert stats.claimed(0.049) and not stats.claimed(0.05) and not stats.claimed(None)


def test_hodges_lehmann_by_hand():
    assert stats.hodges_lehmann([1, 2, 3], [4, 5, 6]) == 3.0  # pairwise differences 1..5, median 3
    # paired differences 1, 2, 4: Walsh averages 1, 1.5, 2.5, 2, 3, 4 -> median 2.25
    assert stats.hodges_lehmann([0, 0, 0], [1, 2, 4], paired=True) == 2.25


def test_benjamini_hochberg_by_hand():
    # p sorted 0.01, 0.02, 0.03, 0.04 of m = 4: q_i = min over j>=i of p_j * m / j = 0.04 each
    assert stats.correct([0.01, 0.04, 0.03, 0.02]) == pytest.approx([0.04, 0.04, 0.04, 0.04])
    assert stats.correct([0.001, 0.5]) == pytest.approx([0.002, 0.5])


def test_rounds_needed_and_smallest_p():
    """--until-ci's floor on rounds (stats/untilci.py), from a rank test's smallest p."""
    assert stats.smallest_p(5, paired=True) == pytest.approx(0.0625)
    assert stats.rounds_needed(1) == 6  # 2/2^6 = 0.031 < 0.05
    assert stats.rounds_needed(56) == 12  # 2/2^12 = 0.00049 < 0.05/56 = 0.00089


def test_shift_interval_is_reproducible_and_covers_the_shift():
    a = [10.0, 10.2, 9.9, 10.1, 10.0, 10.3]
    b = [x + 1 for x in a]
    ci = stats.shift_interval(a, b, paired=True)
    assert ci == (1.0, 1.0) or (ci[0] <= 1.0 <= ci[1])
    c1 = stats.study_test(a, [x + 0.5 + 0.01 * i for i, x in enumerate(a)])
    c2 = stats.study_test(a, [x + 0.5 + 0.01 * i for i, x in enumerate(a)])
    assert c1 == c2 and c1.shift_ci95 == c2.shift_ci95 and c1.shift_ci95[0] <= c1.shift <= c1.shift_ci95[1]


def test_drift_in_one_arm_s_early_runs_is_not_a_kernel_difference_when_paired():
    """Identical kernels measured in interleaved rounds while the host drifts: every
    round's two boots see the same drift, so the paired test finds nothing, while the
    old design (all of A's runs, then all of B's) turns the drift into a 'difference'."""
    drift = [1.30, 1.22, 1.15, 1.08, 1.03, 1.01, 1.00, 1.00]  # a host settling down
    noise_a = [0.004, -0.003, 0.002, -0.001, 0.003, -0.002, 0.001, -0.004]
    noise_b = [-0.002, 0.003, -0.004, 0.001, -0.001, 0.002, -0.003, 0.004]
    a = [d + e for d, e in zip(drift, noise_a, strict=True)]
    b = [d + e for d, e in zip(drift, noise_b, strict=True)]
    rounds = list(range(1, 9))
    paired = stats.study_test(a, b, rounds, rounds)
    assert paired.paired and paired.p > 0.05 and paired.shift_ci95[0] <= 0 <= paired.shift_ci95[1]
    # the old design: A's passes in the drifting first half, B's in the settled second half
    blocked = stats.study_test(a[:4], b[4:])
    assert blocked.p < 0.05


def test_detectable_is_none_when_no_difference_could_be_claimed():
    """Two rounds of a noisy metric among many tests: t(1 - alpha/2, 1) x se overflows
    exp(); the report says nothing rather than failing (seen on qemu-i386-eras)."""
    assert stats.detectable({"scale": "log", "se": 2.0, "df": 1.0}, 0.05 / 80) is None
    small = stats.detectable({"scale": "log", "se": 0.01, "df": 10.0}, 0.05)
    assert small is not None and 2.0 < small < 2.5
    c = stats.study_test([1.0, 1.01, 0.99, 1.0], [1.0, 1.0, 1.01, 0.99], [1, 2, 3, 4], [1, 2, 3, 4])
    assert c.detectable(0.05) == stats.detectable({"scale": c.scale, "se": c.se, "df": c.df}, 0.05)
