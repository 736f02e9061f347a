"""configs/lmbench.toml as a typed model: the benchmarks the guest runs, every
benchmark bringup reads the output of (its group and the labels that name it in
lmbench's output: the table parse/lmbench.py is given, labels()), the lmbench source
bringup builds where Debian's binaries are missing, and how a source is built (with
which toolchain and libc)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, Field, ValidationInfo, field_validator, model_validator

from bringup.model.base import Strict, load_toml, located, no_control, no_duplicate, validate_as
from bringup.model.values import not_blank
from bringup.util import paths

Seconds = Annotated[float, Field(gt=0, le=86400, allow_inf_nan=False)]


class Bench(Strict):
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_]+$", max_length=64)]
    group: Annotated[
        str, Field(min_length=1, max_length=80, description="lmbench's own summary group"), AfterValidator(no_control)
    ]
    cmd: Annotated[
        str,
        Field(
            min_length=1,
            max_length=1000,
            pattern=r"^[^\x00-\x1f\x7f]*$",
            description="shell command in the lmbench binary directory; {q} expands to quick_flags in quick mode",
        ),
        not_blank("no command to run"),
    ]
    quick: Annotated[bool, Field(description="part of the quick set")] = True

    timeout: Annotated[Seconds, Field(description="seconds in quick mode (full mode multiplies it)")] = 60.0


PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def _placeholders(v: str, known: tuple[str, ...]) -> str:
    """v with {name} placeholders of `known` only (str.format would fail on any other, mid-build)."""
    for name in PLACEHOLDER.findall(v):
        if name not in known:
            raise ValueError(f"placeholder {{{name}}} is none of {', '.join('{' + k + '}' for k in known)}")
    if re.search(r"[{}]", PLACEHOLDER.sub("", v)):
        raise ValueError("an unmatched '{' or '}'")
    return v


def _os_name(v: str) -> str:
    """lmbench's OS name: the directory bin/<os>/ the build writes, so one path component."""
    _placeholders(v, ("triplet", "arch"))
    if not re.fullmatch(r"[A-Za-z0-9_.+{}-]+", v) or v in (".", ".."):
        raise ValueError("not one directory name (letters, digits, _ . + - and {triplet} or {arch})")
    return v


def _make_arg(v: str) -> str:
    _placeholders(v, ("os", "cc", "tirpc_include", "stubs", "cflags"))
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", v, re.S):
        raise ValueError("expected VAR=value (a make variable assignment; no options such as --eval)")
    if re.search(r"[\x00-\x1f\x7f$`;|&<>]", v):
        raise ValueError("contains a control character or one of $ ` ; | & < >: make or its shell would act on it")
    return v


def _env_words(v: str) -> str:
    """quick_env is `export`ed in the guest's shell: VAR=value words only."""
    for word in v.split():
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=[A-Za-z0-9_.-]*", word):
            raise ValueError(f"{word!r} is not VAR=value (the words are exported in the guest's shell)")
    return v


def _prefixed_tool(v: str) -> str:
    """A toolchain program: {cross_compile}gcc, or a name or absolute path of its own."""
    _placeholders(v, ("cross_compile",))
    if not re.fullmatch(r"[A-Za-z0-9_./+{}-]+", v):
        raise ValueError("not a program name or path (letters, digits, _ . / + - and {cross_compile})")
    return v


Word = Annotated[str, Field(pattern=r"^[A-Za-z0-9_=.,/+-]+$", max_length=200)]


class Toolchain(Strict):
    """A compiler and the libc its static lmbench carries: what decides which kernels the
    programs can run on (Debian's static glibc 2.36 needs 2.6.32 or later)."""

    description: Annotated[str, Field(min_length=1, max_length=400), AfterValidator(no_control)]
    libc: Annotated[str, Field(pattern=r"^[a-z][a-z0-9.+-]*$", max_length=40, description="the libc linked in")]
    cc: Annotated[str, Field(max_length=400), AfterValidator(_prefixed_tool)] = "{cross_compile}gcc"
    strip: Annotated[str, Field(max_length=400), AfterValidator(_prefixed_tool)] = "{cross_compile}strip"
    cflags: Annotated[list[Word], Field(max_length=50, description="{cflags} in make_args")] = []


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


class SourceFile(Strict):
    """The lmbench source bringup builds by default: a tarball found by file name in the
    download directories (BRINGUP_DL_DIR, then the cache's downloads/), used when its
    sha256 is this one or, failing that, when its extracted tree has this git tree id."""

    file: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._+-]*$", max_length=200)]
    sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    tree: Annotated[str, Field(pattern=r"^(git:[0-9a-f]{40})?$")] = ""
    version: Annotated[str, Field(pattern=r"^[0-9][A-Za-z0-9.+~-]*$", max_length=40)]


