"""One build of a thing at a time, across processes and checkouts.

Builds share the cache (~/.cache/bringup): two checkouts, or CI beside a user,
building the same board's kernel would empty and fill the same build directory
at once.  `exclusive()` holds an flock on a lock file next to what it guards;
a second process waits and says so, and the lock goes with the process (a
killed build leaves nothing to clean up)."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


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
