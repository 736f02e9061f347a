"""Several labgrid places at once, without a lab: the board file's `places` and
PLACES=, how rounds are dealt to places (rounds.Dealer), boot_timing() spreading
whole rounds over two places in parallel (with canned boots and fake places),
a place held for a whole step (LabgridTarget with held_by, a fake labgrid-client),
and place as a factor in the report (report/places.py): an A/A case that claims
nothing and a real offset that is found."""

from __future__ import annotations

import contextlib
import threading
import time

import pytest

from bringup import records, stats, targets
from bringup.boot import rounds
from bringup.boot import timing as boottiming
from bringup.boot.target import BootSpec
from bringup.errors import BringupError
from bringup.model.base import DataError
from bringup.model.board import load_board
from bringup.model.clocks import with_clock
from bringup.model.milestones import load_rules
from bringup.report import places as placereport
from bringup.targets.labgrid import LabgridSpec, LabgridTarget
from recordfactory import boot_run, build, key
from recordfactory import boot_timing as rf_boot_timing
from test_labgrid_unit import SHOW, fake_client, write_board

# --- the board file and PLACES= ------------------------------------------------------


def test_places_in_the_board_file_and_their_errors(tmp_path):
    b = load_board(str(write_board(tmp_path, '[labgrid]\nplaces = ["lab-1", "lab-2"]\ncoordinator = "h:1"')))
    assert LabgridSpec.of(b).names() == ["lab-1", "lab-2"]
    ps = targets.places(b)
    assert [p.name for p in ps] == ["lab-1", "lab-2"] and all(p.shared for p in ps)
    assert [p.name for p in targets.places(b, ["x"])] == ["x"]  # PLACES= wins
    one = load_board(str(write_board(tmp_path, '[labgrid]\nplace = "lab-1"\ncoordinator = "h:1"', name="one")))
    assert [(p.name, p.shared) for p in targets.places(one)] == [("lab-1", False)]
    for extra, message in [
        ('[labgrid]\nplace = "a"\nplaces = ["b"]', "field 'labgrid.places': give either place or places, not both"),
        ('[labgrid]\nplaces = ["a", "a"]', "field 'labgrid.places': 'a' is listed twice"),
        ('[labgrid]\ncoordinator = "h:1"', "field 'labgrid.place': missing"),
        ('[labgrid]\nplaces = ["a b"]', "labgrid.places[0]"),
    ]:
        with pytest.raises(DataError) as e:
            load_board(str(write_board(tmp_path, extra, name="bad")))
        assert message in str(e.value) and "\n" not in str(e.value)


def test_places_option_is_checked_before_any_work():
    assert targets.parse_places("a, b,c") == ["a", "b", "c"]
    assert targets.parse_places(None) == [] and targets.parse_places("") == []
    with pytest.raises(BringupError, match=r"^--places a,b c: 'b c' is not a labgrid place name"):
        targets.parse_places("a,b c")
    with pytest.raises(BringupError, match=r"^--places a,a: place 'a' is listed twice"):
        targets.parse_places("a,a")
    qemu = load_board("qemu-arm")
    with pytest.raises(BringupError, match=r"^--places a,b: board qemu-arm is not a labgrid board"):
        targets.places(qemu, ["a", "b"])
    assert [p.name for p in targets.places(qemu)] == [None]


# --- dealing rounds ---------------------------------------------------------------------


def test_each_place_runs_whole_rounds_in_balanced_orders():
    d = rounds.Dealer(stats.UntilCI(runs=4), ["A", "B"], ["p1", "p2"])
    got = [d.take(0), d.take(1), d.take(0), d.take(1), d.take(0), d.take(1)]
    assert got[:4] == [(1, ["A", "B"]), (2, ["B", "A"]), (3, ["B", "A"]), (4, ["A", "B"])]
    assert got[4:] == [None, None]  # 4 rounds asked: no more
    assert d.place_of == {1: "p1", 2: "p2", 3: "p1", 4: "p2"}
    # every place runs every order equally often, and each round has every kernel once
    for p in ("p1", "p2"):
        orders = [tuple(d.order[r]) for r, q in d.place_of.items() if q == p]
        assert sorted(orders) == [("A", "B"), ("B", "A")]
    # one place alone runs the rows as order() does: the single-place order is unchanged
    one = rounds.Dealer(stats.UntilCI(runs=6), ["A", "B", "C"], [None])
    assert [one.take(0)[1] for _ in range(6)] == [rounds.order(["A", "B", "C"], i) for i in range(6)]


