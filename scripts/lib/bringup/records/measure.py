"""bringup.footprint and bringup.lmbench: logs/<board>/<kernel>/footprint.json
and lmbench.json, from one footprint run (logs/<board>/<kernel>/footprint-runs/<stamp>/)."""

from __future__ import annotations

from pathlib import PurePath
from typing import Annotated, Any, Literal

from pydantic import Field

from bringup.records.base import (
    KB,
    Bytes,
    ClockInfo,
    Count,
    Environment,
    KernelRecord,
    LineNo,
    Name,
    Part,
    Real,
    RelPath,
    Sha256,
    Text,
    Timestamp,
    migrations,
)
from bringup.records.boot import HostLoad
from bringup.records.imported import Imported
from bringup.records.rootfs import LmbenchSource, RootfsRef

Mode = Literal["quick", "full", "none", "imported"]


class MemoryLine(Part):
    """The kernel's `Memory:` boot line, parsed (bringup.parse.meminfo)."""

    wording: Literal["2.4", "2.6", "modern"]
    line: LineNo | None  # its line number in the run's console.log; None in records migrated from /1
    text: Text
    available_kb: KB
    total_kb: KB | None
    kernel_code_kb: KB | None
    data_kb: KB | None
    init_kb: KB | None
    bss_kb: KB | None
    reserved_kb: KB | None
    parts_kb: dict[str, KB]
    kernel_code_data_kb: KB | None


class Free(Part):
    total_kb: KB | None
    used_kb: KB | None
    free_kb: KB | None
    available_kb: KB | None
    columns: dict[str, KB]


# mem_eat's chunk: the footprint step runs `mem_eat 1024`, so its total is a whole number of
# 1024 kB chunks (the only size bringup has run: records before /7 say none and mean this one)
MEM_EAT_CHUNK_KB = 1024


class MemEat(Part):
    bytes: Bytes
    kb: KB
    completed: bool  # malloc() failed ("Got total"); False: the OOM killer ended it
    chunk_kb: Annotated[int, Field(ge=1)] = MEM_EAT_CHUNK_KB  # the step's chunk: kb's resolution (/7)


def _run_dir(v1: Any) -> str | None:
    """A /1 record's run directory (relative to the project, or absolute) as /2 keeps
    it: relative to the record's directory.  Runs always live in footprint-runs/<stamp>."""
    if not isinstance(v1, str):
        return None
    parts = PurePath(v1).parts
    if len(parts) >= 2 and parts[-2] == "footprint-runs" and parts[-1] not in ("..", "."):
        return f"footprint-runs/{parts[-1]}"
    return None


def _footprint_1_to_2(d: dict[str, Any]) -> dict[str, Any]:
    """/2: memory_line.line is the console.log line number (the text moved to .text);
    run is relative to the record's directory; rootfs has inputs_key."""
    out = {**d, "run": _run_dir(d.get("run"))}
    ml = d.get("memory_line")
    if isinstance(ml, dict):
        out["memory_line"] = {**ml, "text": ml.get("line"), "line": None}
    if isinstance(d.get("rootfs"), dict):
        out["rootfs"] = {**d["rootfs"], "inputs_key": None}
    return out


class Footprint(KernelRecord):
    """A kernel's memory footprint over its rounds: logs/<board>/<kernel>/footprint.json."""

    KIND = "bringup.footprint"
    VERSION = 7
    MIGRATIONS = migrations(range(1, 7), {1: _footprint_1_to_2})

    kernelrelease: Name | None  # None only in an imported log without a kernel version (/4)
    build_key: Sha256 | None
    created: Timestamp
    run: RelPath | None  # the run directory, relative to this record's directory
    memory_mb: Annotated[int, Field(ge=1)] | None  # None only in an imported log that gives no total (/4)
    memory_line: MemoryLine | None
    free: Free | None
    meminfo: dict[str, KB]
    mem_eat: MemEat | None  # None only in an imported log: a boot log has no mem_eat (/4)
    kernel_code_data_kb: KB | None
    total_free_kb: KB | None
    malloc_kb: KB | None  # the median over the rounds; None only in an imported log (/4)
    rootfs: RootfsRef | None  # None only in an imported log (/4)
    rounds: list[Annotated[int, Field(ge=1)]] = []  # one boot per round (/3); empty: one boot
    malloc_kb_values: list[KB] = []  # mem_eat's total in each round (/3)
    total_free_kb_values: list[KB] = []  # free's total in each round (/3)
    runs: list[RelPath] = []  # every round's run directory (/3); `run` is the first
    host: list[HostLoad] = []  # the host-load guard, per round (/3)
    disturbed: Count = 0  # rounds done again because the host was disturbed (/3)
    imported: Imported | None = None  # where an imported record came from (/4); None for a live run
    stopped: Text | None = None  # why no more rounds were run, as boot-timing.json's (/4)
    clock: ClockInfo = ClockInfo()  # what measured the boots (/5); older records: the host clock
    environment: Environment | None = None  # the machine that measured (/6); None: older records, not recorded


class Metric(Part):
    name: Text
    value: Real  # the median of `values` with several passes
    unit: Literal["us", "ns", "MB/s", "s"]
    better: Literal["lower", "higher"]
    source: str
    values: list[Real] | None = None  # every pass's value; None with one pass
    rounds: list[Annotated[int, Field(ge=1)]] | None = None  # the round (boot) of each value (/3)


class Benchmark(Part):
    group: str  # lmbench's summary group
    rc: int | None  # the command's exit status; None if its block never ended
    metrics: list[Metric]
    raw_lines: list[LineNo]  # lines of lmbench.txt where its blocks begin, one per pass (retries too)


def _lmbench_1_to_2(d: dict[str, Any]) -> dict[str, Any]:
    """/2: run relative to the record's directory, raw_lines per benchmark; reason,
    runs and retried always present."""
    benchmarks = d.get("benchmarks")
    if isinstance(benchmarks, dict):
        benchmarks = {k: {**b, "raw_lines": []} if isinstance(b, dict) else b for k, b in benchmarks.items()}
    return {
        "reason": None,
        "runs": 1 if d.get("measured") else 0,
        "retried": [],
        **d,
        "run": _run_dir(d.get("run")),
        "benchmarks": benchmarks,
    }


class Lmbench(KernelRecord):
    """A kernel's lmbench results over its rounds (or why it was not measured):
    logs/<board>/<kernel>/lmbench.json."""

    KIND = "bringup.lmbench"
    VERSION = 6
    MIGRATIONS = migrations(range(1, 6), {1: _lmbench_1_to_2})

    created: Timestamp
    build_key: Sha256 | None
    mode: Mode
    source: LmbenchSource
    run: RelPath | None  # the run directory (lmbench.txt), relative to this record's directory
    measured: bool
    reason: Text | None  # why not measured
    runs: Count  # passes (one per round since /3); 0 when not measured
    retried: list[Name]  # benchmarks run once more after printing no number
    benchmarks: dict[Name, Benchmark]
    imported: Imported | None = None  # where an imported record came from (/4); None for a live run
    clock: ClockInfo = ClockInfo()  # what lmbench's timer counted (/5): the guest's clock runs on it
    environment: Environment | None = None  # the machine that measured (/6); None: older records, not recorded
