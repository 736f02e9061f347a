"""--until-ci: the stopping rule shared by boot timing and the footprint (stats.UntilCI),
with canned per-round values whose intervals are worked by hand (Student's t from a
table: t(0.975; 2..7) = 4.303, 3.182, 2.776, 2.571, 2.447, 2.365), and boot timing's
round loop driving it with canned boots."""

import pytest

from bringup import records, stats
from bringup.boot import rounds
from bringup.boot import timing as boottiming
from bringup.errors import BringupError
from bringup.model.board import load_board
from bringup.model.clocks import with_clock
from bringup.report import findings
from recordfactory import boot_run, build, key


def rounds_of(values):
    return {i + 1: v for i, v in enumerate(values)}


def run_rule(rule, a, b, kernels=("a", "b"), name="metric"):
    """Feed the rule one round at a time, as a measurement loop does; the round it stopped at."""
    for rnd in range(1, len(a) + 1):
        headline = {name: {"a": rounds_of(a[:rnd]), "b": rounds_of(b[:rnd])}}
        if rule.done(rnd, headline, list(kernels)):
            return rnd
    raise AssertionError("the canned values ran out before the rule stopped")


# b - a per round: 0, +0.4, -0.4, then 0 for ever, on a base of 10.  After n rounds the
# mean difference is 0 and its standard deviation sqrt(0.32 / (n - 1)); the interval's
# half-width in % of 10 is then t(n-1) * sd / sqrt(n) * 10:
#   n=3: 4.303 * 0.4000 / 1.732 * 10 = 9.94 %     n=6: 2.571 * 0.2530 / 2.449 * 10 = 2.66 %
#   n=4: 3.182 * 0.3266 / 2.000 * 10 = 5.20 %     n=7: 2.447 * 0.2309 / 2.646 * 10 = 2.14 %
#   n=5: 2.776 * 0.2828 / 2.236 * 10 = 3.51 %     n=8: 2.365 * 0.2138 / 2.828 * 10 = 1.79 %
A = [10.0] * 12
B = [10.0, 10.4, 9.6] + [10.0] * 9


def test_the_interval_of_a_difference_by_hand():
    iv = stats.difference_interval(rounds_of(A[:4]), rounds_of(B[:4]))
    assert iv["rounds"] == 4 and iv["shift_pct"] == pytest.approx(0.0, abs=1e-9)
    assert iv["half_pct"] == pytest.approx(5.20, abs=0.01) and not iv["excludes_zero"]
    # only the rounds both kernels have pair up: round 2 of b is missing
    iv = stats.difference_interval(rounds_of(A[:3]), {1: 10.0, 3: 9.6})
    assert iv["rounds"] == 2
    assert stats.difference_interval({1: 10.0}, {1: 11.0}) is None
    zero = stats.difference_interval({1: 0.0, 2: 0.0}, {1: 1.0, 2: 2.0})
    assert zero["half_pct"] is None  # no relative width on a base of 0


def test_stops_when_every_headline_difference_is_narrow():
    rule = stats.UntilCI(runs=3, pct=2.0, max_rounds=12)
    assert run_rule(rule, A, B) == 8  # 2.14 % after 7 rounds, 1.79 % after 8
    assert rule.stopped == "95 % confidence intervals of 1 headline difference within ±2 % after 8 rounds"
    assert rule.left == []
    rule = stats.UntilCI(runs=3, pct=6.0, max_rounds=12)
    assert run_rule(rule, A, B) == 4  # 9.94 % after 3 rounds, 5.20 % after 4
    # never before the rounds asked, even when narrow earlier
    rule = stats.UntilCI(runs=10, pct=6.0, max_rounds=12)
    assert run_rule(rule, A, B) == 10


def test_stops_at_the_maximum_and_says_what_was_still_wide():
    rule = stats.UntilCI(runs=3, pct=2.0, max_rounds=6)
    assert run_rule(rule, A, B) == 6
    assert rule.stopped.startswith("--max-rounds 6 reached before the intervals were within ±2 %: metric (b against a)")
    assert "±2.7 % (wider than ±2 %)" in rule.stopped  # 2.66 % after 6 rounds


def test_without_until_ci_the_rounds_asked_are_run():
    rule = stats.UntilCI(runs=2)
    assert not rule.done(1, {}, ["a", "b"]) and rule.done(2, {}, ["a", "b"])
    assert rule.stopped == "2 rounds, as asked" and rule.limit == 2


