"""A labgrid place as a kind of target (model/targetkind.py): the board file's
[labgrid] table (LabgridSpec), its places (LabPlace), and the place as a Target:
the board lives in a shared lab, and labgrid's coordinator says where its
console, power and TFTP directory are.

labgrid only tells where things are and switches power: bringup keeps its own
console reader (per-line host timestamps, boot/console.py) on the place's
NetworkSerialPort (raw TCP as socket://, RFC 2217 as rfc2217://), and its own
U-Boot dialogue.  labgrid's client runs as a command (`labgrid-client`, from
its own venv .venv-labgrid made by `make deps`): labgrid pins a fork of
pyserial that replaces the `serial` module bringup's console uses, so the two
never share a venv (docs/labgrid.md).

A target on its own is one acquisition for one boot:

    with LabgridTarget(board) as t:   # acquire (waiting while someone else
                                      # holds the place, up to acquire_timeout)
        t.prepare(spec)      # resources read from the coordinator; power off
        Console(t.console_url)                 # the place's serial port, before power-on
        t.power_on()         # labgrid-client power on (the place's power driver); t0
    # __exit__: power off, release; also on errors and Ctrl-C

A step (a boot-timing run, a footprint run) holds the place for all its boots
instead (targets.Place.hold()): one target acquires it, and each boot's target
is made with held_by=that one, so it neither acquires nor releases, only
switches the power (a board the last boot switched off is not switched off
again):

    with LabgridTarget(board, place="a") as hold:           # acquire once
        for each boot:
            with LabgridTarget(board, place="a", held_by=hold) as t: ...   # show, on, off
    # release once, also on errors and Ctrl-C

While the boot runs, a watcher asks the coordinator every `watch_interval`
seconds whether the place's resources are still there: an exporter that went
away fails the run (alive()) instead of leaving it to time out.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, field_validator, model_validator

from bringup.boot.target import BootSpec, Staging, Target, TargetFactory
from bringup.errors import BringupError
from bringup.model.base import first_duplicate, located
from bringup.model.board import Board, BoardFile
from bringup.model.specs import command_path_problem
from bringup.model.targetkind import TargetSpec, register
from bringup.parse import labgrid as lgparse
from bringup.targets import bench
from bringup.util import net, paths

POWER_CLASSES = (
    "NetworkPowerPort",
    "PDUDaemonPort",
    "NetworkUSBPowerPort",
    "NetworkSiSPMPowerPort",
    "TasmotaPowerPort",
    "NetworkYKUSHPowerPort",
    "NetworkSysfsGPIO",
)
TFTP_CLASSES = ("RemoteTFTPProvider", "TFTPProvider")
SERIAL_CLASSES = ("NetworkSerialPort",)


def client_path(board: Board) -> str:
    """The labgrid-client to run: the board file's, .venv-labgrid's, or the one on PATH."""
    spec = LabgridSpec.of(board)
    if spec.client:
        return spec.client
    own = paths.ROOT / ".venv-labgrid" / "bin" / "labgrid-client"
    if own.exists():
        return str(own)
    found = shutil.which("labgrid-client")
    if found is None:
        raise BringupError(
            f"board {board.name}: no labgrid-client (run `make deps`, which installs labgrid into .venv-labgrid, "
            f"or set labgrid.client in {board.file.name})"
        )
    return found


def coordinator_address(board: Board) -> str:
    addr = LabgridSpec.of(board).coordinator or net.coordinator_from_env() or ""
    if not addr:
        raise BringupError(
            f"board {board.name}: no labgrid coordinator: set labgrid.coordinator in {board.file.name} "
            f"or LG_COORDINATOR=HOST:PORT"
        )
    return addr


class LabgridTarget(bench.BenchBoard):
    """A labgrid place: see the module's docstring."""

    def __init__(
        self,
        board: Board,
        say=print,
        poll: float = 1.0,
        *,
        place: str | None = None,
        held_by: LabgridTarget | None = None,
        shared: bool = False,
        cancel: threading.Event | None = None,
    ):
        """place: which of the board's places (default: its first); held_by: the target
        that holds the place for a whole step (this one then neither acquires nor
        releases); shared: one of several places of one study (boot files go under the
        place's name, so places sharing a TFTP directory do not overwrite each other's);
        cancel: set to give up waiting for the place (another place's worker failed, Ctrl-C)."""
        self.board, self.spec, self.say = board, LabgridSpec.of(board), say
        self.place_name = place or self.spec.names()[0]
        self.held_by, self.shared, self.cancel = held_by, shared, cancel
        self.off_at: float | None = None  # when this hold last switched the board off (None: not known off)
        self.coordinator = coordinator_address(board)
        self.client = client_path(board)
        self.watch_interval, self.poll = self.spec.watch_interval, poll
        self.console_url = ""
        self.baud = 115200
        self.t0: float | None = None
        self.place: lgparse.Place | None = None
        self.acquired = False
        self.wait_s = 0.0
        self._gone: str | None = None
        self._watcher: threading.Thread | None = None
        self._stop_watch = threading.Event()
        self._info: dict[str, Any] | None = None

    # -- labgrid-client ---------------------------------------------------------
    def _client(self, *args: str, timeout: float = 60.0) -> subprocess.CompletedProcess:
        """labgrid-client -x COORDINATOR -p PLACE args; in its own session, so that the
        user's Ctrl-C reaches bringup (which then releases the place) and not a release
        that is under way."""
        argv = [self.client, "-x", self.coordinator, "-p", self.place_name, *args]
        try:
            proc = subprocess.Popen(
                argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
            )
        except OSError as e:
            raise BringupError(f"labgrid-client {self.client}: cannot run: {e.strerror}") from None
        interrupted = False
        while True:
            try:
                out, _ = proc.communicate(timeout=timeout)
                break
            except KeyboardInterrupt:
                interrupted = True  # let the command finish (a release must not be cut short)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                raise BringupError(
                    f"labgrid place {self.place_name}: 'labgrid-client {' '.join(args)}' did not answer "
                    f"within {timeout:.0f}s (coordinator {self.coordinator})"
                ) from None
        if interrupted:
            raise KeyboardInterrupt
        return subprocess.CompletedProcess(argv, proc.returncode, out, "")

    def _error(self, what: str, out: str) -> BringupError:
        msg = lgparse.client_error(out)
        where = f"labgrid coordinator {self.coordinator}"
        if "Could not connect to coordinator" in out or "coordinator is unavailable" in out:
            return BringupError(
                f"{where} unreachable (labgrid.coordinator in {self.board.file.name}, or LG_COORDINATOR)"
            )
        if "matches nothing" in msg:
            return BringupError(f"labgrid place {self.place_name!r} unknown to {where} (labgrid-client places)")
        if "has no matching remote resource" in msg:
            return BringupError(
                f"labgrid place {self.place_name}: {msg.replace('Match', 'match', 1)} "
                f"(its exporter is not running, or does not export that resource)"
            )
        return BringupError(f"labgrid place {self.place_name}: {what} failed: {msg}")

    def show(self) -> lgparse.Place:
        p = self._client("show")
        if p.returncode != 0:
            raise self._error("show", p.stdout)
        try:
            return lgparse.place_show(p.stdout)
        except ValueError as e:
            raise BringupError(f"labgrid place {self.place_name}: cannot read 'labgrid-client show': {e}") from None

    # -- acquire / release --------------------------------------------------------
    def acquire(self) -> None:
        """Acquire the place; while someone else holds it, wait (up to acquire_timeout)."""
        start = time.monotonic()
        told = 0.0
        while True:
            if self.cancel is not None and self.cancel.is_set():
                raise KeyboardInterrupt  # the step is being stopped: stop waiting
            p = self._client("acquire")
            if p.returncode == 0:
                self.acquired = True
                self.wait_s = time.monotonic() - start
                return
            msg = lgparse.client_error(p.stdout)
            holder = _holder(msg)
            if holder is None:
                raise self._error("acquire", p.stdout)
            waited = time.monotonic() - start
            if waited >= self.spec.acquire_timeout:
                raise BringupError(
                    f"labgrid place {self.place_name}: acquired by {holder}; gave up after "
                    f"{waited:.0f}s (labgrid.acquire_timeout = {self.spec.acquire_timeout:g})"
                )
            if told == 0.0 or time.monotonic() - told > 60:
                self.say(
                    f"  labgrid place {self.place_name} is acquired by {holder}: waiting "
                    f"(up to {self.spec.acquire_timeout - waited:.0f}s more)"
                )
                told = time.monotonic()
            pause = min(self.poll, max(0.0, self.spec.acquire_timeout - waited))
            if self.cancel is not None:
                self.cancel.wait(pause)
            else:
                time.sleep(pause)

    def release(self) -> None:
        if not self.acquired:
            return
        p = self._client("release")
        self.acquired = False
        if p.returncode != 0:
            self.say(f"warning: labgrid place {self.place_name}: release failed: {lgparse.client_error(p.stdout)}")

    # -- where things are ---------------------------------------------------------
    @property
    def _holder(self) -> LabgridTarget:
        """The target that holds the place: held_by, or this one."""
        return self.held_by if self.held_by is not None else self

    def _resources(self) -> lgparse.Place:
        if self.place is None and self.held_by is not None:
            self.place = self.held_by._resources()  # read once per hold: where files go does not move
        if self.place is None:
            place = self.show()
            if not place.resources:  # no exporter serves any of its matches
                raise BringupError(
                    f"labgrid place {self.place_name}: match {', '.join(place.matches) or '(none)'} has no "
                    f"matching remote resource (its exporter is not running, or does not export that resource)"
                )
            self.place = place
        return self.place

    def _tftp_provider(self) -> lgparse.Resource | None:
        found = self._resources().of_class(*TFTP_CLASSES)
        return found[0] if found else None

    def staging(self, kernel_id: str) -> Staging:
        prefix = bench.prefix(self.board, kernel_id, self.place_name if self.shared else None)
        prov = self._tftp_provider()
        if prov is not None:
            host = str(prov.params.get("host", "localhost"))
            if not _is_local(host):
                raise BringupError(
                    f"labgrid place {self.place_name}: its TFTP provider {prov.path} is on {host}; bringup copies "
                    f"boot files only to a provider on this host (or set [tftp] dir to a directory {host} serves)"
                )
            internal = Path(str(prov.params.get("internal", "")))
            external = str(prov.params.get("external", "")).strip("/")
            return Staging(internal / prefix, f"{external}/{prefix}" if external else prefix)
        t = self.board.tftp
        if t is None or not t.dir:
            raise BringupError(
                f"labgrid place {self.place_name}: no TFTP provider on the place and no [tftp] dir in "
                f"{self.board.file.name}: nowhere to put the boot files"
            )
        return bench.tftp_staging(t.dir, prefix)

    # -- the boot -------------------------------------------------------------------
    def prepare(self, boot: BootSpec) -> None:
        """Read the acquired place's resources (console, power), switch the board off."""
        self.t0 = None
        self.place = self.show()
        serial = self.place.of_class(*SERIAL_CLASSES)
        if not serial:
            raise BringupError(
                f"labgrid place {self.place_name}: no NetworkSerialPort among its resources "
                f"({', '.join(r.cls for r in self.place.resources) or 'none'})"
            )
        sp = serial[0]
        proto = str(sp.params.get("protocol", "rfc2217"))
        scheme = {"raw": "socket", "rfc2217": "rfc2217"}.get(proto)
        if scheme is None:
            raise BringupError(f"labgrid place {self.place_name}: {sp.path}: serial protocol {proto!r} not supported")
        self.console_url = f"{scheme}://{sp.params.get('host')}:{sp.params.get('port')}"
        self.baud = int(sp.params.get("speed", 115200))
        power = self.place.of_class(*POWER_CLASSES)
        if not power:
            raise BringupError(
                f"labgrid place {self.place_name}: no power resource ({', '.join(POWER_CLASSES)}) among its resources"
            )
        prov = self._tftp_provider()
        self._info = {
            "place": self.place_name,
            "coordinator": self.coordinator,
            "exporter": sp.exporter,
            "acquired_by": self.place.acquired,
            "wait_s": round(self.wait_s, 3),
            "resources": [{"cls": r.cls, "path": r.path, "params": r.params} for r in self.place.resources],
            "power": f"labgrid-client power ({power[0].cls} {power[0].path})",
            "tftp": f"{prov.cls} {prov.path}"
            if prov
            else (f"[tftp] dir {self.board.tftp.dir}" if self.board.tftp else None),
        }
        hold = self._holder
        if hold.off_at is None:  # not known to be off: switch it off
            self._power("off")
            hold.off_at = time.monotonic()
        time.sleep(max(0.0, self.spec.power_settle - (time.monotonic() - hold.off_at)))
        self._start_watch()

    def _power(self, action: str) -> None:
        p = self._client("power", action)
        if p.returncode != 0:
            raise self._error(f"power {action}", p.stdout)

    def power_on(self) -> None:
        self._holder.off_at = None
        self._power("on")
        self.t0 = time.monotonic()

    def power_off(self) -> None:
        try:
            self._power("off")
            self._holder.off_at = time.monotonic()
        except BringupError as e:
            self._holder.off_at = None
            self.say(f"warning: {e}")

    def alive(self) -> str | None:
        return self._gone

    def describe(self) -> dict[str, Any]:
        return {"t0": "power-on", "console": self.console_url or None, "qemu_argv": None, "labgrid": self._info}

    # -- the exporter watch ------------------------------------------------------------
    def _start_watch(self) -> None:
        if self.watch_interval <= 0 or self._watcher is not None:
            return
        used = {r.path for r in self.place.resources} if self.place else set()
        self._watcher = threading.Thread(target=self._watch, args=(used,), daemon=True)
        self._watcher.start()

    def _watch(self, used: set[str]) -> None:
        while not self._stop_watch.wait(self.watch_interval):
            try:
                now = self.show()
            except BringupError as e:
                self._gone = str(e)
                return
            have = {r.path for r in now.resources if r.avail}
            lost = sorted(used - have)
            if lost:
                exporters = sorted({p.split("/", 1)[0] for p in lost})
                self._gone = (
                    f"labgrid exporter {', '.join(exporters)} gone: place {self.place_name} lost {', '.join(lost)}"
                )
                return

    # -- lifecycle ---------------------------------------------------------------------
    def __enter__(self) -> LabgridTarget:
        if self.held_by is not None:
            if not self.held_by.acquired:
                raise BringupError(f"labgrid place {self.place_name}: not held (its hold was released)")
            self.wait_s = self.held_by.wait_s
            return self
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop_watch.set()
        if self.held_by is not None:  # the hold releases the place at the end of the step
            if self.held_by.off_at is None:  # switched on by this boot, or not known off
                self.power_off()
            return
        try:
            if self.acquired and self.off_at is None:
                self.power_off()
        finally:
            # the release must happen, even when the user presses Ctrl-C again now
            with _sigint_deferred():
                self.release()


