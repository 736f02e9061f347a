"""The round scheduler (balanced positions and carry-over) and the round engine, rounds.run():
redo on a disturbed host, --until-ci, labgrid places and local parallel workers, with fake
places and canned boots."""

import contextlib
import threading
import time
from collections import Counter

import pytest

from bringup import stats
from bringup.boot import rounds
from bringup.errors import BringupError


def test_two_kernels_alternate_ab_ba():
    assert [rounds.order(["a", "b"], r) for r in range(4)] == [["a", "b"], ["b", "a"], ["a", "b"], ["b", "a"]]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_every_kernel_in_every_position_and_after_every_other_equally_often(n):
    ks = [f"k{i}" for i in range(n)]
    rows = [rounds.order(ks, r) for r in range(rounds.cycle(n))]
    assert all(sorted(r) == ks for r in rows)
    positions = Counter((k, i) for r in rows for i, k in enumerate(r))
    assert len(set(positions.values())) == 1 and len(positions) == n * n
    if n > 1:
        follows = Counter((r[i], r[i + 1]) for r in rows for i in range(n - 1))
        assert len(follows) == n * (n - 1) and len(set(follows.values())) == 1


# --- the round engine (rounds.run) with fake places and canned boots ------------------------


class LocalPlace:
    """A board that is not a labgrid place (as targets.BoardPlace): each hold is logged."""

    name = None

    def __init__(self):
        self.holds = 0
        self.lock = threading.Lock()

    @contextlib.contextmanager
    def hold(self, cancel=None):
        with self.lock:
            self.holds += 1
        yield lambda run_dir: ("target", run_dir)


class LabPlace:
    def __init__(self, name, log):
        self.name, self.log = name, log

    @contextlib.contextmanager
    def hold(self, cancel=None):
        self.log.append(("acquire", self.name))
        try:
            yield lambda run_dir: self.name
        finally:
            self.log.append(("release", self.name))


def quiet(*_):
    return None


def test_one_worker_boots_every_kernel_once_per_round_in_the_williams_orders():
    seen = []
    out = rounds.run(
        ["a", "b", "c"],
        stats.UntilCI(runs=6),
        lambda r: seen.append((r.round, r.kernel)) or r.round,
        places=[LocalPlace()],
        say=quiet,
    )
    assert [k for _, k in seen] == [k for i in range(6) for k in rounds.order(["a", "b", "c"], i)]
    assert out.rounds() == [1, 2, 3, 4, 5, 6] and out.stopped == "6 rounds, as asked"
    assert [(d.round, d.kernel) for d in out.runs] == seen and all(not d.redone for d in out.runs)
    assert out.order[2] == rounds.order(["a", "b", "c"], 1) and out.workers == 1


def test_a_disturbed_run_is_done_again_at_most_max_redo_times_and_kept_marked(monkeypatch):
    """The guard's verdicts come canned: the first attempt of a's round 1 is disturbed once,
    b's round 1 every time (kept after MAX_REDO redos, its host entry says so), a failed
    boot (redo_if False) is not done again."""
    verdicts = {("a", 1): ["busy", None], ("b", 1): ["busy"] * 5, ("a", 2): ["busy"], ("b", 2): [None]}
    current: list = []
    monkeypatch.setattr(rounds.hostload, "baseline", lambda: 1.0)
    monkeypatch.setattr(rounds.hostload, "snapshot", lambda: object())
    monkeypatch.setattr(rounds.hostload, "judge", lambda before, after, base: {"disturbed": current[0]})

    def boot(r):
        current[:] = [verdicts[(r.kernel, r.round)].pop(0)]
        return {"ok": not (r.kernel == "a" and r.round == 2), "suffix": r.suffix}

    said: list[str] = []
    out = rounds.run(
        ["a", "b"],
        stats.UntilCI(runs=2),
        boot,
        places=[LocalPlace()],
        guard=True,
        redo_if=lambda res: res["ok"],
        say=said.append,
    )
    got = [(d.round, d.kernel, d.attempt, d.redone, d.result["suffix"]) for d in out.runs]
    assert got == [
        (1, "a", 0, True, "-r01"),
        (1, "a", 1, False, "-r01-redo1"),
        (1, "b", 0, True, "-r01"),
        (1, "b", 1, True, "-r01-redo1"),
        (1, "b", 2, False, "-r01-redo2"),  # MAX_REDO reached: kept, its host entry says disturbed
        (2, "b", 0, False, "-r02"),
        (2, "a", 0, False, "-r02"),  # failed: not done again though disturbed
    ]
    assert rounds.MAX_REDO == 2 and out.runs[4].host == {"disturbed": "busy"}
    assert out.redone("a") == 1 and out.redone("b") == 2 and len(out.kept()) == 4
    assert "  round 1 b: host disturbed (busy): booting it again" in said


