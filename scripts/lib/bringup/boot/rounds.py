"""The order of boots in a round.  Each round boots every kernel once; the
order changes from round to round as the rows of a Williams square, so that
over a full cycle every kernel runs in every position equally often and every
kernel follows every other equally often (A B, B A for two kernels).  Whatever
the first boot of a round warms up (host page cache, QEMU's own pages) then
favours no kernel, and position can be checked as a factor.

Several places (identical boards of a labgrid lab) share a study by rounds: a
place always runs a whole round, so the kernels compared in a round ran on the
same board one after the other and the paired comparison by round stays clean
of any difference between boards.  Dealer hands the rounds out; each place walks
through the Williams rows from its own offset (place_order), so every place runs
every order equally often and, at one time, the places run different orders.

The round engine, run(), is the one loop over rounds of every measurement (boot
timing, the footprint with lmbench, the workloads): it deals rounds in these
orders to its workers, runs each kernel's boot through the measurement's own
callable, judges it with the host-load guard (util/hostload.py) and does a
disturbed run again, stops when the rule says so (stats.UntilCI: the rounds asked,
or --until-ci over the measurement's headline values), shows the progress
(util/progress.py) and handles errors and Ctrl-C.  Its workers are the places of a
labgrid lab (one worker per place, in parallel) or, for a board that is not a
labgrid board (QEMU, a bench board), `jobs` local workers, each holding the board
on its own and getting a fresh target per boot (QEMU instances are independent).
A measurement passes in only what differs: a callable that does one kernel's boot
of a round into its run directory and returns its result, and how the results so
far become headline values."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from bringup import stats
from bringup.boot.target import Place, TargetFactory
from bringup.errors import BringupError
from bringup.util import hostload
from bringup.util.progress import Progress

T = TypeVar("T")
MAX_REDO = hostload.MAX_REDO  # a run on a disturbed host is done again at most this many times


@dataclass(frozen=True)
class Work:
    """What one run of a measurement is, in the engine's words: its plural (the progress
    bar's unit) and what doing it again is called."""

    plural: str = "boots"
    doing: str = "booting"


BOOTS = Work()
BUILDS = Work("builds", "building")


def williams(n: int) -> list[list[int]]:
    """Rows of a Williams design for n treatments (n rows for even n, 2n for odd n)."""
    if n <= 0:
        return []
    first, lo, hi = [0], 1, n - 1
    while len(first) < n:
        first.append(lo)
        lo += 1
        if len(first) < n:
            first.append(hi)
            hi -= 1
    rows = [[(x + i) % n for x in first] for i in range(n)]
    if n % 2:
        rows += [list(reversed(r)) for r in rows]
    return rows


def order(kernels: list[str], round_index: int) -> list[str]:
    """The kernels in the order of round `round_index` (0-based)."""
    rows = williams(len(kernels))
    return [kernels[i] for i in rows[round_index % len(rows)]] if rows else []


def cycle(n: int) -> int:
    """Rounds in one balanced cycle."""
    return len(williams(n))


def rule(runs: int, until_ci: float | None, max_rounds: int) -> stats.UntilCI:
    """How many rounds a measurement runs (stats.UntilCI: `runs`, or with until_ci more
    until every headline interval is that narrow, at most max_rounds); a request that
    cannot work is refused here, before any boot."""
    if until_ci is not None and not (0 < until_ci <= 100):
        raise BringupError(f"--until-ci {until_ci}: give a width in % above 0 and at most 100")
    r = stats.UntilCI(runs, until_ci, max_rounds, "--max-rounds")
    if until_ci is not None and max_rounds < r.first_check:
        raise BringupError(
            f"--max-rounds {max_rounds} is below the {r.first_check} rounds --until-ci runs before it judges "
            f"the intervals (at least {stats.UNTIL_CI_MIN_ROUNDS}, and at least the rounds asked)"
        )
    return r


def place_order(kernels: list[str], place_index: int, place_round: int) -> list[str]:
    """The kernels in the order of the `place_round`-th round (0-based) a place runs,
    for the place_index-th place of a study: the Williams rows from the place's own
    offset.  One place (index 0) runs the rows in order, as order() does."""
    return order(kernels, place_round + place_index)


