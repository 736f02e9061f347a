"""Reading a small file bringup is given (a data file, a record, a file to import):
refused in one line naming it when it is missing, a directory, a FIFO, socket or
device, unreadable (symlink loops included) or larger than a file of its kind is.
model/base.py and records/io.py raise these as their own kinds of error."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from bringup.errors import BringupError


def regular_file(path: Path, what: str = "file") -> os.stat_result:
    """The stat of a readable regular file; BringupError naming it otherwise."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise BringupError(f"{path}: no such {what}") from None
    except OSError as e:
        raise BringupError(f"{path}: cannot read the {what}: {e.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise BringupError(f"{path}: is a directory, not a {what}")
    if not stat.S_ISREG(st.st_mode):
        raise BringupError(f"{path}: not a regular file (a FIFO, socket or device), so not a {what}")
    if not os.access(path, os.R_OK):
        raise BringupError(f"{path}: not readable (permission denied)")
    return st


def read_small(path: Path, what: str, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; BringupError naming it otherwise."""
    st = regular_file(path, what)
    if st.st_size > limit:
        raise BringupError(f"{path}: {st.st_size} bytes: too large for a {what} (at most {limit})")
    try:
        with open(path, "rb") as f:
            return f.read(limit + 1)
    except OSError as e:
        raise BringupError(f"{path}: cannot read the {what}: {e.strerror}") from None
