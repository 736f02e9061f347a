"""configs/lmbench-benchmarks.toml as a typed model: every lmbench benchmark bringup
knows by name, its group, and the labels (regular expressions) that name it in
lmbench's output.  parse/lmbench.py takes the table as plain data (labels()), so
adding a benchmark is a data change."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, Field, field_validator

from bringup.model.base import Strict, load_toml, no_control, no_duplicate, validate_as
from bringup.util import paths

FILE = "lmbench-benchmarks.toml"
CTX_SIZED = re.compile(r"lat_ctx_\d+k")  # lat_ctx by the size its lines name (parse/lmbench.py: bench_of)


def _label(v: str) -> str:
    try:
        rx = re.compile(v)
    except re.error as e:
        raise ValueError(f"not a regular expression: {e}") from None
    if rx.search("") is not None:
        raise ValueError("matches an empty label, so every line of lmbench's output would be this benchmark")
    return v


Label = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(no_control), AfterValidator(_label)]


class Benchmark(Strict):
    name: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=64)]
    group: Annotated[
        str, Field(min_length=1, max_length=80, description="lmbench's own summary group"), AfterValidator(no_control)
    ]
    labels: Annotated[
        list[Label],
        Field(min_length=1, max_length=20, description="regular expressions searched in a line's label"),
    ]


class BenchmarkTable(Strict):
    benchmark: Annotated[list[Benchmark], Field(min_length=1, max_length=500)]

    @field_validator("benchmark")
    @classmethod
    def _unique(cls, v: list[Benchmark]) -> list[Benchmark]:
        no_duplicate([b.name for b in v], "benchmark", inside=True)
        return v

    def labels(self) -> list[tuple[str, str, str]]:
        """(label regex, benchmark, group) in the file's order: what parse/lmbench.py takes."""
        return [(rx, b.name, b.group) for b in self.benchmark for rx in b.labels]

    def groups(self) -> dict[str, str]:
        return {b.name: b.group for b in self.benchmark}

    def knows(self, name: str) -> bool:
        """Whether bringup reads the output of a benchmark of this name."""
        return name in self.groups() or CTX_SIZED.fullmatch(name) is not None


def load_table(file: Path | None = None) -> BenchmarkTable:
    f = file or paths.CONFIGS / FILE
    return validate_as(BenchmarkTable, load_toml(f), paths.rel(f))


def labels() -> list[tuple[str, str, str]]:
    """The table of configs/lmbench-benchmarks.toml as parse/lmbench.py takes it."""
    return load_table().labels()