def test_a_disturbed_build_is_built_again_not_booted(monkeypatch):
    """The engine names what it does again after the measurement: the build cost's rounds
    build, they do not boot (its progress counts builds too)."""
    verdicts = [["busy", None]]
    monkeypatch.setattr(rounds.hostload, "baseline", lambda: 1.0)
    monkeypatch.setattr(rounds.hostload, "snapshot", lambda: object())
    monkeypatch.setattr(rounds.hostload, "judge", lambda before, after, base: {"disturbed": verdicts[0].pop(0)})
    said: list[str] = []
    out = rounds.run(
        ["k"],
        stats.UntilCI(runs=1),
        lambda r: r.suffix,
        places=[LocalPlace()],
        guard=True,
        work=rounds.BUILDS,
        say=said.append,
    )
    assert [d.result for d in out.runs] == ["-r01", "-r01-redo1"]
    assert "  round 1 k: host disturbed (busy): building it again" in said
    assert not any("booting" in line for line in said)


def test_without_the_guard_nothing_is_judged(monkeypatch):
    monkeypatch.setattr(rounds.hostload, "snapshot", lambda: (_ for _ in ()).throw(AssertionError("judged")))
    out = rounds.run(["a"], stats.UntilCI(runs=2), lambda r: 1, places=[LocalPlace()], say=quiet)
    assert [d.host for d in out.runs] == [None, None]


def test_until_ci_stops_once_the_headline_intervals_are_narrow():
    """The values of tests/test_until_ci.py: b - a is 0, +0.4, -0.4, then 0 on a base of 10:
    within ±2 % after 8 rounds.  The headline is built from the kept runs the engine hands over."""
    a = [10.0] * 12
    b = [10.0, 10.4, 9.6] + [10.0] * 9
    vals = {"a": a, "b": b}
    calls = []

    def headline(kept):
        calls.append(len(kept))
        h = {"m": {"a": {}, "b": {}}}
        for d in kept:
            h["m"][d.kernel][d.round] = d.result
        return h

    said: list[str] = []
    out = rounds.run(
        ["a", "b"],
        rounds.rule(3, 2.0, 12),
        lambda r: vals[r.kernel][r.round - 1],
        places=[LocalPlace()],
        headline=headline,
        say=said.append,
    )
    assert out.rounds() == list(range(1, 9)) and calls == [2 * n for n in range(1, 9)]
    assert out.stopped == "95 % confidence intervals of 1 headline difference within ±2 % after 8 rounds"
    assert said[-1] == f"  stopped: {out.stopped}"
    assert any(s.startswith("  after round 3: 1 interval(s) not yet narrow") for s in said)
    # without --until-ci the headline is never computed: nothing parsed for nothing
    calls.clear()
    rounds.run(["a", "b"], stats.UntilCI(runs=3), lambda r: 1.0, places=[LocalPlace()], headline=headline, say=quiet)
    assert calls == []


def test_several_labgrid_places_run_whole_rounds_each_held_once():
    log: list = []
    ps = [LabPlace("p1", log), LabPlace("p2", log)]

    def boot(r):
        time.sleep(0.01)
        return (r.place, r.target_for(None), threading.current_thread().name)

    out = rounds.run(["a", "b"], stats.UntilCI(runs=6), boot, places=ps, say=quiet)
    assert log.count(("acquire", "p1")) == 1 and log.count(("release", "p2")) == 1
    assert out.workers == 2 and set(out.place_of.values()) == {"p1", "p2"}
    for d in out.runs:
        place, target, thread = d.result
        assert place == target == out.place_of[d.round] and place in thread
    for p in ("p1", "p2"):  # each place runs both orders
        assert {tuple(out.order[r]) for r, q in out.place_of.items() if q == p} == {("a", "b"), ("b", "a")}


def test_refusals_before_any_work():
    lab = [LabPlace("p1", [])]
    with pytest.raises(BringupError, match=r"^--jobs 0: give 1 or more$"):
        rounds.check([LocalPlace()], 0, False)
    with pytest.raises(BringupError, match=r"^--jobs 2: the board is a labgrid board"):
        rounds.check(lab, 2, False)
    with pytest.raises(BringupError, match=r"^--jobs 2: the host-load guard judges one run at a time"):
        rounds.check([LocalPlace()], 2, True)
    rounds.check([LocalPlace()], 2, False)
    rounds.check(lab, 1, True)
    booted = []
    with pytest.raises(BringupError, match="--jobs 3: the host-load guard"):
        rounds.run(["a"], stats.UntilCI(runs=1), booted.append, places=[LocalPlace()], jobs=3, guard=True, say=quiet)
    assert booted == []


# --- local parallel workers (jobs) -----------------------------------------------------------