class SourceBuild(Strict):
    os: Annotated[str, Field(min_length=1, max_length=128), AfterValidator(_os_name)] = "{triplet}"
    make_args: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=2000), AfterValidator(_make_arg)]], Field(min_length=1)
    ]
    timeout: Seconds = 1800.0
    toolchain: Annotated[str, Field(description="the toolchain used unless a caller names another")] = "glibc"
    toolchains: Annotated[dict[Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]*$")], Toolchain], Field(min_length=1)]
    left_out: Annotated[
        dict[Annotated[str, Field(pattern=r"^[a-z_]+$")], Annotated[str, AfterValidator(no_control)]],
        Field(description="programs of lmbench's Makefile that are not built, and why"),
    ] = {}

    @model_validator(mode="after")
    def _known_toolchain(self) -> SourceBuild:
        if self.toolchain not in self.toolchains:
            raise located("toolchain", f"{self.toolchain!r} is none of the toolchains ({', '.join(self.toolchains)})")
        return self


class BenchSet(Strict):
    quick_env: Annotated[
        str,
        Field(pattern=r"^[A-Za-z0-9_=. -]*$", description="VAR=value words exported in quick mode"),
        AfterValidator(_env_words),
    ] = ""
    instruction_clock_env: Annotated[
        str,
        Field(
            pattern=r"^[A-Za-z0-9_=. -]*$",
            description="VAR=value words exported after quick_env on the instruction clock (docs/clock.md): "
            "a longer timing interval averages the timer tick that a short one holds or not",
        ),
        AfterValidator(_env_words),
    ] = ""
    quick_flags: Annotated[str, Field(pattern=r"^[A-Za-z0-9 -]*$")] = ""
    full_timeout_factor: Annotated[float, Field(ge=1, le=1000, allow_inf_nan=False)] = 10.0
    setup: Annotated[str, Field(max_length=2000, pattern=r"^[^\x00-\x1f\x7f']*$")] = ""
    source: SourceFile
    source_build: SourceBuild
    bench: Annotated[list[Bench], Field(min_length=1, max_length=500)]
    benchmark: Annotated[
        list[Benchmark],
        Field(min_length=1, max_length=500, description="every benchmark bringup reads the output of"),
    ]

    @model_validator(mode="before")
    @classmethod
    def _shipped_benchmarks(cls, data: Any) -> Any:
        """A set file without [[benchmark]] tables (one written before they were data, a
        user's own set) reads lmbench's output as configs/lmbench.toml's table does."""
        if isinstance(data, dict) and "benchmark" not in data:
            shipped = load_toml(paths.CONFIGS / "lmbench.toml")
            return {**data, "benchmark": shipped.get("benchmark", [])}
        return data

    @field_validator("bench", "benchmark")
    @classmethod
    def _unique(cls, v: list, info: ValidationInfo) -> list:
        no_duplicate([b.name for b in v], info.field_name or "", inside=True)
        return v

    @model_validator(mode="after")
    def _benches_read(self) -> BenchSet:
        for i, b in enumerate(self.bench):
            if not self.knows(b.name):
                known = sorted(self.groups())
                raise located(
                    f"bench[{i}].name",
                    f"{b.name!r}: not a benchmark bringup reads the output of "
                    f"([[benchmark]]: {', '.join(known[:6])}, ..., lat_ctx_<size>k)",
                )
        return self

    def labels(self) -> list[tuple[str, str, str]]:
        """(label regex, benchmark, group) in the file's order: the table parse/lmbench.py takes."""
        return [(rx, b.name, b.group) for b in self.benchmark for rx in b.labels]

    def groups(self) -> dict[str, str]:
        return {b.name: b.group for b in self.benchmark}

    def knows(self, name: str) -> bool:
        """Whether bringup reads the output of a benchmark of this name."""
        return name in self.groups() or CTX_SIZED.fullmatch(name) is not None


def load_set(file: Path | None = None) -> BenchSet:
    f = file or paths.CONFIGS / "lmbench.toml"
    return validate_as(BenchSet, load_toml(f), paths.rel(f))


def labels() -> list[tuple[str, str, str]]:
    """The benchmarks' labels of configs/lmbench.toml as parse/lmbench.py takes them."""
    return load_set().labels()


PROGRAM = re.compile(r"(?:^|[\s;])\./([A-Za-z0-9_]+)")


def programs(bset: BenchSet) -> list[str]:
    """The lmbench programs the set's commands run (./lat_syscall ...), and hello
    (lat_proc exec runs it): what a source build puts into the ramdisk."""
    return sorted({p for b in bset.bench for p in PROGRAM.findall(b.cmd)} | {"hello"})
