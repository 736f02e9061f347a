"""bringup.build: logs/<board>/<kernel>/build.json (the last good build) and
build-failed.json (the last failed or interrupted one)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field

from bringup.records.base import (
    Bytes,
    Count,
    FileName,
    Id,
    Name,
    Part,
    Record,
    RelPath,
    Seconds,
    Sha256,
    Text,
    Timestamp,
    migrations,
)


class SourceBase(Part):
    tree: str  # where it was built from (in the cache)
    private_copy: str | None = None  # the copy make ran in (era fixes' patched copy, 2.4's build copy) (/2)


class FileUsed(SourceBase):
    """A tarball source (/2): which file was used, and how it was accepted."""

    file: str | None = None  # the file the tree was extracted from
    verified: Literal["sha256", "tree", "none"] | None = None  # the board's sha256, the tree id, or nothing
    origin: Literal["download-dir", "cache", "download", "tarball"] | None = None
    tree_id: str | None = None  # the board's source.tree (git:<40 hex>), when given
    expected_sha256: Sha256 | None = None  # the board's sha256 when the file used has another


class DebianSource(SourceBase):
    kind: Literal["debian"]
    package: str
    suite: str
    package_version: str


class UrlSource(FileUsed):
    kind: Literal["url"]
    url: str
    sha256: Sha256


class TarballSource(FileUsed):
    kind: Literal["tarball"]
    tarball: str
    sha256: Sha256


class PathSource(SourceBase):
    kind: Literal["path"]
    path: str


class Fix(Part):
    """An era compatibility fix applied to this build (configs/era/<era>.toml, docs/eras.md)."""

    name: Name
    kind: Literal["patch", "make_vars", "cc_flags", "fragment"]
    sha256: Sha256
    patch: str | None = None
    fragment: str | None = None
    make_vars: dict[str, str] | None = None
    cc_flags: list[str] | None = None
    avoids: Text
    unchanged: Text
    changes: Text | None = None  # what it changes in the running kernel; None: a build-only fix (/3)
    overrides: Text | None = None  # what the tree's authors did not support that it makes the build do (/4)


Source = Annotated[DebianSource | UrlSource | TarballSource | PathSource, Field(discriminator="kind")]


class Toolchain(Part):
    cross_compile: str
    gcc: str
    version: str
    ccache: bool


class Dropped(Part):
    """A fragment symbol the config step did not keep."""

    file: str
    symbol: str
    wanted: str
    got: str  # 'n' when absent
    step: str


class Config(Part):
    defconfig: str
    config_file: str  # '' when the kernel uses a defconfig
    fragments: list[str]
    sha256: Sha256  # of the final .config
    dropped: list[Dropped]


class StepTime(Part):
    name: str
    real: Seconds
    user: Seconds
    sys: Seconds


class Time(Part):
    real: Seconds
    user: Seconds
    sys: Seconds
    clock: str
    steps: list[StepTime]


class CcacheSettings(Part):
    """What ccache ran with (/3): the settings that decide its cost on a miss and its hits."""

    version: str  # `ccache --version`
    depend_mode: bool
    direct_mode: bool
    compression: bool
    compression_level: int
    compiler_check: str
    cache_dir: str
    filesystem: str | None  # the cache directory's file system type (/proc/mounts)
    same_filesystem_as_build: bool | None


class Ccache(Part):
    hits: Count
    misses: Count
    hit_rate: Annotated[float, Field(ge=0, le=1)] | None
    settings: CcacheSettings | None = None  # (/3) None in older records


class Berkeley(Part):
    """GNU size's Berkeley columns of vmlinux."""

    text: Bytes
    data: Bytes
    bss: Bytes
    dec: Bytes


class ImageFile(Part):
    file: FileName
    bytes: Bytes


Group = Literal["text", "rodata", "data", "bss", "init", "other"]


class Sizes(Part):
    sections: dict[str, Bytes]
    groups: dict[Group, Bytes]
    berkeley: Berkeley
    vmlinux_bytes: Bytes
    compressed_image: ImageFile
    boot_image: ImageFile
    uncompressed_image: ImageFile | None
    uimage: ImageFile | None


class Host(Part):
    nproc: Annotated[int, Field(ge=1)] | None
    bringup_root: str


class Build(Record):
    """A good build: build.json."""

    KIND = "bringup.build"
    VERSION = 4
    MIGRATIONS = migrations(range(1, 4))

    status: Literal["ok"]
    board: Id
    kernel: Id
    description: str
    key: Sha256 | None  # None: a local tree outside git, always rebuilt
    started: Timestamp
    finished: Timestamp
    kernelrelease: Name
    version: str
    era: str
    arch: str
    kernel_arch: str
    source: Source
    fixes: list[Fix] = []  # era compatibility fixes applied, in order (/2)
    toolchain: Toolchain
    config: Config
    time: Time
    jobs: Annotated[int, Field(ge=1)]
    ccache: Ccache | None
    kbuild_commands: Count | None = None  # kbuild command lines ("  CC  x.o") the build ran (/3)
    sizes: Sizes
    warnings: Count
    errors: Count
    artifacts: dict[Name, RelPath]  # name -> path relative to the record's directory
    commands: list[Text]
    reproduce: str
    build_dir: str
    log: RelPath
    host: Host

    @classmethod
    def accepts(cls, data: Mapping[str, Any]) -> bool:
        return data.get("status") == "ok"

    def overrides(self) -> bool:
        """Built outside what the tree's authors supported (an era fix with `overrides`)."""
        return any(f.overrides for f in self.fixes)


class FailedStep(Part):
    name: str
    exit: int | None  # None: the step never ended (interrupted)
    real: Seconds


class BuildFailure(Record):
    """A failed or interrupted build: build-failed.json (same kind as build.json)."""

    KIND = "bringup.build"
    VERSION = 4
    MIGRATIONS = migrations(range(1, 4))

    status: Literal["fail", "interrupted"]
    board: Id
    kernel: Id
    key: Sha256 | None
    started: Timestamp
    finished: Timestamp
    error: Text | None
    steps: list[FailedStep]
    commands: list[Text]
    log: RelPath

    @classmethod
    def accepts(cls, data: Mapping[str, Any]) -> bool:
        return data.get("status") != "ok"