def test_two_local_workers_share_the_rounds_each_done_once_results_in_round_order():
    place = LocalPlace()
    running: set[str] = set()
    overlap = threading.Event()
    lock = threading.Lock()

    def boot(r):
        me = threading.current_thread().name
        with lock:
            running.add(me)
            if len(running) > 1:
                overlap.set()
        time.sleep(0.02)
        with lock:
            running.discard(me)
        return (r.round, r.kernel, r.worker, me, r.cancel is not None, r.target_for(f"dir-{r.round}"))

    said: list[str] = []
    out = rounds.run(["a", "b"], stats.UntilCI(runs=8), boot, places=[place], jobs=2, say=said.append)
    assert overlap.is_set(), "the two workers never booted at the same time"
    assert place.holds == 2 and out.workers == 2  # each worker holds the board on its own
    assert said[0] == "  2 local workers: up to 2 boots at once"
    assert {d.result[2] for d in out.runs} == {0, 1}  # both workers used
    assert len({d.result[3] for d in out.runs}) == 2
    assert all(d.result[4] for d in out.runs)  # each boot can be stopped
    assert [(d.round, d.kernel) for d in out.runs] == [(r, k) for r in range(1, 9) for k in out.order[r]]
    assert sorted(out.order) == list(range(1, 9)) and all(sorted(ks) == ["a", "b"] for ks in out.order.values())
    assert all(d.result[5] == ("target", f"dir-{d.round}") for d in out.runs)  # a fresh target per boot
    assert out.place_of == dict.fromkeys(range(1, 9))  # no labgrid place


def test_local_workers_boot_the_kernels_of_one_round_at_once():
    """One round of two kernels with two local workers: both boots run at the same time (a
    round is not one worker's: on the instruction clock `make all` runs one round)."""
    running: set[str] = set()
    both = threading.Event()
    lock = threading.Lock()

    def boot(r):
        with lock:
            running.add(r.kernel)
            if running == {"a", "b"}:
                both.set()
        both.wait(2)  # each boot waits (at most 2 s) for the other kernel's to start
        with lock:
            running.discard(r.kernel)
        return r.worker

    out = rounds.run(["a", "b"], stats.UntilCI(runs=1), boot, places=[LocalPlace()], jobs=2, say=quiet)
    assert both.is_set(), "the round's two kernels did not boot at once"
    assert sorted(d.result for d in out.runs) == [0, 1] and out.order == {1: ["a", "b"]}


def test_an_error_in_one_local_worker_stops_the_others():
    started: list[int] = []

    def boot(r):
        started.append(r.round)
        if r.round == 1 and r.kernel == "b":  # the second worker's first boot (workers take boots)
            raise BringupError("QEMU exited at start (code 1): boom")
        if r.cancel is not None and r.cancel.wait(5):
            raise KeyboardInterrupt  # a boot under way ends as interrupted
        return r.round

    t0 = time.monotonic()
    with pytest.raises(BringupError, match="QEMU exited at start"):
        rounds.run(["a", "b"], stats.UntilCI(runs=40), boot, places=[LocalPlace()], jobs=2, say=quiet)
    assert time.monotonic() - t0 < 5
    assert len(started) < 8  # nobody took many more rounds


def test_ctrl_c_stops_every_local_worker(ctrl_c_handled):
    import _thread

    both = threading.Barrier(3)
    cancelled: list[bool] = []

    def boot(r):
        both.wait(20)
        if not r.cancel.wait(30):
            raise AssertionError("never cancelled")
        cancelled.append(True)
        raise KeyboardInterrupt

    def ctrl_c():
        both.wait(20)
        time.sleep(0.2)
        _thread.interrupt_main()

    threading.Thread(target=ctrl_c, daemon=True).start()
    said: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        rounds.run(["a", "b"], stats.UntilCI(runs=10), boot, places=[LocalPlace()], jobs=2, say=said.append)
    assert cancelled == [True, True]
    assert "  interrupted: stopping the boots under way, then releasing the places" in said


def test_a_shell_step_under_way_stops_when_its_worker_is_cancelled():
    """A footprint or workload boot of one worker may be minutes into a shell step (lmbench)
    when another worker fails: the step looks at the cancel event every SLICE seconds and
    stops as interrupted; without an event, or before it is set, the step's own timeout holds."""
    import pexpect

    from bringup.boot import shell

    class Exp:  # a console that never prints the awaited line
        def __init__(self):
            self.waited = 0.0

        def expect(self, pattern, timeout):
            time.sleep(timeout)
            self.waited += timeout
            raise pexpect.TIMEOUT("no match")

    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        shell.expect(Exp(), "never", 30.0, cancel)
    assert time.monotonic() - t0 < 0.3 + 2 * shell.SLICE + 0.5
    exp = Exp()
    with pytest.raises(pexpect.TIMEOUT):
        shell.expect(exp, "never", 0.6, threading.Event())  # never set: the step's timeout
    assert shell.SLICE <= exp.waited <= 0.61  # in slices, never past the timeout
    with pytest.raises(pexpect.TIMEOUT):
        shell.expect(Exp(), "never", 0.1)