PlaceName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_.+][A-Za-z0-9_.+-]*$", max_length=200)]


@register
class LabgridSpec(TargetSpec):
    # [labgrid]: the board is a labgrid place (or several identical ones).

    table = "labgrid"
    table_doc = "the board is a labgrid place: console, power and TFTP come from it (docs/labgrid.md)"
    rank = 30
    lab = True
    alone = "a labgrid place brings its own console and power"

    place: Annotated[
        str,
        Field(
            pattern=r"^([A-Za-z0-9_.+][A-Za-z0-9_.+-]*)?$",
            max_length=200,
            description="the labgrid place the board is (or give `places`; no leading '-': labgrid-client would "
            "read an option)",
        ),
    ] = ""
    places: Annotated[
        list[PlaceName],
        Field(
            max_length=64,
            description="several identical places: the boot rounds of a study are spread over them in "
            "parallel, one worker per place (docs/labgrid.md, 'Several places'); PLACES=a,b overrides",
        ),
    ] = []
    coordinator: Annotated[
        str,
        Field(
            pattern=r"^([A-Za-z0-9_.-]+|\[[0-9A-Fa-f:]+\]):\d+$|^$",
            max_length=300,
            description="the coordinator's HOST:PORT (labgrid 25+, gRPC); empty: $LG_COORDINATOR",
        ),
    ] = ""
    acquire_timeout: Annotated[
        float, Field(ge=0, le=86400, description="seconds to wait for a place someone else holds, then fail")
    ] = 600
    client: Annotated[
        str,
        Field(
            pattern=r"^[A-Za-z0-9_./+-]*$",
            max_length=4096,
            description="the labgrid-client to run; empty: .venv-labgrid/bin/labgrid-client (make deps), "
            "then labgrid-client on PATH",
        ),
    ] = ""
    power_settle: Annotated[float, Field(ge=0, le=60, description="seconds to wait after switching the board off")] = (
        1.0
    )
    watch_interval: Annotated[
        float,
        Field(
            ge=0,
            le=3600,
            description="seconds between two checks, while a boot runs, that the place's resources are "
            "still there (an exporter gone fails the run); 0: no checks",
        ),
    ] = 5.0

    @field_validator("client")
    @classmethod
    def _client_program(cls, v: str) -> str:
        why = command_path_problem(v) if v else None
        if why:
            raise ValueError(why)
        return v

    @field_validator("coordinator")
    @classmethod
    def _coordinator_port(cls, v: str) -> str:
        port = v.rpartition(":")[2]
        if v and not (len(port) <= 5 and 1 <= int(port) <= 65535):
            raise ValueError(f"port {port}: a TCP port is 1 to 65535")
        return v

    @model_validator(mode="after")
    def _one_way_to_name_places(self) -> LabgridSpec:
        if self.place and self.places:
            raise located("places", "give either place or places, not both")
        if not self.place and not self.places:
            raise located("place", "missing: the labgrid place of the board (or places = [...])")
        dup = first_duplicate(self.places)
        if dup is not None:
            raise located("places", f"{dup!r} is listed twice")
        return self

    def names(self) -> list[str]:
        """The places the board's boots run on: [place], or places."""
        return list(self.places) if self.places else [self.place]

    def check_board(self, board: BoardFile) -> None:
        self.check_disk(board)  # tftp.dir may be empty: the place's TFTP provider says where files go

    def target(self, board: Board, run_dir: Path, *, say: Any, disk: Path | None) -> LabgridTarget:
        return LabgridTarget(board, say=say)

    def held_places(self, board: Board, names: list[str], say: Any) -> list[LabPlace]:
        """The board's places (names, e.g. from PLACES=, instead of the board file's place/places),
        each held for a whole step."""
        if not self.coordinator:
            net.coordinator_from_env()  # a bad LG_COORDINATOR: refused here, not at the first boot
        names = names or self.names()
        return [LabPlace(board, n, shared=len(names) > 1, say=say) for n in names]


