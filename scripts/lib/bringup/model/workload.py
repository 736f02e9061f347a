"""configs/workloads/<name>.toml as a typed model: an application workload run in
the measurement ramdisk like lmbench (docs/workloads.md).

A workload names the Debian packages it needs (for the board's userspace
architecture; their library closure comes along), input files generated on the
host, the shell steps the guest runs, and the metrics read from each step's
output by a regular expression (or the step's elapsed time in the guest).
Everything is checked when the file is loaded: a bad regex, an unknown unit, a
metric naming a step that does not exist, a placeholder no size defines.

The file's model is WorkloadSpec, its tables WorkloadInputSpec, WorkloadStepSpec and
WorkloadMetricSpec; what a run of it measured is the record records.Workloads.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from bringup.model.base import DataError, Strict, first_duplicate, load_toml, located, no_control, validate_as
from bringup.model.milestones import pattern_problem
from bringup.util import paths

WORKLOADS_DIR = "workloads"  # under configs/
Seconds = Annotated[float, Field(gt=0, le=86400, allow_inf_nan=False)]
Ident = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=40)]
# the units a metric may have; the report prints them as they are
Unit = Literal["s", "ms", "us", "kB/s", "MB/s", "MiB/s", "ops/s", "events/s", "frames/s", "c/s", "MIPS"]
TIME_UNITS = ("s", "ms", "us")
Mode = Literal["quick", "full"]
# a size variable's value goes into the guest's shell command as it is: one word, no shell syntax
SIZE_WORD = r"[A-Za-z0-9_.,:+=%/-]+"
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
PACKAGE = r"^[a-z0-9][a-z0-9+.-]+$"  # a Debian package name
INPUTS_DIR = "usr/share/bringup-workloads"  # in the guest: /usr/share/bringup-workloads/<workload>/<input>
DISK_MOUNT = "/mnt/bringup-disk"  # in the guest: where the board's disk is mounted for needs_disk workloads


class WorkloadInputSpec(Strict):
    """A file generated on the host, deterministically, put into the ramdisk."""

    name: Annotated[
        str,
        Field(
            pattern=r"^[A-Za-z0-9_.-]+$",
            max_length=64,
            description="a file name in the inputs directory (not '.' or '..')",
        ),
    ]
    kind: Annotated[
        Literal["text", "random", "zeros", "image", "video"],
        Field(
            description="text: compressible pseudo-words; random: incompressible bytes; zeros; image: a binary "
            "PPM picture of about that size; video: a YUV4MPEG2 clip (QCIF, 25 fps) of about that size"
        ),
    ]
    quick_bytes: Annotated[int, Field(ge=1, le=64 * 1024 * 1024)]
    full_bytes: Annotated[int, Field(ge=1, le=256 * 1024 * 1024)]
    seed: Annotated[int, Field(ge=0, le=2**31)] = 1

    @field_validator("name")
    @classmethod
    def _a_file(cls, v: str) -> str:
        if v in (".", ".."):
            raise ValueError("names a directory, not a file in the inputs directory")
        return v


class WorkloadStepSpec(Strict):
    name: Ident
    cmd: Annotated[
        str,
        Field(
            min_length=1,
            max_length=2000,
            pattern=r"^[^\x00-\x1f\x7f]*$",
            description="shell command in the guest; {var} expands to the mode's size variable, "
            "{inputs} to the inputs directory",
        ),
    ]
    timeout: Annotated[Seconds | None, Field(description="seconds in quick mode; default: the workload's")] = None


class WorkloadMetricSpec(Strict):
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_. /()+-]+$", min_length=1, max_length=64)]
    step: Ident
    regex: Annotated[str | None, Field(max_length=500, description="one capture group: the number (re.MULTILINE)")] = (
        None
    )
    elapsed: Annotated[bool, Field(description="the step's elapsed time in the guest, in seconds")] = False
    unit: Unit
    better: Literal["higher", "lower"]
    scale: Annotated[float, Field(gt=0, allow_inf_nan=False, description="the number is multiplied by this")] = 1.0
    count: Annotated[
        float | str | None,
        Field(
            description="the value is this count divided by the number (a rate: frames per second from the "
            "seconds it took to encode that many frames); a number or the name of a size variable"
        ),
    ] = None

    @field_validator("regex")
    @classmethod
    def _compiles(cls, v: str | None) -> str | None:
        if v is None:
            return v
        try:
            rx = re.compile(v, re.M)
        except re.error as e:
            raise ValueError(f"{v!r}: not a regular expression: {e}") from None
        if rx.groups != 1:
            raise ValueError(f"{v!r}: needs exactly one capture group (the number), has {rx.groups}")
        why = pattern_problem(
            rx, v, empty="it would read a number from any output", long="long output", lines="output line"
        )
        if why:
            raise ValueError(why)
        return v

    @field_validator("count")
    @classmethod
    def _count(cls, v: float | str | None) -> float | str | None:
        if isinstance(v, str):
            if not re.fullmatch(r"[a-z][a-z0-9_]*", v):
                raise ValueError(f"{v!r}: a number or the name of a size variable")
        elif v is not None and not 0 < v < float("inf"):
            raise ValueError(f"{v!r}: a count is a positive number")
        return v

    @model_validator(mode="after")
    def _one_source(self) -> WorkloadMetricSpec:
        if (self.regex is None) == (not self.elapsed):
            raise located("", "give either regex or elapsed = true")
        if self.count is not None:
            if self.unit in TIME_UNITS:
                raise located("unit", f"{self.unit!r}: a count divided by a time is a rate, not a time")
            if self.scale != 1.0:
                raise located("scale", "give either scale or count")
        elif self.elapsed and self.unit != "s":
            raise located("unit", f"{self.unit!r}: an elapsed time is in s")
        return self


MAX_SIZE = 10**12  # a size variable (bytes, seconds, counts, levels) beyond this is no workload's


def _check_size_words(quick: dict, full: dict) -> None:
    for mode, values in (("quick", quick), ("full", full)):
        for k, v in values.items():
            if isinstance(v, float) and not math.isfinite(v):
                raise located(f"{mode}.{k}", f"{v!r}: not a finite number (the guest's command would read {v})")
            if isinstance(v, int | float) and v < 0:
                raise located(f"{mode}.{k}", f"{v!r}: negative; a size, count or level is 0 or more")
            if isinstance(v, int | float) and v > MAX_SIZE:
                raise located(f"{mode}.{k}", f"{v!r}: beyond any workload's size (at most {MAX_SIZE})")
            if isinstance(v, str) and not re.fullmatch(SIZE_WORD, v):
                raise located(
                    f"{mode}.{k}", f"{v!r}: one word for the guest's shell (letters, digits and . , : + = % / - _)"
                )


def _check_count(i: int, m: WorkloadMetricSpec, quick: dict, full: dict) -> None:
    """A count naming a size variable: a positive number in both modes."""
    if not isinstance(m.count, str):
        return
    for mode, values in (("quick", quick), ("full", full)):
        v = values.get(m.count)
        if isinstance(v, bool) or not isinstance(v, int | float) or not v > 0:
            raise located(f"metric[{i}].count", f"{m.count!r}: not a positive number among the {mode} size variables")


class WorkloadSpec(Strict):
    description: Annotated[str, Field(min_length=1, max_length=300), AfterValidator(no_control)]
    packages: Annotated[list[Annotated[str, Field(pattern=PACKAGE, max_length=80)]], Field(min_length=1)]
    without: Annotated[
        list[Annotated[str, Field(pattern=PACKAGE, max_length=80)]],
        Field(
            description="packages left out of the closure with whatever only they bring in (an interpreter "
            "that only a package's scripts need, a maintainer script's helper)"
        ),
    ] = []
    needs_disk: Annotated[
        bool,
        Field(description="runs on the board's disk, mounted at {disk}; a board without one: not measured"),
    ] = False
    default_set: Annotated[
        bool,
        Field(
            description="false: runs only when named (WORKLOADS=a,b or all), not in the default set of "
            "make workloads and make all (a workload too slow for every study)"
        ),
    ] = True
    timeout: Annotated[Seconds, Field(description="seconds per step in quick mode")] = 120.0
    full_timeout_factor: Annotated[float, Field(ge=1, le=1000, allow_inf_nan=False)] = 10.0
    quick: Annotated[
        dict[Ident, str | int | float],
        Field(description="size variables in quick mode ({name} in a cmd), one word each: letters, digits, .,:+=%/-_"),
    ] = {}
    full: Annotated[dict[Ident, str | int | float], Field(description="the same variables in full mode")] = {}
    input: list[WorkloadInputSpec] = []
    step: Annotated[list[WorkloadStepSpec], Field(min_length=1, max_length=20)]
    metric: Annotated[list[WorkloadMetricSpec], Field(min_length=1, max_length=50)]

    @field_validator("quick", "full", mode="before")
    @classmethod
    def _no_booleans(cls, v: object) -> object:
        if isinstance(v, dict):
            for k, x in v.items():
                if isinstance(x, bool):  # a bool is an int to Python: the guest's command would read 1
                    raise ValueError(f"@{k}@{x!r}: true or false is no size, count or level")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> WorkloadSpec:
        for what, field, names in (
            ("step", ".name", [s.name for s in self.step]),
            ("metric", ".name", [m.name for m in self.metric]),
            ("input", ".name", [i.name for i in self.input]),
            ("packages", "", list(self.packages)),
            ("without", "", list(self.without)),
        ):
            dup = first_duplicate(names)
            if dup:
                first = names.index(dup)
                again = names.index(dup, first + 1)
                raise located(f"{what}[{again}]{field}", f"{dup!r} is listed twice (first as {what}[{first}])")
        _check_size_words(self.quick, self.full)
        if set(self.quick) != set(self.full):
            diff = sorted(set(self.quick) ^ set(self.full))
            raise located("full", f"quick and full must define the same variables; differ in {diff}")
        both = sorted(set(self.packages) & set(self.without))
        if both:
            raise located("without", f"{both[0]!r} is also in packages")
        known = set(self.quick) | {"inputs"}
        for i, s in enumerate(self.step):
            for ph in PLACEHOLDER.findall(s.cmd):
                if ph == "disk" and ph not in known:
                    if not self.needs_disk:
                        raise located(f"step[{i}].cmd", "placeholder {disk} needs needs_disk = true")
                elif ph not in known:
                    raise located(
                        f"step[{i}].cmd", f"placeholder {{{ph}}} is not a size variable nor {{inputs}} or {{disk}}"
                    )
        steps = {s.name for s in self.step}
        for i, m in enumerate(self.metric):
            if m.step not in steps:
                raise located(f"metric[{i}].step", f"{m.step!r}: no step of that name")
            _check_count(i, m, self.quick, self.full)
        return self

    def count_of(self, m: WorkloadMetricSpec, mode: Mode) -> float | None:
        """A metric's count in this mode (a number, or its size variable's value)."""
        if isinstance(m.count, str):
            return float((self.quick if mode == "quick" else self.full)[m.count])
        return m.count

    def commands(self, mode: Mode, workload: str) -> list[tuple[WorkloadStepSpec, str]]:
        """Each step with its command as the guest runs it in this mode."""
        values = {k: str(v) for k, v in (self.quick if mode == "quick" else self.full).items()}
        values["inputs"] = f"/{INPUTS_DIR}/{workload}"
        values.setdefault("disk", DISK_MOUNT)
        return [(s, PLACEHOLDER.sub(lambda m: values[m.group(1)], s.cmd)) for s in self.step]

    def step_timeout(self, step: WorkloadStepSpec, mode: Mode) -> float:
        t = step.timeout or self.timeout
        return t * (self.full_timeout_factor if mode == "full" else 1)


def workloads_dir() -> Path:
    return paths.CONFIGS / WORKLOADS_DIR


def load(file: Path) -> WorkloadSpec:
    return validate_as(WorkloadSpec, load_toml(file, "workload file"), paths.rel(file))


def available(directory: Path | None = None) -> list[str]:
    d = directory or workloads_dir()
    return sorted(f.stem for f in d.glob("*.toml")) if d.is_dir() else []


RESERVED = ("all", "none")  # WORKLOADS=all, WORKLOADS=none: not workload names


def load_all(only: list[str] | None = None, directory: Path | None = None) -> dict[str, WorkloadSpec]:
    """The workloads to run, each validated: those named in `only` (["all"]: every file),
    else the default set (every file but those with default_set = false).  An unknown
    name or a bad file is a DataError naming it, before any work starts."""
    d = directory or workloads_dir()
    names = available(d)
    if only == ["all"]:  # WORKLOADS=all: every file, the default set's and the others
        only = names
    if only:
        unknown = [n for n in only if n not in names]
        if unknown:
            raise DataError(
                f"workload {unknown[0]!r}: no file {paths.rel(d / (unknown[0] + '.toml'))} "
                f"(known: {', '.join(names) or 'none'})"
            )
        names = list(dict.fromkeys(only))
    if not names:
        raise DataError(f"{paths.rel(d)}: no workload files (*.toml)")
    for n in names:
        if not re.fullmatch(r"[a-z0-9][a-z0-9_-]*", n):
            raise DataError(f"{paths.rel(d / (n + '.toml'))}: a workload name is lowercase letters, digits, - and _")
        if n in RESERVED:
            meaning = "every workload" if n == "all" else "no workloads step"
            raise DataError(f"{paths.rel(d / (n + '.toml'))}: {n!r} is reserved (WORKLOADS={n}: {meaning})")
    loaded = {n: load(d / f"{n}.toml") for n in names}
    if only:
        return loaded
    chosen = {n: spec for n, spec in loaded.items() if spec.default_set}
    if not chosen:
        raise DataError(f"{paths.rel(d)}: every workload has default_set = false: name them (WORKLOADS=a,b or all)")
    return chosen
