"""The architecture (configs/arch/*.toml) and era (configs/era/*.toml) files a
board refers to: their file models, validated on load, and the resolved Arch and
Era a build uses (an era's fixes, and which of them a kernel takes).  Adding an
architecture or an era is a data change."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from bringup.model.base import DataError, Strict, load_toml, located, no_duplicate, show, validate_as
from bringup.model.configfiles import check_config_path, config_text_problem, resolve_config
from bringup.model.values import (
    OWN_MAKE_VARS,
    Cmdline,
    ConfigTarget,
    Prefix,
    Text,
    TreePath,
)
from bringup.util import paths


class ArchFile(Strict):
    """configs/arch/<name>.toml"""

    description: Text = ""
    kernel_arch: Annotated[
        str, Field(pattern=r"^[a-z0-9_]+$", max_length=64, description="ARCH= for the kernel's make")
    ]
    srcarch: Annotated[
        str,
        Field(pattern=r"^[a-z0-9_]*$", max_length=64, description="directory under arch/ (defaults to kernel_arch)"),
    ] = ""
    cross_compile: Prefix = Field("", description="default CROSS_COMPILE prefix")
    images: Annotated[
        dict[Annotated[str, Field(pattern=r"^[A-Za-z0-9_.][A-Za-z0-9_.-]*$")], TreePath],
        Field(min_length=1, description="make target -> path of the image in the build tree"),
    ]
    compressed_image: Annotated[str, Field(description="make target whose file is the compressed kernel")]
    uncompressed_image: Annotated[
        TreePath | Literal[""], Field(description="path of the raw binary image, if the arch makes one")
    ] = ""
    dtbs: bool = False
    mkimage_arch: Annotated[str, Field(pattern=r"^[a-z0-9_]*$", max_length=64)] = ""
    toolchain_packages: Annotated[
        dict[Prefix, Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9+.-]+$", max_length=100)]],
        Field(description="CROSS_COMPILE prefix -> Debian package"),
    ] = {}
    debian_arch: Annotated[
        str, Field(pattern=r"^[a-z0-9]*$", max_length=64, description="Debian architecture of a matching userspace")
    ] = ""
    userspace_cross_compile: Prefix = Field(
        "", description="compiler prefix for static userspace tools (mem_eat, busybox from source)"
    )

    @model_validator(mode="after")
    def _compressed_is_an_image(self) -> ArchFile:
        if self.compressed_image not in self.images:
            raise located("compressed_image", f"{self.compressed_image!r} is not a key of 'images'")
        return self


KernelVersion = Annotated[
    str,
    Field(
        pattern=r"^([0-9]+(\.[0-9]+){1,3})?$",
        max_length=32,
        description="a kernel version such as 2.6.32 or 6.12.95 (empty: no bound)",
    ),
]


def version_tuple(v: str) -> tuple[int, ...]:
    """(2, 6, 32, 71) from '2.6.32.71', '2.6.32.71-rc1', '6.12.95+bpo'; () when there is no number."""
    m = re.match(r"^[0-9]+(\.[0-9]+)*", v.strip())
    return tuple(int(x) for x in m.group(0).split(".")) if m else ()


class VersionRange(Strict):
    """Kernel versions from `min` (inclusive) to `below` (exclusive); 2.6.32.71 is inside
    min = "2.6.32", below = "2.6.33"."""

    min: Annotated[KernelVersion, Field(description="first version (inclusive)")] = ""
    below: Annotated[KernelVersion, Field(description="first version no longer included")] = ""

    @model_validator(mode="after")
    def _ordered(self) -> VersionRange:
        if self.min and self.below and version_tuple(self.min) >= version_tuple(self.below):
            raise located("below", f"{self.below!r} is not above min {self.min!r}")
        return self

    def contains(self, version: str) -> bool:
        v = version_tuple(version)
        if not v:
            return not (self.min or self.below)  # an unknown version is inside only an unbounded range
        if self.min and v < version_tuple(self.min):
            return False
        return not (self.below and v >= version_tuple(self.below))


GccMajor = Annotated[int, Field(ge=1, le=999)]


class MajorRange(Strict):
    """gcc major versions from `min` (inclusive) to `below` (exclusive)."""

    min: Annotated[GccMajor | None, Field(description="first gcc major version (inclusive)")] = None
    below: Annotated[GccMajor | None, Field(description="first gcc major version no longer included")] = None

    @model_validator(mode="after")
    def _ordered(self) -> MajorRange:
        if self.min is not None and self.below is not None and self.min >= self.below:
            raise located("below", f"{self.below} is not above min {self.min}")
        return self

    def contains(self, major: int | None) -> bool:
        if major is None:
            return self.min is None and self.below is None
        return (self.min is None or major >= self.min) and (self.below is None or major < self.below)


MakeVarName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=64)]
MakeVarValue = Annotated[str, Field(pattern=r"^[^$`\x00-\x1f\x7f]*$", max_length=1024)]
CcFlag = Annotated[str, Field(pattern=r"^-[A-Za-z0-9_=.,+-]+$", max_length=128)]
FIX_ACTIONS = ("patch", "make_vars", "cc_flags", "fragment")


class EraFix(Strict):
    """One compatibility fix of an era: what old trees need to build with today's tools.
    Exactly one action: a patch, make variables, flags added to CC, or a config fragment."""

    name: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_.+-]*$", max_length=64, description="names the fix")]
    avoids: Annotated[
        Text, Field(min_length=1, max_length=2048, description="the error it avoids (as the build prints it)")
    ]
    unchanged: Annotated[
        Text, Field(min_length=1, max_length=2048, description="why it does not change what is measured")
    ]
    changes: Annotated[
        Text,
        Field(
            max_length=2048,
            description="what it changes in the running kernel, and what that does to the numbers "
            "(empty: nothing, a build-only fix); the report names every fix that changes something",
        ),
    ] = ""
    overrides: Annotated[
        Text,
        Field(
            max_length=2048,
            description="what the tree's authors did not support that this fix makes the build do anyway "
            "(empty: nothing); the report says it beside every number of the kernel",
        ),
    ] = ""
    kernel: Annotated[VersionRange, Field(description="kernel versions it applies to")] = VersionRange()
    gcc: Annotated[MajorRange, Field(description="gcc major versions it applies to")] = MajorRange()
    arch: Annotated[
        list[Annotated[str, Field(pattern=r"^[a-z0-9_]+$")]],
        Field(max_length=32, description="architectures it applies to: ARCH= or arch/ names (empty: all)"),
    ] = []
    patch: Annotated[str, Field(max_length=4096, description="a patch (-p1), relative to configs/era/")] = ""
    make_vars: Annotated[
        dict[MakeVarName, MakeVarValue],
        Field(max_length=16, description="VAR = value for every make (several fixes' values of one VAR are joined)"),
    ] = {}
    cc_flags: Annotated[
        list[CcFlag], Field(max_length=16, description="flags added to CC itself, so every compile and probe sees them")
    ] = []
    fragment: Annotated[
        str, Field(max_length=4096, description="a config fragment, relative to configs/, merged after the kernel's")
    ] = ""

    @field_validator("make_vars")
    @classmethod
    def _make_vars(cls, v: dict[str, str]) -> dict[str, str]:
        for name, value in v.items():
            if name in OWN_MAKE_VARS:
                raise ValueError(f"@{name}@sets {name}, which bringup sets itself (from the board and its arch)")
            bad = sorted(set(value) & set(";|&<>"))
            if bad:
                raise ValueError(
                    f"@{name}@{value!r}: contains {''.join(bad)!r}: the shell of make's recipes would run it"
                )
        return v

    @model_validator(mode="after")
    def _one_action(self) -> EraFix:
        actions = [a for a in FIX_ACTIONS if getattr(self, a)]
        if len(actions) != 1:
            raise located("", f"give exactly one of {', '.join(FIX_ACTIONS)} (got {', '.join(actions) or 'none'})")
        return self

    @property
    def kind(self) -> str:
        return next(a for a in FIX_ACTIONS if getattr(self, a))

    def applies(self, version: str, arch_names: set[str], gcc_major: int | None) -> bool:
        return (
            self.kernel.contains(version)
            and self.gcc.contains(gcc_major)
            and (not self.arch or bool(set(self.arch) & arch_names))
        )


class EraFile(Strict):
    """configs/era/<name>.toml"""

    description: Text = ""
    out_of_tree: Annotated[bool, Field(description="build with O=<dir> (2.6+) or in a private copy (2.4)")]
    config_target: ConfigTarget
    config_fallback: Annotated[
        ConfigTarget, Field(description="used, fed default answers, when the tree lacks config_target")
    ] = ""
    steps: Annotated[
        list[Annotated[str, Field(pattern=r"^(\{image\}|\{dtbs\}|[A-Za-z0-9_.][A-Za-z0-9_.-]*)$")]],
        Field(min_length=1, max_length=20, description="make targets after configuration; {image} and {dtbs} expand"),
    ]
    ramdisk: Annotated[
        Literal["initramfs", "ext2"],
        Field(
            description="how the kernel takes bringup's ramdisk: a gzip'd cpio initramfs (2.6+), or an ext2 image "
            "loaded into a RAM disk and mounted as root (2.4: no initramfs, 128-byte inodes, device nodes on disk)"
        ),
    ] = "initramfs"
    ramdisk_cmdline: Annotated[
        Cmdline,
        Field(description="kernel arguments the era's kernels boot bringup's ramdisk with (2.4: root=/dev/ram0)"),
    ] = ""
    printk_times: Annotated[
        bool,
        Field(
            description="the kernel can stamp its messages (CONFIG_PRINTK_TIME, 2.6.11+); without, every milestone "
            "is timed on the host, from the console's bytes"
        ),
    ] = True
    fixes: Annotated[
        list[EraFix],
        Field(
            max_length=64,
            description="compatibility fixes, each applied when the kernel version, the architecture and the gcc "
            "major version are in its ranges; patches go to bringup's private copy of the tree, never to the source",
        ),
    ] = []

    @model_validator(mode="after")
    def _unique_fix_names(self) -> EraFile:
        no_duplicate([f.name for f in self.fixes], "fixes")
        return self


@dataclass
class Arch:
    name: str
    kernel_arch: str
    srcarch: str
    cross_compile: str
    images: dict[str, str]
    compressed_image: str
    uncompressed_image: str
    dtbs: bool
    mkimage_arch: str
    toolchain_packages: dict[str, str]
    debian_arch: str
    userspace_cross_compile: str = ""
    description: str = ""


@dataclass
class Era:
    name: str
    out_of_tree: bool
    config_target: str
    config_fallback: str
    steps: list[str]
    description: str = ""
    ramdisk: str = "initramfs"
    ramdisk_cmdline: str = ""
    printk_times: bool = True
    fixes: list[EraFix] = field(default_factory=list)
    folder: Path = field(default_factory=lambda: paths.CONFIGS / "era")  # where its patches are

    def fixes_for(self, version: str, arch: Arch, gcc_major: int | None) -> list[EraFix]:
        """The fixes that apply to a kernel version built for `arch` with this gcc major version."""
        names = {arch.name, arch.kernel_arch, arch.srcarch}
        return [f for f in self.fixes if f.applies(version, names, gcc_major)]

    def patch_path(self, fix: EraFix) -> Path:
        return self.folder / fix.patch

    def fragment_path(self, fix: EraFix) -> Path:
        return resolve_config(fix.fragment, self.folder.parent)  # fragments are relative to configs/


NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")


def _named_file(kind: str, name: str, configs: Path) -> Path:
    folder = configs / kind
    known = sorted(p.stem for p in folder.glob("*.toml"))
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise DataError(f"{show(name)} is not a valid {kind} name (known: {', '.join(known)})")
    f = folder / f"{name}.toml"
    if not f.exists():
        what = "architecture" if kind == "arch" else kind
        raise DataError(f"unknown {what} {name!r} (no {paths.rel(f)}; known: {', '.join(known)})")
    return f


def load_arch(name: str, configs: Path | None = None, file: Path | None = None) -> Arch:
    """configs/arch/<name>.toml (or file, as `bringup validate --kind arch FILE` names it)."""
    f = file or _named_file("arch", name, configs or paths.CONFIGS)
    d = validate_as(ArchFile, load_toml(f), paths.rel(f))
    return Arch(name=name, **{**d.model_dump(), "srcarch": d.srcarch or d.kernel_arch})


def load_era(name: str, configs: Path | None = None, file: Path | None = None) -> Era:
    """configs/era/<name>.toml (or file, as `bringup validate --kind era FILE` names it: its
    patches then relative to its folder, its fragments to the folder's parent)."""
    configs = configs or paths.CONFIGS
    f = file or _named_file("era", name, configs)
    where = paths.rel(f)
    d = validate_as(EraFile, load_toml(f), where)
    for i, fix in enumerate(d.fixes):
        for key, under in (("patch", "configs/era/"), ("fragment", "configs/")):
            value = getattr(fix, key)
            if value.startswith(("/", "~")):  # a fix is project data: it lives in the tree
                raise DataError(
                    f"{where}: field 'fixes[{i}].{key}': {value!r}: an absolute path; give it relative to {under}"
                )
        if fix.patch:
            why = check_config_path(fix.patch, f.parent)
            if why:
                why = why.replace("configs/", "configs/era/")
                raise DataError(f"{where}: field 'fixes[{i}].patch': {fix.patch!r}: {why}")
        if fix.fragment:
            why = check_config_path(fix.fragment, configs) or config_text_problem(resolve_config(fix.fragment, configs))
            if why:
                raise DataError(f"{where}: field 'fixes[{i}].fragment': {fix.fragment!r}: {why}")
    return Era(name=name, **{**d.model_dump(), "fixes": list(d.fixes)}, folder=f.parent)


def known_eras(configs: Path | None = None) -> tuple[str, ...]:
    configs = configs or paths.CONFIGS
    return tuple(sorted(p.stem for p in (configs / "era").glob("*.toml")))