def test_the_dealer_stops_once_the_rule_is_met_and_on_stop():
    rule = stats.UntilCI(runs=3, pct=5.0, max_rounds=10)
    d = rounds.Dealer(rule, ["A", "B"], ["p1", "p2"])
    flat = {"m": {"A": {}, "B": {}}}
    for r in range(1, 4):
        rnd, _ = d.take(r % 2)
        flat["m"]["A"][rnd] = 10.0
        flat["m"]["B"][rnd] = 10.0 + 0.001 * rnd
    rnd4, _ = d.take(0)  # under way on p1 when the rule is met
    assert not d.finished(1, flat) and not d.finished(2, flat)
    assert d.finished(3, flat) and d.stopped_at == 3
    assert d.take(1) is None  # no new round once the intervals are narrow
    assert d.finished(rnd4, flat)  # the round under way still finishes and counts
    assert d.finished_rounds == [1, 2, 3, 4]
    d2 = rounds.Dealer(stats.UntilCI(runs=5), ["A"], ["p1"])
    d2.stop()
    assert d2.take(0) is None


# --- boot_timing over two places ------------------------------------------------------------


class FakePlace:
    """A place whose hold is logged; its boots are canned (boot_once replaced)."""

    def __init__(self, name: str, log: list, fail_on_round: int | None = None):
        self.name, self.log, self.fail_on_round = name, log, fail_on_round
        self.threads: set[str] = set()

    @contextlib.contextmanager
    def hold(self, cancel=None):
        self.log.append(("acquire", self.name))
        try:
            yield lambda run_dir: self
        finally:
            self.log.append(("release", self.name))


@pytest.fixture
def two_places(tmp_path, monkeypatch):
    board = with_clock(load_board("qemu-arm"), "host")  # the canned boots are in host time
    logs = tmp_path / "logs"
    for k in board.kernels:
        records.write(logs / "qemu-arm" / k.id / "build.json", build(k.id))
    log: list = []
    offset = {"p1": 0.0, "p2": 0.0}
    running: list[str] = []
    overlap = threading.Event()

    def boot_once(board, kid, rec_b, recdir, initrd, run_dir, target, rules, options):
        run_index = options.run_index
        place = target
        if place.fail_on_round == run_index:
            raise BringupError(f"labgrid place {place.name}: no NetworkSerialPort among its resources (none)")
        running.append(place.name)
        if len(set(running)) > 1:
            overlap.set()  # both places booting at the same time
        time.sleep(0.02)
        running.remove(place.name)
        place.threads.add(threading.current_thread().name)
        log.append(("boot", place.name, run_index, kid))
        t = 2.0 + 0.01 * (run_index % 3) + (0.5 if kid == board.kernels[1].id else 0.0) + offset[place.name]
        ms = {
            name: {"host_s": t * f, "printk_s": None, "line": i + 1, "text": name}
            for i, (name, f) in enumerate((("freeing_init", 0.6), ("login", 1.0)))
        }
        r = boot_run(kid, run_id=run_dir.name, run_index=run_index, path="direct", milestones=ms)
        return r.model_dump(mode="json", by_alias=True)

    monkeypatch.setattr(boottiming, "boot_once", boot_once)

    def run(places, **kw):
        return boottiming.boot_timing(
            board,
            logs,
            tmp_path / "initrd",
            None,
            path="direct",
            say=lambda m: None,
            rootfs_ref=records.RootfsRef(file="initrd", sha256=key("rd"), inputs_key=None),
            guard=False,
            places=places,
            **kw,
        )

    return board, log, offset, overlap, run


def test_two_places_run_whole_rounds_in_parallel_and_each_run_says_where(two_places):
    board, log, offset, overlap, run = two_places
    ks = [k.id for k in board.kernels]
    p1, p2 = FakePlace("p1", log), FakePlace("p2", log)
    s = run([p1, p2], runs=6)
    assert overlap.is_set(), "the two places never booted at the same time"
    assert p1.threads and p2.threads and p1.threads.isdisjoint(p2.threads)  # one worker per place
    # each place held once for the whole run, and released
    assert [e for e in log if e[0] != "boot"].count(("acquire", "p1")) == 1
    assert ("release", "p1") in log and ("release", "p2") in log
    assert s.places == ["p1", "p2"] and len(s.round_places) == 6 and len(s.order) == 6
    assert set(s.round_places) == {"p1", "p2"}
    # a round ran on one place, every kernel once, one after the other
    boots = [e for e in log if e[0] == "boot"]
    for rnd in range(1, 7):
        mine = [e for e in boots if e[2] == rnd]
        assert {e[1] for e in mine} == {s.round_places[rnd - 1]}
        assert [e[3] for e in mine] == s.order[rnd - 1] and sorted(s.order[rnd - 1]) == sorted(ks)
    # each value says its round and its place; rounds pair the kernels
    for k in ks:
        m = s.kernels[k].milestones["login"]
        assert m.rounds == list(range(1, 7))
        assert m.places == [s.round_places[r - 1] for r in m.rounds]
    assert s.stopped == "6 rounds, as asked"
    rec = records.validate(s.model_dump(mode="json", by_alias=True), records.BootTiming, "summary")
    assert rec.kernels[ks[0]].milestones["login"].places == m.places


