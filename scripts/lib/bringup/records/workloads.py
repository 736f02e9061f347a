"""bringup.workloads: logs/<board>/<kernel>/workloads.json, the application
workloads of configs/workloads/ run in rounds of boots (docs/workloads.md)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from bringup.records.base import (
    ClockInfo,
    Count,
    Environment,
    KernelRecord,
    Name,
    NonNeg,
    Part,
    RelPath,
    Sha256,
    Text,
    Timestamp,
    migrations,
)
from bringup.records.boot import HostLoad
from bringup.records.rootfs import RootfsRef

Round = Annotated[int, Field(ge=1)]


class WorkloadMetric(Part):
    name: Name
    unit: Name  # one of the units of bringup.model.workload.Unit
    better: Literal["higher", "lower"]
    value: NonNeg  # the median of `values` (every unit is a time or a rate: never negative)
    values: list[NonNeg]  # one value per round that measured it
    rounds: list[Round]  # the round (boot) of each value


class Failure(Part):
    round: Round
    reason: Text  # a step that failed or timed out, a metric its regex found no number for


class WorkloadResult(Part):
    description: Text
    packages: list[Name]  # the Debian packages the workload file names
    measured: bool  # at least one metric has a value
    reason: Text | None  # why not measured (the first failure)
    metrics: list[WorkloadMetric]  # only metrics with values: a failed run is never 0
    failures: list[Failure]  # per round, every value that is missing, and why
    seconds: list[NonNeg]  # the steps' total elapsed time in the guest, per round that ran them all


class WorkloadDisk(Part):
    device: Text  # the block device the guest mounted (/dev/vda, a partition of a real board)
    fs: Name  # its filesystem
    image_mb: (
        Annotated[int, Field(ge=1)] | None
    )  # QEMU: size of the ext4 image made for each boot; None on a real board
    attached: Text  # how: QEMU's device and cache, or the board's own partition


class WorkloadFile(Part):
    """A workload file of configs/workloads/ as it was when the workloads ran (/4): whether
    it is in the default set, or why it did not load.  The report says from these which
    workloads the study left out, without reading configs/ at render time."""

    default_set: bool | None  # None: the file did not load
    error: Text | None = None  # why it did not load


class Workloads(KernelRecord):
    """A kernel's application workloads over its rounds: logs/<board>/<kernel>/workloads.json."""

    KIND = "bringup.workloads"
    VERSION = 4
    MIGRATIONS = migrations(range(1, 4))

    created: Timestamp
    build_key: Sha256 | None
    mode: Literal["quick", "full"]
    runs: Count  # rounds: boots of this kernel
    run_dirs: list[RelPath]  # each round's run directory (console.log, workloads.txt), relative to this record
    rootfs: RootfsRef
    packages: dict[Name, Name]  # every package in the ramdisk (closure included) -> its Debian version
    host: list[HostLoad]  # the host-load guard, per round
    disturbed: Count  # rounds done again because the host was busy
    disk: WorkloadDisk | None = None  # the disk of the disk workloads (/2); None when none ran on one
    workloads: dict[Name, WorkloadResult]
    clock: ClockInfo = ClockInfo()  # what the steps' times counted (/3); older records: the host clock
    environment: Environment | None = None  # the machine that measured (/4); None: older records, not recorded
    available: dict[Name, WorkloadFile] | None = None  # every workload file when they ran (/4); None: older
