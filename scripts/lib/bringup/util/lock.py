"""One build of a thing at a time, across processes and checkouts.

Builds share the cache (~/.cache/bringup): two checkouts, or CI beside a user,
building the same board's kernel would empty and fill the same build directory
at once.  `exclusive()` holds an flock on a lock file next to what it guards;
a second process waits and says so, and the lock goes with the process (a
killed build leaves nothing to clean up).

`board()` is the same for a board's measuring steps (boot timing, footprint,
workloads): one at a time, since a second run's boots load the host the first
one measures on (docs/records.md, "One measurement per board at a time").  The
lock file says who holds it: `pid N, study, since T`; while a holder that holds
the board for several steps (the study, the A/A check) is in one of them, the
step is said too (`pid N, study: footprint, since T`, `doing()`), so a second
run that waits reads where the first one is."""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from bringup.errors import BringupError


@contextmanager
def exclusive(lock_file: Path, what: str, say: Callable[[str], None] = print) -> Iterator[None]:
    """Hold lock_file's exclusive lock for the block; wait (saying so) while another holds it."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "another process"
            say(f"  waiting for {holder}, which is building {what} ({lock_file})")
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


NO_WAIT_ENV = "BRINGUP_NO_WAIT"  # set by --no-wait (make NO_WAIT=1): refuse instead of waiting for a board


@dataclass
class _Held:
    """A board lock this process holds: its open file, what took it and since when, and the
    steps it is in now (outermost first: a study's own step names, as its time line says them;
    a step that takes the board again inside one adds nothing to the words)."""

    fd: int
    what: str
    since: str
    steps: list[str] = field(default_factory=list)

    def line(self) -> str:
        now = next((s for s in self.steps if s != self.what), None)
        return f"pid {os.getpid()}, {self.what}{': ' + now if now else ''}, since {self.since}\n"

    def write(self) -> None:
        """The holder's line, in place: the new line is written over the old one, then the rest
        is cut, so the file never reads empty and its first line is the holder's (_holder_of)."""
        data = self.line().encode()
        os.pwrite(self.fd, data, 0)
        os.ftruncate(self.fd, len(data))


_HELD: dict[str, _Held] = {}  # the board locks this process holds, by lock file


@contextmanager
def doing(board_dir: Path, step: str) -> Iterator[None]:
    """While the block runs, the board's lock file (held by this process) says the holder is in
    `step`; afterwards what it said before.  Nothing when this process does not hold the board."""
    held = _HELD.get(os.path.abspath(Path(board_dir) / ".lock"))
    if held is None:
        yield
        return
    held.steps.append(step)
    with contextlib.suppress(OSError):  # the lock holds all the same: only its words would be stale
        held.write()
    try:
        yield
    finally:
        held.steps.pop()
        with contextlib.suppress(OSError):
            held.write()


class BoardBusy(BringupError):
    """Another run measures the board and --no-wait was given."""

    exit_code = 75  # EX_TEMPFAIL: try again later


POLL = 0.5  # seconds between a waiting run's looks at the lock (and at the step its holder is in)


def _holder_of(fd: int) -> str:
    """The first line of an open lock file: its holder, as the holder last wrote it."""
    return os.pread(fd, 400, 0).decode(errors="replace").partition("\n")[0].strip()[:200]


def _wait(fd: int, who: str, say: Callable[[str], None]) -> None:
    """Take the lock once its holder lets go; meanwhile, each time the holder's line changes (a
    study going on to its next step), say it."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            time.sleep(POLL)
        now = _holder_of(fd)
        if now and now != who:
            say(f"  still waiting for {now}")
            who = now


def holder(lock_file: Path) -> str:
    """What the lock file says about its holder ("pid 123, footprint, since ..."), or ""."""
    try:
        return lock_file.read_text(errors="replace").strip().splitlines()[0][:200]
    except (OSError, IndexError):
        return ""


@contextmanager
def board(board_dir: Path, step: str, say: Callable[[str], None] = print, wait: bool | None = None) -> Iterator[None]:
    """One measurement of a board at a time: hold logs/<board>/.lock for the whole step.
    A second run waits, saying who holds it (pid, step, since when), or with wait False
    (--no-wait, BRINGUP_NO_WAIT=1) refuses in one line.  The lock goes with the process.
    A read-only or unwritable logs/<board> is found here, before any boot."""
    if wait is None:
        wait = os.environ.get(NO_WAIT_ENV, "").strip().lower() not in ("1", "yes", "true", "on")
    lock_file = Path(board_dir) / ".lock"
    key = os.path.abspath(lock_file)
    if key in _HELD:  # this process holds it already (a study's step, a command around its step)
        with doing(board_dir, step):
            yield
        return
    try:
        Path(board_dir).mkdir(parents=True, exist_ok=True)
        if not os.access(board_dir, os.W_OK | os.X_OK):  # records could not be written after the boots
            raise PermissionError(13, "Permission denied")
        fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:
        raise BringupError(f"{step}: {board_dir}: cannot write there: {e.strerror} (nothing measured)") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            who = _holder_of(fd) or "another process"
            if not wait:
                raise BoardBusy(
                    f"{step}: board {Path(board_dir).name} is being measured by {who} ({lock_file}); "
                    "not waiting (--no-wait)"
                ) from None
            say(f"  waiting for {who}, which measures board {Path(board_dir).name} ({lock_file})")
            _wait(fd, who, say)
        held = _Held(fd, step, dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))
        try:
            held.write()
            os.fsync(fd)
        except OSError as e:
            raise BringupError(f"{step}: {lock_file}: cannot write: {e.strerror}") from None
        _HELD[key] = held
        try:
            yield
        finally:
            del _HELD[key]
    finally:
        os.close(fd)  # releases the lock
