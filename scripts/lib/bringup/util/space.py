"""Free space, checked before a step starts: a step that knows roughly what it writes
refuses in one line when the file system of its results has less than that, instead
of failing with a full disk half way (docs/records.md, "Sets")."""

from __future__ import annotations

import os
from pathlib import Path

from bringup.errors import BringupError

SLACK = 8 * 1024 * 1024  # kept free beyond what the step writes (the records, the set's journal)


def check(where: Path, need: int, step: str) -> None:
    """Refuse the step when where's file system has less than need bytes (and SLACK) free."""
    d = Path(where)
    while not d.exists() and d != d.parent:
        d = d.parent
    try:
        st = os.statvfs(d)
    except OSError as e:
        raise BringupError(f"{step}: {where}: cannot look at its free space: {e.strerror}") from None
    free = st.f_bavail * st.f_frsize
    if free < need + SLACK:
        raise BringupError(
            f"{step}: {where}: {free / 2**20:.0f} MB free, the step writes about {need / 2**20:.0f} MB "
            f"(and keeps {SLACK // 2**20} MB spare): free some space first (nothing was measured)"
        )