def test_an_error_on_one_place_stops_the_others_and_releases_every_place(two_places):
    board, log, offset, overlap, run = two_places
    p1, p2 = FakePlace("p1", log), FakePlace("p2", log, fail_on_round=2)
    with pytest.raises(BringupError, match="labgrid place p2: no NetworkSerialPort"):
        run([p1, p2], runs=40)
    assert ("release", "p1") in log and ("release", "p2") in log
    assert len([e for e in log if e[0] == "boot"]) < 78  # the other place stopped early


# --- a place held for a whole step -------------------------------------------------------------


def test_a_held_place_is_acquired_once_and_each_boot_only_switches_power(tmp_path):
    log = tmp_path / "calls"
    show = tmp_path / "show.txt"
    show.write_text(SHOW)
    client = fake_client(tmp_path, f'echo "$5 $6" >> {log}\ncase "$5" in show) cat {show};; esac\nexit 0\n')
    b = load_board(
        str(
            write_board(
                tmp_path,
                f'[labgrid]\nplaces = ["p1", "p2"]\ncoordinator = "127.0.0.1:1"\nclient = "{client}"\n'
                "watch_interval = 0\npower_settle = 0\n[tftp]\nserverip = '10.0.2.2'\ndir = '/srv/tftp'\n",
            )
        )
    )
    place = targets.places(b)[1]
    with place.hold() as target_for:
        for i in range(2):
            t = target_for(tmp_path / f"run{i}")
            assert isinstance(t, LabgridTarget) and t.place_name == "p2"
            assert t.staging("k").prefix == "bringup/lab/p2/k/"  # several places: files apart per place
            with t:
                t.prepare(BootSpec(path="u-boot", cmdline="", kernel=tmp_path / "k"))
                t.power_on()
    calls = log.read_text().split("\n")[:-1]
    assert calls == [
        "acquire ",
        "show ",  # where the files go: once per hold
        "show ",  # boot 1: the resources (and that they are still there)
        "power off",  # not known off yet
        "power on",
        "power off",
        "show ",  # boot 2: the board is known off since boot 1
        "power on",
        "power off",
        "release ",
    ]


def test_a_held_place_is_released_after_an_error_and_on_ctrl_c(tmp_path):
    log = tmp_path / "calls"
    client = fake_client(tmp_path, f'echo "$5 $6" >> {log}\nexit 0\n')
    b = load_board(
        str(write_board(tmp_path, f'[labgrid]\nplace = "p1"\ncoordinator = "127.0.0.1:1"\nclient = "{client}"\n'))
    )
    for exc in (RuntimeError("a boot failed"), KeyboardInterrupt()):
        log.write_text("")
        with pytest.raises(type(exc)), targets.places(b)[0].hold() as target_for:
            with target_for(tmp_path / "run"):
                pass
            raise exc
        calls = log.read_text().split("\n")[:-1]
        assert calls[0] == "acquire " and calls[-1] == "release " and calls.count("acquire ") == 1


def test_a_cancelled_wait_for_a_busy_place_gives_up_at_once(tmp_path):
    client = fake_client(
        tmp_path, 'echo "labgrid-client: Error: Place p1 is already acquired by lab/alice. ..."\nexit 1\n'
    )
    b = load_board(
        str(
            write_board(
                tmp_path,
                f'[labgrid]\nplace = "p1"\ncoordinator = "127.0.0.1:1"\nclient = "{client}"\nacquire_timeout = 60\n',
            )
        )
    )
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt), targets.places(b)[0].hold(cancel):
        pass
    assert time.monotonic() - t0 < 10


# --- place as a factor --------------------------------------------------------------------------