def test_a_request_that_cannot_work_is_refused():
    with pytest.raises(BringupError, match="--max-rounds 4 is below the 5 rounds"):
        rounds.rule(5, 5.0, 4)
    with pytest.raises(BringupError, match="--max-rounds 2 is below the 3 rounds"):
        rounds.rule(1, 5.0, 2)
    with pytest.raises(BringupError, match="--until-ci 0: give a width"):
        rounds.rule(3, 0, 10)
    assert rounds.rule(1, 5.0, 3).limit == 3
    assert rounds.rule(5, None, 1).limit == 5  # no --until-ci: the maximum plays no part


def test_one_kernel_is_judged_by_the_interval_of_its_mean():
    rule = stats.UntilCI(runs=3, pct=3.0, max_rounds=10)
    tight = {"m": {"a": rounds_of([1.00, 1.01, 0.99])}}  # 4.303 * 0.01 / 1.732 = ±2.48 % of 1.00
    assert rule.done(3, tight, ["a"]) and "1 headline value within ±3 %" in rule.stopped
    assert not stats.UntilCI(runs=3, pct=2.0).done(3, tight, ["a"])
    loose = {"m": {"a": rounds_of([1.0, 2.0, 0.5])}}
    assert not rule.done(3, loose, ["a"]) and rule.left[0].startswith("m: ±")


def test_a_metric_no_round_measured_holds_nothing_back():
    headline = {"m": {"a": rounds_of(A[:8]), "b": rounds_of(B[:8])}, "never reached": {"a": {}, "b": {}}}
    assert stats.still_wide(headline, ["a", "b"], 2.0) == ([], 1)


def test_a_narrow_difference_that_the_rounds_cannot_test_yet_goes_on():
    """b is 5 % above a in every round: the interval is narrow from round 3 on, but it
    excludes 0, and a paired test needs 6 rounds to reach p < 0.05 (2/2^6): stopping at
    3 would leave a precise difference the report cannot state."""
    a = [100.0, 100.2, 99.8, 100.1, 99.9, 100.0, 100.1]
    b = [x + 5.0 + e for x, e in zip(a, [0.1, -0.1, 0.05, 0.0, -0.05, 0.1, 0.0], strict=True)]
    rule = stats.UntilCI(runs=3, pct=2.0, max_rounds=20)
    headline = {"m": {"a": rounds_of(a[:3]), "b": rounds_of(b[:3])}}
    assert not rule.done(3, headline, ["a", "b"])
    assert "excludes 0, and 3 rounds cannot test it among 1 tests: 6 can" in rule.left[0]
    assert run_rule(stats.UntilCI(runs=3, pct=2.0, max_rounds=20), a, b) == 6
    f = findings.tested_finding(
        "m", a[:6], b[:6], "us", "lower", a_rounds=[1, 2, 3, 4, 5, 6], b_rounds=[1, 2, 3, 4, 5, 6]
    )
    findings.resolve([f])
    assert f["significant"]  # what the rounds saw, the report can now state


def test_drift_in_one_arm_s_early_rounds_does_not_stop_the_rounds_nor_become_a_claim():
    """Identical kernels; the host was busy during b's boots of the first 3 rounds (+10 %).
    After 3 rounds the differences alone look precise (+10 % ± 0.4 %) but cannot be
    tested, so the rule goes on; the settled rounds widen the interval around 0 until
    it is within ±5 % (7 rounds: mean 4.29 %, half-width 2.447 * 5.35 / 2.646 = 4.95 %),
    and the paired, corrected test makes no claim of it."""
    a = [100.2, 99.8, 100.1, 99.9, 100.0, 100.3, 99.7, 100.1, 99.9, 100.2, 99.8, 100.0]
    noise = [0.1, -0.2, 0.1, 0.2, -0.1, 0.1, -0.2, 0.1, -0.1, 0.2, -0.1, 0.1]
    drift = [10.0, 10.0, 10.0] + [0.0] * 9
    b = [x + e + d for x, e, d in zip(a, noise, drift, strict=True)]
    rule = stats.UntilCI(runs=3, pct=5.0, max_rounds=12)
    assert not rule.done(3, {"m": {"a": rounds_of(a[:3]), "b": rounds_of(b[:3])}}, ["a", "b"])
    assert "excludes 0" in rule.left[0]
    rule = stats.UntilCI(runs=3, pct=5.0, max_rounds=12)
    n = run_rule(rule, a, b)
    assert n == 7 and rule.stopped.endswith("within ±5 % after 7 rounds")
    rounds = list(range(1, n + 1))
    f = findings.tested_finding("m", a[:n], b[:n], "us", "lower", a_rounds=rounds, b_rounds=rounds)
    findings.resolve([f])
    assert f["paired"] and f["significant"] is False and f["verdict"] == "no significant difference"


# --- boot timing's round loop with canned boots ----------------------------------