@dataclass
class LabPlace:
    """A labgrid place held for a whole step: acquired once, released at the end (also
    on errors and Ctrl-C); each boot's target switches the power only."""

    board: Board
    name: str | None  # always a place's name (the Place protocol's type)
    shared: bool = False  # one of several places of the study
    say: object = print

    @contextlib.contextmanager
    def hold(self, cancel: threading.Event | None = None) -> Iterator[TargetFactory]:
        b, name, shared, say = self.board, self.name, self.shared, self.say
        with LabgridTarget(b, say=say, place=name, shared=shared, cancel=cancel) as held:
            yield lambda run_dir: LabgridTarget(b, say=say, place=name, held_by=held, shared=shared)


def _holder(msg: str) -> str | None:
    """Who holds the place, when the acquire failed because someone does."""
    if "already acquired by " in msg:
        return msg.split("already acquired by ", 1)[1].split(".", 1)[0].strip()
    if msg.startswith("You have already acquired place"):
        return "you (another bringup, or a run that did not release it: labgrid-client -p PLACE release)"
    return None


def _is_local(host: str) -> bool:
    names = {"localhost", "127.0.0.1", "::1", socket.gethostname(), socket.getfqdn()}
    return host in names


@contextlib.contextmanager
def _sigint_deferred():
    """Ctrl-C during the block is held until it ends (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []
    old = signal.signal(signal.SIGINT, lambda s, f: got.append(s))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
    if got:
        raise KeyboardInterrupt


def _implements_target(t: LabgridTarget) -> Target:  # mypy checks that LabgridTarget is a Target
    return t