def place_record(offset: float, n: int = 8) -> records.BootTiming:
    """Two places, n rounds each, alternating; the same jitter pattern on both places
    (an A/A case when offset is 0), plus offset seconds on p2."""
    jitter = [0.00, 0.03, -0.02, 0.05, -0.04, 0.01, 0.02, -0.01, 0.04, -0.03]
    rplaces = ["p1" if r % 2 == 0 else "p2" for r in range(2 * n)]
    values, pl = [], []
    for r, p in enumerate(rplaces):
        values.append(3.0 + jitter[(r // 2) % len(jitter)] + (offset if p == "p2" else 0.0))
        pl.append(p)

    def ms(vs):
        return {
            "login": {
                "label": "login prompt",
                "host": stats.summarize(vs),
                "printk": None,
                "values": vs,
                "rounds": list(range(1, 2 * n + 1)),
                "places": pl,
            }
        }

    kt = {
        "runs": 2 * n,
        "ok": 2 * n,
        "failed": 0,
        "reference": "kernel_load",
        "kernelrelease": None,
        "build_key": None,
        "hidden_at_zero_s": None,
        "printk_lag_ms": None,
        "failures": [],
        "run_ids": [f"r{i}" for i in range(2 * n)],
    }
    return rf_boot_timing(
        kernels={"5.10": {**kt, "milestones": ms(values)}, "6.12": {**kt, "milestones": ms([v + 1 for v in values])}},
        places=["p1", "p2"],
        round_places=rplaces,
    )


def test_identical_places_claim_nothing():
    sec = placereport.section(place_record(0.0), ["5.10", "6.12"], load_rules({}))
    assert sec is not None and sec["places"] == ["p1", "p2"] and sec["rounds"] == {"p1": 8, "p2": 8}
    assert sec["tests"] == 2 and len(sec["rows"]) == 2  # per kernel, the headline milestone login
    for r in sec["rows"]:
        assert r["p"] is not None and r["q"] >= 0.05 and r["significant"] is False
        assert r["verdict"] == "no difference shown" and r["shift_ci95"][0] <= 0 <= r["shift_ci95"][1]
    assert sec["claims"] == []


def test_a_real_place_offset_is_found_with_its_size():
    sec = placereport.section(place_record(0.3), ["5.10", "6.12"], load_rules({}))
    assert sec is not None and len(sec["claims"]) == 2
    for r in sec["rows"]:
        assert r["significant"] is True and r["q"] < 0.05 and r["verdict"] == "differs"
        assert abs(r["shift"] - 0.3) < 0.05  # the offset, as a Hodges-Lehmann shift
        assert r["shift_ci95"][0] > 0  # the interval excludes 0
        assert (r["place"], r["base"], r["n_place"], r["n_base"]) == ("p2", "p1", 8, 8)
    assert sec["claims"][0].startswith('5.10, boot to "login:" prompt: p2 +10.0 % against p1 (95 % CI +')


def test_no_places_section_for_a_study_on_one_place():
    rec = place_record(0.0).model_copy(update={"places": ["p1"]})
    assert placereport.section(rec, ["5.10"], load_rules({})) is None
    assert placereport.section(None, ["5.10"], load_rules({})) is None


def test_ctrl_c_stops_every_place_and_releases_them(two_places, monkeypatch, ctrl_c_handled):
    """Ctrl-C reaches the main thread only: the workers' boots under way end as
    interrupted (cancel), nobody takes a new round, every place is released."""
    import _thread

    board, log, offset, overlap, run = two_places
    seen_cancel: list[bool] = []
    both_booting = threading.Barrier(3)  # the two workers' first boots and the Ctrl-C thread

    def slow_boot(board, kid, rec_b, recdir, initrd, run_dir, target, rules, options):
        run_index, cancel = options.run_index, options.cancel
        assert cancel is not None  # several places: each boot can be stopped
        log.append(("boot", target.name, run_index, kid))
        both_booting.wait(20)
        if not cancel.wait(30):
            raise AssertionError("never cancelled")
        seen_cancel.append(True)
        raise KeyboardInterrupt

    monkeypatch.setattr(boottiming, "boot_once", slow_boot)

    def ctrl_c():  # once both places are booting, however slow the machine is today
        both_booting.wait(20)
        time.sleep(0.2)
        _thread.interrupt_main()

    threading.Thread(target=ctrl_c, daemon=True).start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run([FakePlace("p1", log), FakePlace("p2", log)], runs=10)
    assert time.monotonic() - t0 < 20
    assert seen_cancel == [True, True]  # both boots under way were stopped
    assert ("release", "p1") in log and ("release", "p2") in log
    assert len([e for e in log if e[0] == "boot"]) == 2  # no round was started after Ctrl-C


def test_a_place_that_ran_no_round_of_a_kernel_is_shown_untested():
    rec = place_record(0.0, n=2)
    login = rec.kernels["5.10"].milestones["login"]
    login = login.model_copy(update={"places": ["p1"] * len(login.values)})  # every value on p1
    k = rec.kernels["5.10"].model_copy(update={"milestones": {"login": login}})
    rec = rec.model_copy(update={"kernels": {"5.10": k}})
    sec = placereport.section(rec, ["5.10"], load_rules({}))
    (row,) = sec["rows"]
    assert row["n_place"] == 0 and row["median_place"] is None and row["p"] is None
    assert row["verdict"].startswith("not tested") and sec["tests"] == 0 and sec["claims"] == []
