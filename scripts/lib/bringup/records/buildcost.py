"""bringup.build-cost: logs/<board>/build-cost.json, the cold cost of building each
kernel of a board (measure/buildcost.py, docs/building.md "Build cost"): `make` of the
image without ccache in a scratch build directory, in rounds interleaved across the
kernels, CPU time (user + sys of make's process tree) and wall time per run."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from bringup.records.base import Count, Id, Name, Part, Record, Seconds, Sha256, Text, Timestamp
from bringup.records.boot import HostLoad

Round = Annotated[int, Field(ge=1)]
Rate = Annotated[float, Field(ge=0, le=1)]


class CostStep(Part):
    """One make step of a run: `make <target>`, its wall time and its process tree's CPU time."""

    name: Name
    real: Seconds
    user: Seconds
    sys: Seconds


class CostRun(Part):
    """One cold build of the image: the make steps after the configuration, summed."""

    round: Round
    attempt: Count  # 0; 1.. when the run was done again on a disturbed host
    redone: bool  # done again (the host was disturbed): not in the statistics
    started: Timestamp
    real: Seconds  # wall time of the image's make steps
    user: Seconds
    sys: Seconds
    cpu: Seconds  # user + sys: the primary figure
    configure_real: Seconds  # the configuration steps (not in real/cpu), for the record
    steps: list[CostStep]
    host: HostLoad | None  # the host-load guard's verdict; None without the guard


class StudyBuild(Part):
    """The study's own build of the same key (build.json), beside the cold cost: its time
    is one run through ccache at its hit rate, not a cold build."""

    real: Seconds
    user: Seconds
    sys: Seconds
    jobs: Annotated[int, Field(ge=1)]
    ccache_hit_rate: Rate | None  # None: built without ccache


class CostKernel(Part):
    build_key: Sha256 | None  # the build key of the study's build this measures (builder/kernel.py build_key)
    version: str  # the tree's version
    config_sha256: Sha256  # of the .config the scratch builds made
    config_matches_study: bool | None  # the same .config as the study's build.json; None: no such record
    targets: list[Name]  # the make targets timed
    runs: list[CostRun]  # every attempt, in round order
    study_build: StudyBuild | None  # the study's build of this key, when its build.json is there


class BuildCost(Record):
    """The cold build cost of a board's kernels: build-cost.json."""

    KIND = "bringup.build-cost"
    VERSION = 1

    board: Id
    created: Timestamp
    finished: Timestamp
    jobs: Annotated[int, Field(ge=1)]  # make -j of every run
    ccache: bool  # always false: the runs are cold
    gcc: dict[Id, Text]  # kernel -> the compiler's version line
    rounds: Count  # rounds finished
    order: dict[Name, list[Id]]  # round ("1", "2", ...) -> the kernels in their build order
    stopped: Text  # why the rounds stopped
    until_ci_pct: Annotated[float, Field(gt=0, le=100)] | None
    guard: bool  # the host-load guard judged every run
    parallel: Annotated[int, Field(ge=1)] = 1  # builds at once (--parallel; never with the guard)
    scratch: Text  # where the scratch build directories were (removed after each run)
    kernels: dict[Id, CostKernel]
