"""Wall-clock timestamps for records and run directories (UTC)."""

from __future__ import annotations

import datetime as dt


def now() -> str:
    """ISO-8601 UTC to the second, as records carry it: 2026-01-01T12:00:00+00:00."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def stamp() -> str:
    """The same instant for file and directory names: 20260101T120000Z."""
    return dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
