"""The report's model, typed: one frozen object per section, each made by its own
module, composed into a `ReportModel`.

    inputs.py        Inputs: the records read (builds, boot timing, footprint, lmbench,
                     workloads, imports), what was left out, the sets, what is missing
    clocknote.py     ClockSection: the A/A floors and the clock paragraphs
    buildsection.py  BuildSection: the build table with the cold build cost, sizes, size diffs
    bootsection.py   BootSection: boot rows, boot over NFS, places, boot explained,
                     console cost, deferred probes
    measuresection.py MemorySection and LmbenchSection: the footprint rows; lmbench, bw_mem
    workloads.py     WorkloadSection: the workloads' tables
    environment.py   the machine and versions (a dict section)
    reproduce.py     the commands that remake the study
    summary.py       the management summary (findings)

The templates and model.json read the model as one plain mapping: `as_dict()` gives
it with the keys (and their order) the page has always had; the values inside the
sections are the rows and cells the templates read (plain dicts, lists and records)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from bringup.records import BootTiming, Build, BuildCost, Footprint, Lmbench, Workloads

# the records themselves: in the page's model, never in model.json
NOT_IN_JSON = ("build", "boot", "live_boot", "build_cost")


@dataclass(frozen=True)
class Section:
    def items(self) -> dict[str, Any]:
        """The section's part of the model, by key (shallow: the values are shared)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Head(Section):
    """The page's title: the board, its description, the kernels shown, when it was made."""

    board: str
    description: str
    kernels: list[str]
    generated: str


@dataclass(frozen=True)
class Inputs(Section):
    """The records the report read, by kernel, and what it could not use."""

    build: dict[str, Build]
    footprint: dict[str, Footprint]
    lmbench: dict[str, Lmbench]
    workloads: dict[str, Workloads]
    boot: BootTiming | None  # the live summary with the imported kernels' boots beside
    live_boot: BootTiming | None
    imported: dict[str, list[dict]]  # kernel -> where its imported records came from
    unsupported: dict[str, list[str]]  # kernel -> why it is built outside what its authors supported
    left_out: list[str]
    sets: list[dict]
    missing: dict[str, list[str]]


@dataclass(frozen=True)
class ClockSection(Section):
    """The A/A floors deterministic findings are judged against, and the clock paragraphs (clocknote.py)."""

    floors: dict[str, Any]  # model/clocks.py floors(): metrics, default_pct, source
    clock: dict[str, Any]  # kinds, ns_per_instruction, text


@dataclass(frozen=True)
class BuildSection(Section):
    """The build table (with the cold build cost), section and image sizes, size diffs (buildsection.py)."""

    build_cost: BuildCost | None
    build_table: list[dict]
    sizes: dict[str, Any]
    images: dict[str, dict[str, int]]
    sizediff: list[dict]


@dataclass(frozen=True)
class BootSection(Section):
    """The boot tables, the NFS root's, places, boot explained, console cost, deferred probes (bootsection.py)."""

    boot_milestones: list[dict]
    delayed_milestones: list[str]
    boot_rows: list[dict]
    places: dict | None
    boot_nfs: dict | None
    boot_explained: dict | None
    console_cost: dict | None
    deferred: dict | None


@dataclass(frozen=True)
class MemorySection(Section):
    """The footprint table (measuresection.py)."""

    footprint_rows: list[dict]


@dataclass(frozen=True)
class LmbenchSection(Section):
    """The lmbench tables by group and the bw_mem series (measuresection.py)."""

    lmbench_groups: dict[str, Any]  # kernels, not_measured, missing, groups
    bw_mem: dict[str, dict[str, list[tuple[int, float]]]]  # rd|wr|bcopy -> kernel -> (bytes, MB/s)


@dataclass(frozen=True)
class WorkloadSection(Section):
    """The workloads' tables and the relative-performance chart's values (workloads.py)."""

    workload_tables: dict
    workload_relative: Any


@dataclass(frozen=True)
class ReportModel:
    head: Head
    inputs: Inputs
    clock: ClockSection
    build: BuildSection
    boot: BootSection
    memory: MemorySection
    lmbench: LmbenchSection
    workloads: WorkloadSection
    env: dict
    reproduce: list[dict]
    findings: list[dict]

    def as_dict(self) -> dict[str, Any]:
        """The model as the templates read it (shallow: the sections' values are shared)."""
        out: dict[str, Any] = {}
        for part in (self.head, self.inputs, self.clock, self.build, self.boot, self.memory, self.lmbench):
            out.update(part.items())
        out.update(self.workloads.items())
        out.update(env=self.env, reproduce=self.reproduce, findings=self.findings)
        return out

    def json(self) -> dict[str, Any]:
        """model.json: the model without the records themselves."""
        return {k: v for k, v in self.as_dict().items() if k not in NOT_IN_JSON}
