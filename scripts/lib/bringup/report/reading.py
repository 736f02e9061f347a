"""How the report reads records: a record that is absent is a kernel or a step not
measured (left out of the tables, the page goes on); a record that does not read
(not JSON, wrong schema, a field missing or mistyped, the record of another kernel)
is left out in one line; a file or directory the user cannot read (a permission
error, an I/O error) is a fault: `Unreadable`, one line naming it and the cause,
and the report refuses before it writes anything (issue 30: never "absent")."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TypeVar

from bringup import records
from bringup.errors import BringupError
from bringup.util import paths

R = TypeVar("R", bound=records.Record)


class Unreadable(BringupError):
    """A record or a directory of logs/ that exists but cannot be read."""


def _blocked(path: Path) -> Path:
    """The first directory on the way to path that cannot be searched (chmod 000), else path."""
    return next((p for p in reversed(Path(path).parents) if not os.access(p, os.X_OK)), Path(path))


def unreadable(path: Path, e: OSError) -> Unreadable:
    return Unreadable(f"{paths.rel(_blocked(Path(path)))}: cannot be read: {e.strerror}")


def present(path: Path) -> bool:
    """Whether path exists; a path that cannot be looked at or opened is Unreadable, never absent."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as e:
        raise unreadable(path, e) from None
    if Path(path).is_file():
        try:
            os.close(os.open(path, os.O_RDONLY))
        except OSError as e:
            raise unreadable(path, e) from None
    return True


def is_dir(path: Path) -> bool:
    """Whether path is a directory whose entries can be listed; absent: False; not listable: Unreadable."""
    if not present(path) or not Path(path).is_dir():
        return False
    try:
        os.scandir(path).close()
    except OSError as e:
        raise unreadable(path, e) from None
    return True


def optional(f: Path, model: type[R]) -> R | None:
    """A record when it is there and reads; None when absent or damaged (made again or
    not used); Unreadable when it cannot be read."""
    if not present(f):
        return None
    try:
        return records.read(f, model)
    except Unreadable:
        raise
    except BringupError:
        return None


class Reader:
    """Reads a board's records for the report; what does not read is left out, in one line;
    what cannot be read at all raises Unreadable."""

    def __init__(self) -> None:
        self.left_out: list[str] = []
        self._seen: dict[Path, records.Record | None] = {}

    def read(self, f: Path, model: type[R], kernel: str | None = None) -> R | None:
        if f not in self._seen:
            self._seen[f] = self._read(f, model, kernel)
        rec = self._seen[f]
        return rec if isinstance(rec, model) else None

    def _read(self, f: Path, model: type[R], kernel: str | None) -> R | None:
        if not present(f):
            return None
        try:
            rec = records.read(f, model)
        except BringupError as e:  # named as the user sees it: logs/<board>/... inside the project
            self.left_out.append(paths.rel(f) + str(e).removeprefix(str(f)))
            return None
        found = getattr(rec, "kernel", kernel)
        if kernel is not None and found != kernel:
            self.left_out.append(
                f"{paths.rel(f)}: field 'kernel': {found!r}: the record of another kernel, not {kernel!r}"
            )
            return None
        return rec