class Dealer:
    """Hands out the rounds of one study to the workers of its places (one worker per
    place, in parallel; thread-safe).  take() gives a place its next round: the round
    number (1, 2, ... in the order rounds are taken) and the kernel order; None once no
    more rounds are to run: `runs` rounds were taken, or rule.done() said stop after a
    finished round (--until-ci: rounds under way on other places are finished and
    count), or stop() was called (an error on a place, Ctrl-C)."""

    def __init__(self, rule: stats.UntilCI, kernels: list[str], places: Sequence[str | None]):
        self.rule, self.kernels, self.places = rule, kernels, list(places)
        self.order: dict[int, list[str]] = {}  # round -> kernel order
        self.place_of: dict[int, str | None] = {}  # round -> the place that ran it
        self.finished_rounds: list[int] = []
        self.stopped_at: int | None = None  # rounds finished when rule.done() said stop
        self._next = 1
        self._per_place = [0] * len(self.places)
        self._halt = False
        self._lock = threading.Lock()

    def take(self, place_index: int) -> tuple[int, list[str]] | None:
        with self._lock:
            if self._halt or self.stopped_at is not None or self._next > self.rule.limit:
                return None
            rnd = self._next
            self._next += 1
            ks = place_order(self.kernels, place_index, self._per_place[place_index])
            self._per_place[place_index] += 1
            self.order[rnd] = ks
            self.place_of[rnd] = self.places[place_index]
            return rnd, ks

    def finished(self, rnd: int, headline: stats.Headline) -> bool:
        """Round `rnd` is done (headline: the values of every finished boot so far):
        True when the rounds may stop (rule.done over the rounds finished)."""
        with self._lock:
            self.finished_rounds.append(rnd)
            if self.stopped_at is not None:
                return True
            if self.rule.done(len(self.finished_rounds), headline, self.kernels):
                self.stopped_at = len(self.finished_rounds)
                return True
            return False

    def stop(self) -> None:
        with self._lock:
            self._halt = True

    def rounds(self) -> list[int]:
        """The rounds taken, in order."""
        return sorted(self.order)


# --- the round engine ---------------------------------------------------------------------


def check(places: Sequence[Place], jobs: int, guard: bool) -> None:
    """Refuse what the engine cannot do, before any work, in one line naming the option:
    jobs below 1; local workers (jobs > 1) on a labgrid board, whose rounds already
    run on its places in parallel; and jobs > 1 with the host-load guard, which judges
    one run at a time (parallel runs would disturb each other, so every run would be
    done again).  Callers that take the guard from BRINGUP_HOST_GUARD turn it off for
    jobs > 1 unless it was asked for (cli/)."""
    if jobs < 1:
        raise BringupError(f"--jobs {jobs}: give 1 or more")
    if jobs > 1 and (len(places) > 1 or any(p.name is not None for p in places)):
        raise BringupError(
            f"--jobs {jobs}: the board is a labgrid board; its rounds run on its places in parallel, one "
            "worker per place (PLACES=a,b): leave --jobs out"
        )
    if jobs > 1 and guard:
        raise BringupError(
            f"--jobs {jobs}: the host-load guard judges one run at a time, and parallel runs disturb each "
            "other: give BRINGUP_HOST_GUARD=0 or leave --jobs out"
        )


@dataclass(frozen=True)
class Run:
    """One attempt at one kernel's boot of a round, as the engine hands it to the
    measurement's callable."""

    kernel: str
    round: int  # 1-based, in the order rounds were dealt
    attempt: int  # 0; 1 .. MAX_REDO when the run is done again on a disturbed host
    target_for: TargetFactory  # a fresh target for this boot, on this worker's place
    place: str | None  # the labgrid place's name; None on a board that is not a place
    worker: int  # 0-based
    cancel: threading.Event | None  # set when another worker failed or on Ctrl-C (several workers)
    say: Callable[[str], object]  # a line that does not break the progress bar

    @property
    def suffix(self) -> str:
        """The end of the run directory's name: -rNN, and -redoN for a run done again."""
        return f"-r{self.round:02d}" + (f"-redo{self.attempt}" if self.attempt else "")


@dataclass
class Done(Generic[T]):
    """One attempt, done: its Run, the measurement's result and the guard's verdict."""

    run: Run
    result: T
    host: dict[str, object] | None  # hostload.judge(); None without the guard
    redone: bool  # done again because the host was disturbed: not in the statistics

    @property
    def kernel(self) -> str:
        return self.run.kernel

    @property
    def round(self) -> int:
        return self.run.round

    @property
    def attempt(self) -> int:
        return self.run.attempt

    @property
    def place(self) -> str | None:
        return self.run.place


@dataclass
class Outcome(Generic[T]):
    """What run() did: every attempt in round order (the kernels of a round in their
    boot order, a run's redone attempts before the one kept), each round's kernel order
    and place, and why the rounds stopped."""

    runs: list[Done[T]]
    order: dict[int, list[str]]  # round -> kernel order
    place_of: dict[int, str | None]  # round -> the labgrid place that ran it
    stopped: str
    workers: int = 1

    def rounds(self) -> list[int]:
        return sorted(self.order)

    def kept(self, kernel: str | None = None) -> list[Done[T]]:
        """The attempts that count (not redone), of one kernel or of all."""
        return [d for d in self.runs if not d.redone and (kernel is None or d.kernel == kernel)]

    def redone(self, kernel: str) -> int:
        return sum(1 for d in self.runs if d.redone and d.kernel == kernel)