@pytest.fixture
def canned_boots(tmp_path, monkeypatch):
    """boot_timing() on qemu-arm with boot_once replaced: each kernel's boots reach the
    summary's milestones at canned times, round by round (host times: qemu-arm on the host clock)."""
    board = with_clock(load_board("qemu-arm"), "host")
    logs = tmp_path / "logs"
    for k in board.kernels:
        records.write(logs / "qemu-arm" / k.id / "build.json", build(k.id))
    times: dict[str, list[float]] = {}
    calls: list[tuple[str, int]] = []

    def boot_once(board, kernel_id, rec_b, recdir, initrd, run_dir, target, rules, options):
        run_index = options.run_index
        calls.append((kernel_id, run_index))
        t = times[kernel_id][run_index - 1]
        ms = {
            name: {"host_s": t * f, "printk_s": None, "line": i + 1, "text": name}
            for i, (name, f) in enumerate((("freeing_init", 0.6), ("login", 1.0)))
        }
        r = boot_run(kernel_id, run_id=f"{kernel_id}-{run_index}", run_index=run_index, path="direct", milestones=ms)
        return r.model_dump(mode="json", by_alias=True)

    monkeypatch.setattr(boottiming, "boot_once", boot_once)

    def run(**kw):
        return boottiming.boot_timing(
            board,
            logs,
            tmp_path / "initrd",
            lambda run_dir: None,
            path="direct",
            say=lambda m: None,
            rootfs_ref=records.RootfsRef(file="initrd", sha256=key("rd"), inputs_key=None),
            guard=False,
            **kw,
        )

    return board, times, calls, run


def test_boot_timing_adds_rounds_until_the_summary_s_milestones_are_narrow(canned_boots):
    board, times, calls, run = canned_boots
    kernels = [k.id for k in board.kernels]
    times[kernels[0]] = A
    times[kernels[1]] = B
    s = run(runs=3, until_ci=2.0, max_rounds=12)
    assert s.stopped == "95 % confidence intervals of 2 headline differences within ±2 % after 8 rounds"
    assert len(s.order) == 8 and len(calls) == 16
    assert s.kernels[kernels[1]].milestones["login"].rounds == list(range(1, 9))
    s = run(runs=3, until_ci=2.0, max_rounds=5)
    assert s.stopped is not None and s.stopped.startswith("--max-rounds 5 reached") and len(s.order) == 5
    s = run(runs=2)
    assert s.stopped == "2 rounds, as asked" and len(s.order) == 2
    calls.clear()
    with pytest.raises(BringupError, match="--max-rounds 2 is below the 3 rounds"):
        run(runs=3, until_ci=2.0, max_rounds=2)
    assert calls == []  # refused before any boot


def test_boot_timing_reads_each_console_log_once_after_its_boot(tmp_path, monkeypatch):
    """The console summary, the deferred probes and the initcalls (profile initcalls) all
    need each good run's console.log: it is read once, as the boot ends, not once each."""
    from pathlib import Path

    from bringup.model.profiles import load_profile

    board = load_board("qemu-arm")
    logs = tmp_path / "logs"
    for k in board.kernels:
        records.write(logs / "qemu-arm" / k.id / "build.json", build(k.id))

    def boot_once(board, kernel_id, rec_b, recdir, initrd, run_dir, target, rules, options):
        run_index = options.run_index
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "console.log").write_text("[    0.000000] Linux version 6.12\nlogin:\n")
        ms = {
            name: {"host_s": t + 0.01 * run_index, "printk_s": None, "line": i + 1, "text": name}
            for i, (name, t) in enumerate((("freeing_init", 0.6), ("login", 1.0)))
        }
        r = boot_run(kernel_id, run_id=run_dir.name, run_index=run_index, path="direct", milestones=ms)
        return r.model_dump(mode="json", by_alias=True)

    monkeypatch.setattr(boottiming, "boot_once", boot_once)
    reads: list[str] = []
    real = Path.read_bytes

    def read_bytes(self):
        if self.name == "console.log":
            reads.append(str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    s = boottiming.boot_timing(
        board,
        logs,
        tmp_path / "initrd",
        lambda run_dir: None,
        runs=2,
        path="direct",
        say=lambda m: None,
        rootfs_ref=records.RootfsRef(file="initrd", sha256=key("rd"), inputs_key=None),
        guard=False,
        profile=load_profile("initcalls"),
    )
    assert len(reads) == 4 and len(set(reads)) == 4  # 2 kernels x 2 rounds, each log once
    k = board.kernels[0].id
    assert s.kernels[k].console is not None and s.kernels[k].console.bytes.n == 2  # the summaries had every log
    assert s.kernels[k].initcalls is not None and s.kernels[k].initcalls.runs == s.kernels[k].run_ids
