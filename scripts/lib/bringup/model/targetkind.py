"""The kinds of target a board can be (QEMU, a serial bench board, a labgrid place,
...): what the rest of bringup asks a board's target table, and the registry the
kinds enter themselves in.

A kind is one module under targets/ (targets/qemu.py, targets/serial.py,
targets/labgrid.py): it declares its board-file table as a TargetSpec subclass
(a pydantic model, `table` its name in the file), answers the questions below
for its boards, makes the Target that boots them (`target()`), and registers
itself with @register.  The board model (model/board.py) validates a board
file's kind tables through this registry, and keeps the one it found as
`board.target`; code outside targets/ asks that spec its questions instead of
looking at which kind a board is.  As in labgrid, where a driver carries its
configuration's schema and registers itself with the target factory, the kinds
live above the model and enter the registry when their package is imported
(`import bringup.targets`, as the command line does before it loads a board):
model/ never imports targets/ (docs/architecture.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeVar

from bringup.errors import BringupError
from bringup.model.base import Strict, located
from bringup.model.clocks import HOST, Clock, ClockKind

if TYPE_CHECKING:
    from bringup.model.board import Board, BoardFile


class TargetSpec(Strict):
    """A board file's table that says what kind of target the board is, and what the
    rest of bringup asks of that kind (each answer's default is a real board's)."""

    table: ClassVar[str]  # the board file's table ([qemu]) and the kind's name
    table_doc: ClassVar[str] = ""  # the table's meaning in docs/board-files.md and the schema
    rank: ClassVar[int] = 100  # where the kind comes in messages and docs (lower first)
    loads_kernel_itself: ClassVar[bool] = False  # boot path 'direct': the target loads our kernel (QEMU -kernel)
    lab: ClassVar[bool] = False  # its boots go to the places of a lab, each held for a step (no local workers)
    console_rate_limited: ClassVar[bool] = True  # a real serial line: the boot pays for every byte it prints
    alone: ClassVar[str | None] = None  # why this table excludes every other kind's (None: the general rule)

    # -- the board file ------------------------------------------------------
    def check_board(self, board: BoardFile) -> None:
        """Refuse (located(), a field of the board file) what this kind cannot do with
        the board's other tables; called by BoardFile's validator."""
        if board.tftp is not None and not board.tftp.dir:
            raise located("tftp.dir", "required (the host's TFTP root) unless the board is a labgrid place")
        self.check_disk(board)

    def check_disk(self, board: BoardFile) -> None:
        """Refuse a [workloads] disk this kind cannot attach (a real board's is its partition)."""
        if board.workloads.disk_mb is not None:
            raise located("workloads.disk_mb", "only for a QEMU board (a real board's disk is its partition)")

    def check_boot_path(self, board: Board, path: str) -> None:
        """Refuse, in one line before any work, what this kind needs for boot path `path`
        (model/bootpath.py has checked what every board needs)."""

    # -- measuring -----------------------------------------------------------
    def measuring_clock(self) -> Clock:
        """What measures time on this target (model/clocks.py): a real board's own time."""
        return HOST

    def with_clock(self, kind: ClockKind) -> Self | None:
        """This table measuring with clock `kind`, or None: the target has no such clock."""
        return self if kind == "host" else None

    def emulator(self) -> str | None:
        """The program that runs the board, whose --version the records' environment keeps
        (records.Environment's `qemu`); None: the board is hardware."""
        return None

    def disk_attachment(self) -> str | None:
        """How the target attaches the disk image bringup makes fresh for each boot of the
        disk workloads, or None: the board's disk is its own partition."""
        return None

    # -- the target (targets/) -------------------------------------------------
    def target(self, board: Board, run_dir: Path, *, say: Any, disk: Path | None) -> Any:
        """A fresh boot.target.Target for one boot of `board` (targets.for_board())."""
        raise NotImplementedError(f"[{self.table}] makes no target")

    def held_places(self, board: Board, names: list[str], say: Any) -> list[Any] | None:
        """Where a step's boots go when the kind has places of its own (targets.places()),
        or None: the board itself, a fresh target per boot."""
        return None

    @classmethod
    def of(cls, board: Board) -> Self:
        """The board's table of this kind; refused when the board is of another kind."""
        spec = board.target
        if not isinstance(spec, cls):
            raise BringupError(f"board {board.name}: no [{cls.table}] table")
        return spec


_KINDS: dict[str, type[TargetSpec]] = {}
K = TypeVar("K", bound=type[TargetSpec])


def register(kind: K) -> K:
    """Class decorator: enter a kind in the registry under its table's name."""
    other = _KINDS.get(kind.table)
    if other is not None and other is not kind:
        raise ValueError(f"two kinds of target for the table [{kind.table}]: {other.__name__} and {kind.__name__}")
    _KINDS[kind.table] = kind
    return kind


def unregister(table: str) -> None:
    """Remove a kind from the registry (tests that register a kind of their own)."""
    _KINDS.pop(table, None)


def kinds() -> list[type[TargetSpec]]:
    """The registered kinds, in their rank's order; none is a program's error."""
    if not _KINDS:
        raise RuntimeError("no kinds of target registered: import bringup.targets before loading a board")
    return sorted(_KINDS.values(), key=lambda k: (k.rank, k.table))


def listing(items: list[str], last: str = "or") -> str:
    """a, b or c"""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {last} {items[-1]}"


def chosen(present: dict[str, TargetSpec]) -> TargetSpec:
    """The board's one target table among the kind tables present (table -> spec),
    refused (located()) when there is none or more than one."""
    names = [k.table for k in kinds()]
    if not present:
        each_kind = listing([f"a [{n}]" for n in names])
        raise located(names[0], f"a board needs {each_kind} table")
    if len(present) == 1:
        return next(iter(present.values()))
    last = sorted(present.values(), key=lambda s: (s.rank, s.table))[-1]
    if last.alone is not None:
        the_others = listing([f"[{n}]" for n in names if n != last.table], "and")
        raise located(last.table, f"{last.alone}: drop {the_others}")
    tables_given = listing([f"[{n}]" for n in present], "and")
    raise located(last.table, f"a board is one kind of target: keep one of {tables_given}")