def run(
    kernels: list[str],
    rule: stats.UntilCI,
    boot: Callable[[Run], T],
    *,
    places: Sequence[Place],
    jobs: int = 1,
    guard: bool = False,
    headline: Callable[[list[Done[T]]], stats.Headline] | None = None,
    redo_if: Callable[[T], bool] | None = None,
    on_done: Callable[[Done[T]], None] | None = None,
    label: str = "  rounds",
    work: Work = BOOTS,
    say: Callable[[str], object] = print,
) -> Outcome[T]:
    """Rounds until `rule` says stop; each boots every kernel once in the orders above.

    boot(run): one kernel's boot of a round into its own run directory (named with
    run.suffix), on a target of run.target_for; its result.  A BringupError or any
    other exception stops every worker and is raised once every place is released.
    places: where the boots go (targets.places()); several labgrid places get one
    worker each; a board that is not a place gets `jobs` workers (check() refuses what
    cannot work).  guard: judge every run with the host-load guard and do a disturbed
    run again, at most MAX_REDO times, when redo_if(result) allows it (boot timing:
    only a good boot); every attempt is kept in the outcome, the redone ones marked.
    headline(kept runs so far): the values --until-ci judges (stats.UntilCI); only
    called with --until-ci.  on_done(done): called after every attempt, under the
    engine's lock (a record written, a line said).  Progress: `label`, in work.plural (boots,
    or builds), against the rounds planned; say: lines (above the progress bar)."""
    check(places, jobs, guard)
    return _Engine(kernels, rule, boot, places, jobs, guard, headline, redo_if, on_done, label, work, say).run()


