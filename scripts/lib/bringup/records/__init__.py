"""Records: the JSON files every step writes and later steps read, each with a
versioned schema and a typed model (docs/records.md).

    rec = records.read(recdir / "build.json", records.Build)   # -> Build, or RecordError
    records.write(recdir / "build.json", rec)                   # validated, atomic

A record that is not what its model says (not JSON, truncated, a list, another
kind or an unknown version, a field missing, mistyped, NaN, a path leaving its
directory) raises RecordError, a BringupError whose message is one line naming
the file, the field and the value.  Older versions are migrated on read.
"""

from __future__ import annotations

from bringup.records.base import Part, Record, RecordError
from bringup.records.boot import Boot, BootTiming
from bringup.records.build import Build, BuildFailure
from bringup.records.buildcost import BuildCost
from bringup.records.failure import Failure, failed_name
from bringup.records.io import (
    KINDS,
    artifact,
    boot_timing_name,
    load,
    migrate,
    plain_text,
    present,
    read,
    validate,
    write,
    write_json,
    write_text,
)
from bringup.records.measure import Footprint, Lmbench
from bringup.records.rootfs import Rootfs, RootfsRef
from bringup.records.sets import ResultSet, SetManifest
from bringup.records.sizediff import SizeDiff
from bringup.records.workloads import Workloads

MODELS: list[type[Record]] = [
    Build,
    BuildFailure,
    Rootfs,
    Boot,
    BootTiming,
    Footprint,
    Lmbench,
    Workloads,
    SizeDiff,
    SetManifest,
    Failure,
    BuildCost,
]
for _m in MODELS:
    KINDS.setdefault(_m.KIND, []).append(_m)

__all__ = [
    "KINDS",
    "MODELS",
    "Boot",
    "BootTiming",
    "Build",
    "BuildCost",
    "Failure",
    "BuildFailure",
    "Footprint",
    "Lmbench",
    "Part",
    "Record",
    "RecordError",
    "ResultSet",
    "SetManifest",
    "Rootfs",
    "RootfsRef",
    "SizeDiff",
    "Workloads",
    "artifact",
    "boot_timing_name",
    "failed_name",
    "load",
    "migrate",
    "plain_text",
    "present",
    "read",
    "validate",
    "write",
    "write_json",
    "write_text",
]
