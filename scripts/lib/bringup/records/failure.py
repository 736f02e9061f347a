"""`bringup.failure/1`: why a step left a kernel (or the whole step) without a new result
(docs/records.md).  It lies beside the good records (`<kernel>/footprint-failed.json`,
`<kernel>/workloads-failed.json`, `sources-failed.json`), never over them, and the next
good result of that step removes it."""

from __future__ import annotations

from pydantic import Field

from bringup.records.base import Id, Record, RelPath, Text, Timestamp


class Failure(Record):
    KIND = "bringup.failure"
    VERSION = 1

    step: str = Field(min_length=1, max_length=100)  # footprint, workloads, sources
    board: Id
    kernel: Id | None  # null: the whole step
    created: Timestamp
    error: Text  # one line naming the step, the kernel, the file or device and the cause
    run: RelPath | None = None  # the failed run's directory, relative to the record's directory
    kept: str | None = Field(default=None, max_length=1000)  # the good record kept beside, or null


def failed_name(step: str) -> str:
    return f"{step}-failed.json"