class _Engine(Generic[T]):
    """The state of one run() (see there)."""

    def __init__(self, kernels, rule, boot, places, jobs, guard, headline, redo_if, on_done, label, work, say) -> None:
        self.kernels, self.rule, self.boot = list(kernels), rule, boot
        self.places: list[Place] = list(places) if len(places) > 1 else [places[0]] * jobs
        self.lab = any(p.name is not None for p in self.places) and len(self.places) > 1
        self.headline, self.redo_if, self.on_done, self.say = headline, redo_if, on_done, say
        self.baseline = hostload.baseline() if guard else None
        self.runs: list[Done[T]] = []
        self.dealer = Dealer(rule, self.kernels, [p.name for p in self.places])
        self.cancel = threading.Event() if len(self.places) > 1 else None
        self.lock = threading.RLock()  # runs, on_done, the progress and its lines
        # local workers take boots, not whole rounds: the kernels of one round boot at once (a round
        # pairs boots of one board; local workers are one board, so nothing is lost by splitting it)
        self.by_boot = len(self.places) > 1 and not self.lab
        self.pending: list[tuple[int, str]] = []
        self.unfinished: dict[int, int] = {}  # round -> its boots not yet done
        self.qlock = threading.Lock()
        self.prog = Progress(label, total=rule.limit * len(self.kernels), unit=work.plural, say=say)
        self.what = work

    def tell(self, msg: str) -> None:
        with self.lock:
            self.prog.say(msg)

    def run(self) -> Outcome[T]:
        if len(self.places) > 1 and not self.lab:
            self.say(f"  {len(self.places)} local workers: up to {len(self.places)} {self.what.plural} at once")
        try:
            if len(self.places) == 1:  # in this thread: Ctrl-C lands here, the place is released on the way out
                self.work(0, self.places[0])
            else:
                self.parallel()
        finally:
            self.prog.close()
        d = self.dealer
        more = len(d.finished_rounds) - (d.stopped_at or len(d.finished_rounds))
        if self.rule.pct is not None and more > 0:
            self.rule.stopped += (
                f" ({more} more round{'s' if more != 1 else ''} under way on other workers finished and counted)"
            )
        if self.rule.pct is not None:
            self.say(f"  stopped: {self.rule.stopped}")
        pos = {(r, k): i for r, ks in d.order.items() for i, k in enumerate(ks)}
        self.runs.sort(key=lambda x: (x.round, pos.get((x.round, x.kernel), 0), x.attempt))
        return Outcome(self.runs, dict(d.order), dict(d.place_of), self.rule.stopped, len(self.places))

    def work(self, index: int, place: Place) -> None:
        """One worker: hold its place, run whole rounds while the dealer gives them (local
        workers: single boots of the rounds, in order, while there are any)."""
        with place.hold(self.cancel) as target_for:
            if self.by_boot:
                while (boot := self.next_boot()) is not None:
                    self.one(boot[1], boot[0], index, place, target_for)
                    if self.boot_done(boot[0]):
                        self.round_done(boot[0])
                return
            while (got := self.dealer.take(index)) is not None:
                rnd, kernel_order = got
                for kernel_id in kernel_order:
                    self.one(kernel_id, rnd, index, place, target_for)
                self.round_done(rnd)

    def next_boot(self) -> tuple[int, str] | None:
        """The next boot for a local worker: the next kernel of the round under way, or the
        first of the next round the dealer gives (its Williams row); None when none is left."""
        with self.qlock:
            if not self.pending:
                got = self.dealer.take(0)
                if got is None:
                    return None
                rnd, kernel_order = got
                self.pending = [(rnd, k) for k in kernel_order]
                self.unfinished[rnd] = len(kernel_order)
            return self.pending.pop(0)

    def boot_done(self, rnd: int) -> bool:
        """A boot of round rnd ended: True when it was the round's last."""
        with self.qlock:
            self.unfinished[rnd] -= 1
            return self.unfinished[rnd] == 0

    def round_done(self, rnd: int) -> None:
        """Round rnd is done: judge whether more rounds are needed (--until-ci)."""
        head: stats.Headline = {}
        if self.rule.pct is not None and self.headline is not None:
            with self.lock:
                head = self.headline([x for x in self.runs if not x.redone])
        stop = self.dealer.finished(rnd, head)
        left = self.rule.left  # what this check left wide
        if not stop and left:
            n = len(self.dealer.finished_rounds)
            self.tell(f"  after round {n}: {len(left)} interval(s) not yet narrow: {left[0]}")

    def one(self, kernel_id: str, rnd: int, index: int, place: Place, target_for: TargetFactory) -> None:
        """One kernel's boot of round rnd, and its redos on a disturbed host."""
        on = f" on {place.name}" if self.lab and place.name else ""
        for attempt in range(1 + MAX_REDO):
            r = Run(kernel_id, rnd, attempt, target_for, place.name, index, self.cancel, self.tell)
            before = hostload.snapshot() if self.baseline is not None else None
            result = self.boot(r)
            host = hostload.judge(before, hostload.snapshot(), self.baseline) if before is not None else None
            why = host.get("disturbed") if host else None
            again = bool(why) and attempt < MAX_REDO and (self.redo_if is None or self.redo_if(result))
            done = Done(r, result, host, again)
            with self.lock:
                self.runs.append(done)
                if self.on_done is not None:
                    self.on_done(done)
            if not again:
                break
            self.tell(f"  round {rnd} {kernel_id}{on}: host disturbed ({why}): {self.what.doing} it again")
        with self.lock:
            self.prog.advance(note=f"round {rnd} {kernel_id}")

    def parallel(self) -> None:
        """One worker thread per place.  The first error on a worker stops the others (their
        boots under way end as interrupted, nobody takes a new round) and is raised once
        every place is released; Ctrl-C (which only the main thread sees) does the same."""
        assert self.cancel is not None
        cancel = self.cancel
        errors: list[BaseException] = []
        # each worker says it has ended (its place released) with its own event: the main
        # thread waits on those, never in Thread.join, because Python 3.11's join() hit by
        # Ctrl-C marks the thread it waited for as stopped while it still runs (gh-90882),
        # and the step would then end before that place is released
        ended = [threading.Event() for _ in self.places]

        def work(i: int, place: Place) -> None:
            try:
                self.work(i, place)
            except BaseException as e:  # noqa: BLE001 -- handed to the main thread, raised there
                errors.append(e)
                self.dealer.stop()
                cancel.set()
            finally:
                ended[i].set()

        threads = [
            threading.Thread(target=work, args=(i, p), name=f"worker-{i + 1}-{p.name or 'local'}", daemon=True)
            for i, p in enumerate(self.places)
        ]
        for t in threads:
            t.start()
        interrupted = False
        while not all(e.is_set() for e in ended):
            try:
                for e in ended:
                    e.wait(0.2)
            except KeyboardInterrupt:
                if not interrupted:
                    self.say(f"  interrupted: stopping the {self.what.plural} under way, then releasing the places")
                interrupted = True
                self.dealer.stop()
                cancel.set()
        if interrupted:
            raise KeyboardInterrupt
        real = [e for e in errors if not isinstance(e, KeyboardInterrupt)]
        if real:
            raise real[0]
        if errors:
            raise errors[0]


class Plain:
    """A caller's target factory as the one place of a run (no labgrid place to hold)."""

    name: str | None = None

    def __init__(self, target_for: TargetFactory):
        self.target_for = target_for

    @contextlib.contextmanager
    def hold(self, cancel: threading.Event | None = None) -> Iterator[TargetFactory]:
        yield self.target_for
