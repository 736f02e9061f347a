"""bringup.rootfs: logs/<board>/rootfs/<name>.json, the ramdisk next to it."""

from __future__ import annotations

from typing import Any, Literal

from bringup.records.base import Bytes, FileName, Id, Name, Part, Record, Sha256, Text


class Busybox(Part):
    source: str
    version: str


class Ext2Image(Part):
    """The same ramdisk as an ext2 image, for kernels without initramfs (2.4's initrd)."""

    file: FileName
    bytes: Bytes
    sha256: Sha256


class LmbenchSource(Part):
    """Where a ramdisk's lmbench came from: Debian's package and its libraries, or
    bringup's build from source (which source, toolchain and libc, its make arguments
    and how many programs went into the ramdisk).  The fields from `origin` on are new
    in bringup.lmbench/6 and bringup.rootfs/4; older records have them null."""

    lmbench: str | None = None
    libraries: list[str] | None = None
    make_args: list[str] | None = None
    binaries: Bytes | None = None
    origin: Literal["debian", "bringup-build"] | None = None
    version: Text | None = None  # Debian's package version, or the source's (3.0-a9)
    source_file: FileName | None = None  # the tarball built (bringup-build)
    source_sha256: Sha256 | None = None  # its sha256 (null for a source tree given as a directory)
    verified: Literal["sha256", "tree"] | None = None  # how configs/lmbench.toml's [source] was checked
    toolchain: Name | None = None  # configs/lmbench.toml [source_build.toolchains.<name>]
    libc: Name | None = None  # the libc the static programs carry
    compiler: Text | None = None  # the compiler's `--version` first line
    build_key: Text | None = None  # the cached build (~/.cache/bringup/userspace/<arch>/lmbench-<key>)
    not_built: list[Name] | None = None  # programs lmbench's Makefile has that the build leaves out (lat_rpc)


class Extra(LmbenchSource):
    """What a caller added to the ramdisk (the footprint run: mem_eat, lmbench, the mode)."""

    mem_eat: bool = False
    mode: Literal["quick", "full", "none"] | None = None
    autorun: bool = False  # the steps run by the ramdisk itself (the instruction clock: nothing typed)


class RootfsRef(Part):
    """The ramdisk a measurement ran on, as boot-timing and footprint records keep it."""

    file: FileName
    sha256: Sha256  # of the .cpio.gz
    inputs_key: Sha256 | None  # Rootfs.inputs_key; None in records made before it existed


def _rootfs_1_to_2(d: dict[str, Any]) -> dict[str, Any]:
    """/2 added inputs_key (unknown for a /1 record)."""
    return {**d, "inputs_key": None}


def _rootfs_2_to_3(d: dict[str, Any]) -> dict[str, Any]:
    """/3 added archive_sha256 (unknown for a /2 record: its ramdisk is compressed again once)."""
    return {**d, "archive_sha256": None}


def _rootfs_3_to_4(d: dict[str, Any]) -> dict[str, Any]:
    """/4 added libc (a /3 ramdisk was Debian's glibc userspace) and ext2 (none before)."""
    return {**d, "libc": "glibc", "ext2": None}


class Rootfs(Record):
    """A ramdisk bringup made: logs/<board>/rootfs/<name>.json beside its <name>.cpio.gz."""

    KIND = "bringup.rootfs"
    VERSION = 4
    MIGRATIONS = {1: _rootfs_1_to_2, 2: _rootfs_2_to_3, 3: _rootfs_3_to_4}

    board: Id
    name: Name
    file: FileName  # the gzip'd newc cpio next to this record
    bytes: Bytes
    sha256: Sha256
    archive_sha256: Sha256 | None  # of the uncompressed cpio: an unchanged ramdisk is not compressed again
    inputs_key: Sha256 | None  # sha256 of what it is made from that is known without building it
    userspace_arch: str
    libc: str  # "glibc" (Debian's static binaries) or "musl <version>" (built against Debian's musl) (/4)
    busybox: Busybox
    ext2: Ext2Image | None  # the ext2 initrd beside the cpio, when a kernel of the board boots one (/4)
    files: list[str]
    extra: Extra

    def ref(self) -> RootfsRef:
        return RootfsRef(file=self.file, sha256=self.sha256, inputs_key=self.inputs_key)
