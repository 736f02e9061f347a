"""The board model: boards/<name>.toml, validated on load.

Also the architecture (configs/arch/*.toml) and era (configs/era/*.toml)
definitions a board refers to.  Adding a board, an architecture or an era is a
data change; nothing here knows about a particular one.

Two layers:
  *File models (pydantic) describe the files as written: every field typed,
  with ranges and what each value may mean (a make variable without `$(`, a
  command line without control characters, ...).  Their JSON Schema is
  published (docs/board-schema.json) so editors check board files as they are
  typed.
  Board / Kernel are the resolved result: the arch and era files loaded, the
  toolchain prefix chosen, the paths checked.
"""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from bringup.model.base import CONTROL, DataError, Strict, first_duplicate, load_toml, located, show, validate_as
from bringup.model.milestones import check_overrides
from bringup.util import paths
from bringup.util.aptprivate import SUITES

MAX_ADDRESS = 2**64 - 1


# --- value types: what a field may mean ------------------------------------


ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._+-]*$"  # letters, digits and . _ + -
PREFIX_PATTERN = r"^([A-Za-z0-9_./+][A-Za-z0-9_./+-]*)?$"  # a CROSS_COMPILE prefix: a path, no shell, no option
RESERVED_IDS = ("rootfs", "report")  # directories of logs/<board>/ that are not kernels'
BOARD_FILE_SUFFIXES = (".json", ".log", ".lock", ".tmp", ".part")  # files of logs/<board>/ (boot-timing.json)


def _address(v: str | int) -> str:
    """A hex address; an integer is written as 0x... (U-Boot reads every number as hex)."""
    if isinstance(v, str):
        if len(v) > 18:  # 0x and 16 hex digits (2^64-1): U-Boot's commands carry it as typed
            raise ValueError(f"{len(v)} characters: an address is at most 0x and 16 hex digits")
        if not re.fullmatch(r"0[xX][0-9a-fA-F]+|[0-9a-fA-F]+", v):
            raise ValueError("not a hex address like 0x40008000")
        n = int(v, 16)
    else:
        n = v
    if not 0 <= n <= MAX_ADDRESS:
        raise ValueError("outside 0 .. 2^64-1")
    return v if isinstance(v, str) else hex(v)


Address = Annotated[str | int, AfterValidator(_address), Field(description="a hex address like 0x42000000")]

_CONTROL = CONTROL  # C0, C1, bidi overrides (model/base.py)


def _cmdline(v: str) -> str:
    if _CONTROL.search(v):
        raise ValueError("contains a control character (a newline would end U-Boot's setenv and run a command)")
    bad = sorted(set(v) & set(";$`\\'"))
    if bad:
        raise ValueError(
            f"contains {''.join(bad)!r}: U-Boot's shell would run or expand it (bootargs is sent as a U-Boot command, "
            "single-quoted)"
        )
    return v


def _not_console(v: str) -> str:
    """console= comes from the board's `console` field, first; another one after it would become
    /dev/console, and the boot's userspace would speak on a console bringup does not read."""
    if re.search(r"(^|\s)console=", v):
        raise ValueError(
            "sets console=, which bringup sets from the board's 'console' field (a second console= "
            "moves /dev/console away from the console bringup reads)"
        )
    return v


Cmdline = Annotated[str, Field(max_length=2048), AfterValidator(_cmdline), AfterValidator(_not_console)]


def _one_argument(v: str) -> str:
    """console= and earlycon= take one word: a space would start another kernel argument."""
    if re.search(r"\s", v):
        raise ValueError("contains a space: one kernel argument's value (a space would start another argument)")
    return v


OneArgument = Annotated[str, Field(max_length=256), AfterValidator(_cmdline), AfterValidator(_one_argument)]


def _console(v: str) -> str:
    if not v:
        raise ValueError("empty: the kernel would have no console to time (give e.g. ttyS0,115200)")
    return v


# make variables bringup sets itself: a make_arg naming one would build another
# architecture, another toolchain, or into another directory (O=/etc) than the record says
OWN_MAKE_VARS = ("ARCH", "CROSS_COMPILE", "CC", "O", "KBUILD_OUTPUT", "SHELL", "MAKEFLAGS")


def _make_arg(v: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", v, re.S):
        raise ValueError("expected VAR=value (a make variable assignment; no options such as --eval)")
    if _CONTROL.search(v):
        raise ValueError("contains a control character")
    if "$" in v or "`" in v:
        raise ValueError("contains '$' or '`': make would expand it (e.g. $(shell ...) runs a command)")
    bad = sorted(set(v) & set(";|&<>"))
    if bad:
        raise ValueError(f"contains {''.join(bad)!r}: the shell of make's recipes would run it (e.g. CC=gcc; reboot)")
    var = v.partition("=")[0]
    if var in OWN_MAKE_VARS:
        raise ValueError(f"sets {var}, which bringup sets itself (use the board's arch, cross_compile or era)")
    return v


MakeArg = Annotated[str, Field(max_length=1024), AfterValidator(_make_arg)]
ConfigTarget = Annotated[
    str,
    Field(
        pattern=r"^([A-Za-z0-9][A-Za-z0-9_.-]*config)?$",
        max_length=64,
        description="a make config target such as tinyconfig, allnoconfig or versatile_defconfig",
    ),
]


def prefix_problem(v: str) -> str | None:
    """Why v cannot be a CROSS_COMPILE prefix (what comes before `gcc`: arm-linux-gnueabihf-, or an
    absolute /opt/eldk/usr/bin/ppc_8xx-), or None; '' is the host's own gcc."""
    if not v:
        return None
    if len(v) > 256:
        return f"{len(v)} characters: a compiler prefix is at most 256"
    if not re.fullmatch(PREFIX_PATTERN, v):
        return "not a compiler prefix (letters, digits and _ . / + -, not starting with '-')"
    if {".", ".."} & set(v.split("/")[:-1]) or v.split("/")[-1] in (".", ".."):
        return "a path with '.' or '..' in it: give the toolchain's directory as an absolute path"
    if "/" in v and not v.startswith("/"):
        return (
            "a relative path (make runs in the kernel tree, not here): give an absolute path such as "
            "/opt/eldk/usr/bin/ppc_8xx- or a prefix found on PATH"
        )
    if not v.endswith("-"):
        return (
            "does not end in '-': a prefix is what comes before gcc (arm-linux-gnueabihf- for arm-linux-gnueabihf-gcc)"
        )
    return None


def _prefix(v: str) -> str:
    why = prefix_problem(v)
    if why:
        raise ValueError(why)
    return v


Prefix = Annotated[
    str,
    Field(
        pattern=PREFIX_PATTERN,
        max_length=256,
        description="a compiler prefix such as arm-linux-gnueabihf- or /opt/eldk/usr/bin/ppc_8xx- "
        "(ends in '-'; no leading '-': make would read an option; a path is absolute)",
    ),
    AfterValidator(_prefix),
]
Argv = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=4096, pattern=r"^[^\x00-\x1f\x7f]*$")]], Field(max_length=256)
]
RelPath = Annotated[str, Field(min_length=1, max_length=4096)]


def _tree_path(v: str) -> str:
    """A path inside the kernel's build tree (an image's): relative, never leaving it."""
    if re.search(r"[\x00-\x1f\x7f\\]", v):
        raise ValueError("contains a control character or a backslash: not a path in the build tree")
    if v.startswith("/"):
        raise ValueError("an absolute path: give the image's path inside the kernel's build tree")
    if ".." in v.split("/"):
        raise ValueError("leaves the kernel's build tree ('..')")
    return v


TreePath = Annotated[str, Field(min_length=1, max_length=4096), AfterValidator(_tree_path)]


def _no_control(v: str) -> str:
    if _CONTROL.search(v):
        raise ValueError("contains a control character (a newline, a tab or a terminal escape)")
    return v


Text = Annotated[str, Field(max_length=4096), AfterValidator(_no_control)]


def _ipv4_or_empty(v: str) -> str:
    if v:
        try:
            ipaddress.IPv4Address(v)
        except ValueError:
            raise ValueError("not an IPv4 address like 192.168.1.10") from None
    return v


IPv4 = Annotated[str, AfterValidator(_ipv4_or_empty)]
Port = Annotated[int, Field(ge=0, le=65535)]


# --- architecture and era files -------------------------------------------


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
        names = [f.name for f in self.fixes]
        for i, n in enumerate(names):
            if n in names[:i]:
                raise located(f"fixes[{i}].name", f"{n!r} is listed twice")
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


# --- the board file -------------------------------------------------------


class SourceSpec(Strict):
    """Exactly one of debian, url, tarball, path."""

    debian: Annotated[
        str,
        Field(pattern=r"^[a-z0-9][a-z0-9.+-]+$", max_length=100, description="Debian package, e.g. linux-source-6.1"),
    ] = ""
    suite: Literal[tuple(SUITES)] | Literal[""] = Field("", description="Debian suite for 'debian'")  # type: ignore[valid-type]
    url: Annotated[
        str, Field(pattern=r"^https?://[^\s]+$", max_length=2048, description="tarball URL (http or https)")
    ] = ""
    tarball: Annotated[str, Field(max_length=4096, description="local tarball path")] = ""
    path: Annotated[str, Field(max_length=4096, description="local kernel tree")] = ""
    sha256: Annotated[str, Field(pattern=r"^([0-9a-fA-F]{64})?$", description="sha256 of the tarball")] = ""
    tree: Annotated[
        str,
        Field(
            pattern=r"^(git:[0-9a-fA-F]{40})?$",
            description="git tree id of the extracted tree, git:<40 hex> (what `git add -A -f && git write-tree` "
            "prints inside it); with url or tarball: a file whose sha256 differs (the same release archived or "
            "compressed otherwise) is used only when its tree has this id",
        ),
    ] = ""
    version: Annotated[
        str,
        Field(
            pattern=r"^([0-9]+(\.[0-9]+)*[A-Za-z0-9.+~-]*)?$",
            max_length=64,
            description="kernel version, for records and eras",
        ),
    ] = ""

    @model_validator(mode="after")
    def _one_kind(self) -> SourceSpec:
        kinds = [k for k in ("debian", "url", "tarball", "path") if getattr(self, k)]
        if len(kinds) != 1:
            raise located("", f"give exactly one of debian, url, tarball, path (got {', '.join(kinds) or 'none'})")
        if kinds[0] == "debian" and not self.suite:
            raise located("suite", "missing (required with 'debian'; one of " + ", ".join(SUITES) + ")")
        if self.tree and kinds[0] not in ("url", "tarball"):
            raise located("tree", f"only with url or tarball (this source is {kinds[0]!r})")
        if kinds[0] == "url" and not self.sha256:
            raise located(
                "sha256",
                "missing (required with 'url'; take it from the sha256sums file published next to the tarball)",
            )
        return self

    @property
    def kind(self) -> str:
        return next(k for k in ("debian", "url", "tarball", "path") if getattr(self, k))


class KernelSpec(Strict):
    id: Annotated[
        str,
        Field(pattern=ID_PATTERN, max_length=64, description="names logs/<board>/<id>/ (letters, digits and . _ + -)"),
    ]
    description: Text = ""
    source: Annotated[SourceSpec, Field(description="exactly one of debian, url, tarball, path")]

    @field_validator("id")
    @classmethod
    def _not_reserved(cls, v: str) -> str:
        if v in RESERVED_IDS:
            raise ValueError(f"logs/<board>/{v}/ holds the board's {v}, not a kernel's records; choose another id")
        if v.endswith(BOARD_FILE_SUFFIXES):
            raise ValueError(
                f"ends in {v[v.rindex('.') :]!r}: logs/<board>/ holds the board's own files of that kind "
                "(boot-timing.json); a kernel's directory would take its name"
            )
        return v

    defconfig: Annotated[ConfigTarget, Field(description="make target that writes the base .config")] = ""
    config_file: Annotated[str, Field(max_length=4096, description="a complete .config, relative to configs/")] = ""
    fragments: Annotated[list[RelPath], Field(max_length=64, description="config fragments, relative to configs/")] = []
    era: Annotated[
        str, Field(max_length=64, description="build recipe: a file under configs/era/ ('2.4' or '2.6+')")
    ] = "2.6+"
    arch: Annotated[str, Field(max_length=64, description="override the board's arch")] = ""
    cross_compile: Prefix | None = Field(None, description="override the board's CROSS_COMPILE")
    make_args: Annotated[list[MakeArg], Field(max_length=64, description="extra VAR=value for make")] = []
    cmdline: Annotated[Cmdline, Field(description="extra kernel command line")] = ""
    dtb: Annotated[
        str | None,
        Field(
            pattern=r"^([A-Za-z0-9_.+-]+\.dtb)?$",
            description="override the board's image.dtb for this kernel; '' for none (a kernel from before "
            "device trees, booted with the machine id and ATAGs)",
        ),
    ] = None

    @model_validator(mode="after")
    def _has_config(self) -> KernelSpec:
        if not self.defconfig and not self.config_file:
            raise located("defconfig", "give a defconfig or a config_file")
        for j, frag in enumerate(self.fragments):
            if frag in self.fragments[:j]:
                first = self.fragments.index(frag)
                raise located(f"fragments[{j}]", f"{frag!r} is listed twice (first as fragments[{first}])")
        return self


class ImageSpec(Strict):
    target: Annotated[
        str,
        Field(
            pattern=r"^[A-Za-z0-9_.][A-Za-z0-9_.-]*$",
            description="make target for the boot image (zImage, bzImage, uImage)",
        ),
    ]
    uimage: Annotated[bool, Field(description="wrap the image with mkimage for U-Boot")] = False
    load_address: Address | Literal[""] = ""
    entry_point: Address | Literal[""] = ""
    dtb: Annotated[
        str,
        Field(pattern=r"^([A-Za-z0-9_.+-]+\.dtb)?$", description="device tree blob name (e.g. vexpress-v2p-ca9.dtb)"),
    ] = ""


# QEMU options bringup gives itself (targets/qemu.py): qemu.args repeating one would override what
# the board file and the records say (-m 4096 against memory_mb = 512), or the console bringup reads
QEMU_OWN_OPTIONS = (
    "M", "machine", "cpu", "m", "smp", "display", "monitor", "nodefaults", "serial",
    "kernel", "initrd", "dtb", "append", "bios", "icount", "rtc", "seed",
)  # fmt: skip


# QEMU options that stop or detach the guest bringup boots and reads
QEMU_STOPPING_OPTIONS = {
    "S": "wait, CPU stopped, for a monitor's 'cont'",
    "daemonize": "detach from bringup into the background",
    "incoming": "wait for a migration stream",
    "nographic": "take the console to its standard input and output",
}


class QemuSpec(Strict):
    binary: Annotated[str, Field(pattern=r"^[A-Za-z0-9_./+-]+$", max_length=4096)]
    machine: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.,=+-]+$", max_length=256)]
    cpu: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.,=+-]*$", max_length=256)] = ""
    smp: Annotated[int, Field(ge=1, le=64)] = 1
    args: Annotated[Argv, Field(description="extra QEMU arguments")] = []
    net_device: Annotated[
        str, Field(pattern=r"^[A-Za-z0-9_.,=-]*$", max_length=256, description="QEMU NIC model for user networking")
    ] = ""
    disk_device: Annotated[
        str,
        Field(
            pattern=r"^[A-Za-z0-9_.-]*$",
            max_length=64,
            description="QEMU device that attaches the disk workloads' ext4 image (virtio-blk-device on "
            "virtio-mmio, virtio-blk-pci on PCI); empty: the board has no disk",
        ),
    ] = ""
    clock: Annotated[
        Literal["host", "instructions"],
        Field(
            description="what measures time: 'instructions' (QEMU icount: guest time advances by executed "
            "instructions, 2^icount_shift ns each, and jumps over idle time; deterministic, docs/clock.md) or "
            "'host' (the guest runs as fast as the host lets it; noisy, measured in rounds)"
        ),
    ] = "host"
    icount_shift: Annotated[
        int,
        Field(
            ge=0,
            le=10,
            description="instruction clock: 2^icount_shift ns per instruction (3: 8 ns, 125 MIPS); "
            "choose it to approximate the real CPU's instruction rate",
        ),
    ] = 3

    @field_validator("binary")
    @classmethod
    def _command(cls, v: str) -> str:
        if v.startswith("-"):
            raise ValueError("starts with '-': not a command")
        if "/" in v and not v.startswith("/"):
            raise ValueError(
                "a relative path (it would depend on the directory bringup runs in): give a command on PATH "
                "(qemu-system-arm) or an absolute path"
            )
        if ".." in v.split("/"):
            raise ValueError("a path with '..': give the absolute path of the QEMU binary")
        return v

    @model_validator(mode="after")
    def _icount_without_kvm(self) -> QemuSpec:
        if self.clock == "instructions":
            for i, arg in enumerate(self.args):
                nxt = self.args[i + 1] if i + 1 < len(self.args) else ""
                if arg in ("-enable-kvm", "--enable-kvm") or (arg in ("-accel", "--accel") and nxt.startswith("kvm")):
                    raise located(
                        f"args[{i}]",
                        f'{arg!r}: QEMU\'s instruction counter (clock = "instructions") runs under TCG only; '
                        'drop KVM or set clock = "host"',
                    )
        return self

    @field_validator("args")
    @classmethod
    def _not_own_options(cls, v: list[str]) -> list[str]:
        for i, arg in enumerate(v):
            name = arg.lstrip("-").partition("=")[0]
            if arg.startswith("-") and name in QEMU_STOPPING_OPTIONS:
                raise ValueError(
                    f"@[{i}]@{arg!r}: QEMU would {QEMU_STOPPING_OPTIONS[name]}, and the boot bringup watches would "
                    "never come"
                )
            if arg.startswith("-") and name in QEMU_OWN_OPTIONS:
                raise ValueError(
                    f"@[{i}]@{arg!r}: an option bringup gives QEMU itself or keeps for the instruction clock (from "
                    "memory_mb, qemu.machine, qemu.cpu, qemu.smp, qemu.clock, the console and the boot files); "
                    "set those fields instead"
                )
        return v


class UbootSpec(Strict):
    binary: Annotated[Text, Field(min_length=1, max_length=4096, description="U-Boot image given to QEMU as -bios")]
    kernel_addr: Address
    initrd_addr: Address
    fdt_addr: Annotated[
        Address, Field(description="where the device tree blob is loaded when the board boots with one")
    ] = "0x48000000"
    fdt: Annotated[
        str,
        Field(
            pattern=r"^(\$\{[A-Za-z_]+\}|0[xX][0-9a-fA-F]+|-)?$",
            description="fdt address argument of the boot command (used when no dtb is loaded)",
        ),
    ] = "${fdtcontroladdr}"
    prompt: Annotated[
        str, Field(min_length=1, max_length=64, pattern=r"^[^\x00-\x1f\x7f]+$", description="U-Boot's prompt")
    ] = "=> "
    boot_command: Literal["bootm", "bootz", "booti"] = "bootm"
    interrupt: Annotated[
        str,
        Field(
            min_length=1,
            max_length=32,
            description='what stops autoboot (a key, or CONFIG_AUTOBOOT_STOP_STR such as "\\u0003" or "stop"); '
            "sent again every interrupt_interval seconds until the prompt answers",
        ),
    ] = " "
    interrupt_interval: Annotated[
        float, Field(gt=0, le=5, description="seconds between two sends of the interrupt string")
    ] = 0.1

    @field_validator("prompt")
    @classmethod
    def _visible_prompt(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("only spaces: every line with a space would look like U-Boot's prompt")
        return v

    @model_validator(mode="after")
    def _distinct_addresses(self) -> UbootSpec:
        addrs = [("kernel_addr", self.kernel_addr), ("initrd_addr", self.initrd_addr), ("fdt_addr", self.fdt_addr)]
        for i, (name, a) in enumerate(addrs):
            for other, b in addrs[:i]:
                if int(str(a), 16) == int(str(b), 16):
                    raise located(name, f"{a!r}: the same address as {other}: one file would overwrite the other")
        return self


class SerialSpec(Strict):
    port: Annotated[
        str,
        Field(
            pattern=r"^(/dev/\S+|(socket|rfc2217)://\S+:\d+)$",
            max_length=4096,
            description="/dev/ttyUSB0, socket://host:port or rfc2217://host:port",
        ),
    ]
    baud: Annotated[int, Field(ge=50, le=4_000_000, description="for local serial devices")] = 115200

    @field_validator("port")
    @classmethod
    def _host_and_port(cls, v: str) -> str:
        if v.startswith("/dev/"):
            if ".." in v.split("/"):
                raise ValueError("a device path with '..' leaves /dev/")
            return v
        host, _, port = v.partition("://")[2].rpartition(":")
        if not (
            re.fullmatch(
                r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*",
                host,
            )
            or re.fullmatch(r"\[[0-9A-Fa-f:.]+\]", host)
        ):
            raise ValueError(f"host {host!r}: not a host name or address (socket://host:port)")
        if not (len(port) <= 5 and 1 <= int(port) <= 65535):
            raise ValueError(f"port {port}: a TCP port is 1 to 65535")
        return v


def _host_dir(v: str) -> str:
    if _CONTROL.search(v):
        raise ValueError("contains a control character")
    if v and not v.startswith(("/", "~")):
        raise ValueError("not an absolute path (it would depend on the directory bringup is started from)")
    return v


class TftpSpec(Strict):
    dir: Annotated[
        str,
        AfterValidator(_host_dir),
        Field(
            max_length=4096,
            description="the host's TFTP root (tftpd-hpa's directory); "
            "bringup writes bringup/<board>/<kernel>/ under it (may be empty on a labgrid place "
            "whose TFTP provider says where files go)",
        ),
    ] = ""
    serverip: Annotated[IPv4, Field(description="U-Boot serverip (empty: the one DHCP gives)")] = ""
    ipaddr: Annotated[IPv4, Field(description="U-Boot ipaddr when dhcp = false")] = ""
    dhcp: Annotated[bool, Field(description="run dhcp in U-Boot")] = True


class NfsSpec(Strict):
    server: Annotated[
        Literal["ganesha", "external"],
        Field(description="ganesha: bringup runs NFS-Ganesha for each run; external: your own NFS server"),
    ] = "ganesha"
    bind: Annotated[
        str,
        Field(
            pattern=r"^[A-Za-z0-9_.:-]+$",
            max_length=64,
            description="address (or interface name, e.g. eth1) Ganesha listens on: loopback for QEMU (the guest "
            "reaches it as 10.0.2.2); on a bench, the host's interface on the board's network",
        ),
    ] = "127.0.0.1"
    address: Annotated[
        IPv4,
        Field(
            description="the NFS server's address as the board sees it; empty: the target's own idea "
            "(QEMU: 10.0.2.2, its user network's host; a bench board: tftp.serverip)"
        ),
    ] = ""
    port: Annotated[
        Port,
        Field(
            description="Ganesha's port; 0 picks a free one (the kernel is told the port); "
            "an external server: its port, usually 2049"
        ),
    ] = 0
    version: Annotated[
        Literal["3", "4", "4.0", "4.1", "4.2"],
        Field(description="nfsroot vers=; 4 needs no rpcbind (Ganesha here serves v4 only)"),
    ] = "4"
    options: Annotated[str, Field(pattern=r"^[A-Za-z0-9_=,.]*$", description="more nfsroot options")] = "tcp"
    ip: Annotated[
        str,
        Field(
            pattern=r"^[A-Za-z0-9_.:]*$", description="kernel ip= argument (dhcp, or client:server:gw:netmask::dev:off)"
        ),
    ] = "dhcp"
    export_dir: Annotated[
        str,
        AfterValidator(_host_dir),
        Field(
            max_length=4096,
            description="external: the host directory your server exports; "
            "bringup copies each run's rootfs under bringup/<board>/<kernel>/<run>/",
        ),
    ] = ""
    export_path: Annotated[
        str,
        Field(pattern=r"^(/[A-Za-z0-9_./-]*)?$", description="external: the same directory as the server exports it"),
    ] = ""

    @field_validator("export_path")
    @classmethod
    def _plain_export_path(cls, v: str) -> str:
        if {".", ".."} & set(v.split("/")):
            raise ValueError("a path with '.' or '..': give the export as the server names it")
        return v

    @model_validator(mode="after")
    def _external_needs_paths(self) -> NfsSpec:
        if self.server == "external":
            for key in ("export_dir", "export_path"):
                if not getattr(self, key):
                    raise located(key, "required when nfs.server = 'external'")
        return self


PlaceName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_.+][A-Za-z0-9_.+-]*$", max_length=200)]


class LabgridSpec(Strict):
    place: Annotated[
        str,
        Field(
            pattern=r"^([A-Za-z0-9_.+][A-Za-z0-9_.+-]*)?$",
            max_length=200,
            description="the labgrid place the board is (or give `places`; no leading '-': labgrid-client would "
            "read an option)",
        ),
    ] = ""
    places: Annotated[
        list[PlaceName],
        Field(
            max_length=64,
            description="several identical places: the boot rounds of a study are spread over them in "
            "parallel, one worker per place (docs/labgrid.md, 'Several places'); PLACES=a,b overrides",
        ),
    ] = []
    coordinator: Annotated[
        str,
        Field(
            pattern=r"^([A-Za-z0-9_.-]+|\[[0-9A-Fa-f:]+\]):\d+$|^$",
            max_length=300,
            description="the coordinator's HOST:PORT (labgrid 25+, gRPC); empty: $LG_COORDINATOR",
        ),
    ] = ""
    acquire_timeout: Annotated[
        float, Field(ge=0, le=86400, description="seconds to wait for a place someone else holds, then fail")
    ] = 600
    client: Annotated[
        str,
        Field(
            pattern=r"^[A-Za-z0-9_./+-]*$",
            max_length=4096,
            description="the labgrid-client to run; empty: .venv-labgrid/bin/labgrid-client (make deps), "
            "then labgrid-client on PATH",
        ),
    ] = ""
    power_settle: Annotated[float, Field(ge=0, le=60, description="seconds to wait after switching the board off")] = (
        1.0
    )
    watch_interval: Annotated[
        float,
        Field(
            ge=0,
            le=3600,
            description="seconds between two checks, while a boot runs, that the place's resources are "
            "still there (an exporter gone fails the run); 0: no checks",
        ),
    ] = 5.0

    @field_validator("client")
    @classmethod
    def _client_program(cls, v: str) -> str:
        why = command_path_problem(v) if v else None
        if why:
            raise ValueError(why)
        return v

    @field_validator("coordinator")
    @classmethod
    def _coordinator_port(cls, v: str) -> str:
        port = v.rpartition(":")[2]
        if v and not (len(port) <= 5 and 1 <= int(port) <= 65535):
            raise ValueError(f"port {port}: a TCP port is 1 to 65535")
        return v

    @model_validator(mode="after")
    def _one_way_to_name_places(self) -> LabgridSpec:
        if self.place and self.places:
            raise located("places", "give either place or places, not both")
        if not self.place and not self.places:
            raise located("place", "missing: the labgrid place of the board (or places = [...])")
        dup = first_duplicate(self.places)
        if dup is not None:
            raise located("places", f"{dup!r} is listed twice")
        return self

    def names(self) -> list[str]:
        """The places the board's boots run on: [place], or places."""
        return list(self.places) if self.places else [self.place]


def _dev_path(v: str) -> str:
    if v and not re.fullmatch(r"/dev/[A-Za-z0-9_][A-Za-z0-9_./-]*", v):
        raise ValueError("not a device path like /dev/vda or /dev/mmcblk0p3 (letters, digits, _ . / - only)")
    if "/../" in v + "/" or "/./" in v + "/" or "//" in v:
        raise ValueError("a device path without ., .. or empty components")
    return v


class WorkloadsSpec(Strict):
    """What the application workloads use on this board (docs/workloads.md)."""

    disk: Annotated[
        str,
        Field(
            max_length=128,
            description="the block device the disk workloads mount (as the board's kernel names "
            "it: /dev/vda for QEMU's virtio disk, a partition such as /dev/mmcblk0p3 on a real board); "
            "empty: no disk, the disk workloads are not measured",
        ),
        AfterValidator(_dev_path),
    ] = ""
    disk_fs: Annotated[
        Literal["ext4", "ext3", "ext2"],
        Field(description="its filesystem (a real board's partition must already hold one of this type)"),
    ] = "ext4"
    disk_mb: Annotated[
        int | None,
        Field(ge=16, le=65536, description="QEMU: size of the ext4 image bringup makes for each boot (default 256)"),
    ] = None


def command_path_problem(v: str) -> str | None:
    """Why v cannot be the program of a command bringup runs (a name found on PATH, or an
    absolute path), or None: a relative path would depend on the directory bringup runs in."""
    if v.startswith("-"):
        return "starts with '-': not a program"
    if "/" in v and not v.startswith(("/", "~")):
        return (
            "a relative path (it would depend on the directory bringup runs in): give a name on PATH or an "
            "absolute path"
        )
    if ".." in v.split("/"):
        return "a path with '..': give the program's absolute path"
    return None


class PowerSpec(Strict):
    on: Annotated[Argv, Field(description="command that switches the board on (an argument list, no shell)")] = []
    off: Annotated[Argv, Field(description="command that switches it off")] = []
    reset: Annotated[Argv, Field(description="command that resets it (used when there is no 'on')")] = []

    @field_validator("on", "off", "reset")
    @classmethod
    def _program(cls, v: list[str]) -> list[str]:
        why = command_path_problem(v[0]) if v else None
        if why:
            raise ValueError(f"@[0]@{v[0]!r}: {why}")
        return v


class BoardFile(Strict):
    """boards/<name>.toml"""

    name: Annotated[str, Field(pattern=ID_PATTERN, max_length=64, description="must equal the file name without .toml")]
    description: Text = ""
    arch: Annotated[str, Field(max_length=64, description="an architecture under configs/arch/")]
    cross_compile: Prefix | None = Field(None, description="CROSS_COMPILE prefix (default: the arch's)")
    memory_mb: Annotated[
        int, Field(ge=1, le=1048576, description="RAM given to QEMU; the board's RAM for a real board")
    ] = 256
    libc: Annotated[
        Literal["glibc", "musl"],
        Field(
            description="the ramdisk's C library: glibc (Debian's static busybox and lmbench binaries) or musl "
            "(busybox, mem_eat and lmbench built static against Debian's musl: runs on Linux 2.4, where "
            "Debian's glibc cannot; the same userspace for every kernel of the board)"
        ),
    ] = "glibc"
    console: Annotated[OneArgument, AfterValidator(_console), Field(description="kernel console= argument")] = (
        "ttyS0,115200"
    )
    earlycon: Annotated[OneArgument, Field(description="kernel earlycon= argument")] = ""
    cmdline: Annotated[Cmdline, Field(description="extra kernel command line for every kernel")] = ""
    image: Annotated[ImageSpec, Field(description="what the build produces and how it is loaded")]
    qemu: Annotated[QemuSpec | None, Field(description="how QEMU emulates the board (a QEMU board)")] = None
    uboot: Annotated[UbootSpec | None, Field(description="the U-Boot dialogue (boards with boot = 'u-boot')")] = None
    serial: Annotated[SerialSpec | None, Field(description="the console of a real board")] = None
    power: Annotated[
        PowerSpec | None, Field(description="power commands of a real board (argument lists, no shell)")
    ] = None
    tftp: Annotated[TftpSpec | None, Field(description="TFTP for a real board booting through U-Boot")] = None
    labgrid: Annotated[
        LabgridSpec | None,
        Field(description="the board is a labgrid place: console, power and TFTP come from it (docs/labgrid.md)"),
    ] = None
    nfs: Annotated[NfsSpec, Field(description="NFS root (boot-timing --root nfs); the defaults suit QEMU boards")] = (
        NfsSpec()
    )
    boot: Annotated[
        Literal["direct", "u-boot"], Field(description="default boot path: QEMU -kernel/-initrd, or U-Boot with TFTP")
    ] = "direct"
    workloads: Annotated[
        WorkloadsSpec, Field(description="what the application workloads use: the disk of fio and PostMark")
    ] = WorkloadsSpec()
    milestones: Annotated[
        dict[str, Annotated[str, Field(max_length=1000)]],
        Field(description="milestone name -> regex, overriding the defaults of configs/milestones.toml"),
    ] = {}
    kernels: Annotated[
        list[KernelSpec], Field(min_length=1, max_length=32, description="the kernels to build and compare")
    ]

    @model_validator(mode="after")
    def _consistent(self) -> BoardFile:
        if self.boot == "u-boot" and self.uboot is None:
            raise located("uboot", "missing, but boot = 'u-boot'")
        if self.qemu is None and self.serial is None and self.labgrid is None:
            raise located("qemu", "a board needs a [qemu], a [serial] or a [labgrid] table")
        if self.labgrid is not None and (self.qemu is not None or self.serial is not None):
            raise located("labgrid", "a labgrid place brings its own console and power: drop [qemu] and [serial]")
        if self.tftp is not None and not self.tftp.dir and self.labgrid is None:
            raise located("tftp.dir", "required (the host's TFTP root) unless the board is a labgrid place")
        if self.qemu is not None and self.qemu.disk_device and not self.workloads.disk:
            raise located("workloads.disk", "missing: qemu.disk_device attaches a disk; name it as the guest sees it")
        if self.qemu is not None and self.workloads.disk and not self.qemu.disk_device:
            raise located("qemu.disk_device", "missing: QEMU attaches no disk for workloads.disk without it")
        if self.qemu is None and self.workloads.disk_mb is not None:
            raise located("workloads.disk_mb", "only for a QEMU board (a real board's disk is its partition)")
        ids = [k.id for k in self.kernels]
        for i, kid in enumerate(ids):
            if kid in ids[:i]:
                raise located(f"kernels[{i}].id", f"{kid!r} is listed twice")
        return self


@dataclass
class Kernel:
    id: str
    description: str
    source: SourceSpec
    defconfig: str
    config_file: str
    fragments: list[str]
    era: Era
    arch: Arch
    cross_compile: str
    make_args: list[str]
    cmdline: str
    dtb: str = ""  # the device tree blob built and booted ('' = none)

    def config_inputs(self, configs: Path) -> list[Path]:
        files = [self.config_file] if self.config_file else []
        return [resolve_config(f, configs) for f in files + list(self.fragments)]


@dataclass
class Board:
    name: str
    description: str
    file: Path
    arch: Arch
    cross_compile: str
    memory_mb: int
    libc: str
    console: str
    earlycon: str
    cmdline: str
    image: ImageSpec
    qemu: QemuSpec | None
    uboot: UbootSpec | None
    serial: SerialSpec | None
    power: PowerSpec | None
    tftp: TftpSpec | None
    nfs: NfsSpec
    boot: str
    milestones: dict[str, str]
    kernels: list[Kernel] = field(default_factory=list)
    labgrid: LabgridSpec | None = None
    workloads: WorkloadsSpec = field(default_factory=WorkloadsSpec)

    def kernel(self, kid: str) -> Kernel:
        for k in self.kernels:
            if k.id == kid:
                return k
        raise DataError(f"board {self.name}: no kernel {kid!r} (has: {', '.join(k.id for k in self.kernels)})")


def check_boot_path(board: Board, path: str) -> None:
    """Refuse, in one line, a boot path the board cannot take.  'direct' means the
    target loads the kernel itself (QEMU's -kernel); a real board (no [qemu]) would
    boot whatever its flash holds while the records name the kernel we built."""
    if path == "direct" and board.qemu is None:
        raise DataError(
            f"board {board.name}: boot path 'direct' needs a target that loads the kernel itself ([qemu]); "
            f"a real board would boot whatever is in its flash: boot it through U-Boot (--path u-boot)"
        )
    if path == "u-boot" and board.uboot is None:
        raise DataError(f"board {board.name}: no [uboot] table, so it cannot boot through U-Boot")
    if path == "u-boot" and board.serial is not None and board.tftp is not None:
        tftp = paths.expand_user(board.tftp.dir, "tftp.dir")
        if not tftp.is_dir():  # the images would go where the TFTP server does not serve them
            raise DataError(
                f"{paths.rel(board.file)}: field 'tftp.dir': {board.tftp.dir!r}: no such directory "
                "(the TFTP server's root, e.g. /srv/tftp of tftpd-hpa)"
            )
    if path == "u-boot" and board.uboot is not None and board.qemu is not None:
        bios = paths.expand_user(board.uboot.binary, "uboot.binary")
        if not bios.is_file():  # QEMU would stop at its start, after the ramdisk was built
            raise DataError(
                f"{paths.rel(board.file)}: field 'uboot.binary': {board.uboot.binary!r}: no such file "
                "(QEMU loads it as -bios; Debian's u-boot-qemu has the qemu boards' U-Boot)"
            )


def check_root(board: Board, root: str) -> None:
    """Refuse, in one line and before any work, an NFS root the board's [nfs] cannot serve:
    an external server's export directory that is not there (found at the first boot before)."""
    if root == "nfs" and board.nfs.server == "external":
        base = paths.expand_user(board.nfs.export_dir, "nfs.export_dir")
        if not base.is_dir():
            raise DataError(
                f"{paths.rel(board.file)}: field 'nfs.export_dir': {board.nfs.export_dir!r}: no such directory "
                "(the directory your NFS server exports)"
            )


def measure_path(board: Board) -> str:
    """The boot path of a measurement boot (footprint, lmbench): QEMU loads the kernel
    itself; a real board loads the kernel we built through U-Boot (refused without [uboot])."""
    path = "direct" if board.qemu is not None else "u-boot"
    check_boot_path(board, path)
    return path


def resolve_config(name: str, configs: Path) -> Path:
    p = Path(name)
    return p if p.is_absolute() else configs / p


def check_config_path(name: str, configs: Path) -> str | None:
    """Why a config file or fragment name is not acceptable, or None."""
    p = paths.expand_user(name, "config file")
    if p.is_absolute():
        return None if p.is_file() else "no such regular file"
    try:
        full = (configs / p).resolve()
    except (RuntimeError, OSError):  # a symlink loop (RuntimeError before Python 3.13)
        return "a symlink loop"
    if not full.is_relative_to(configs.resolve()):
        return "a relative path must stay inside configs/"
    return None if full.is_file() else "no such file under configs/"


KCONFIG_LINE = re.compile(r"(CONFIG_[A-Za-z0-9_]+=.*|# CONFIG_[A-Za-z0-9_]+ is not set|#.*)")
MAX_CONFIG = 4 * 1024 * 1024  # a .config or fragment larger than this is not one


def config_text_problem(p: Path) -> str | None:
    """Why the file p is no Kconfig text (a .config or a fragment), or None: what is neither
    CONFIG_X=value, '# CONFIG_X is not set', a comment nor blank was silently dropped (a
    fragment that is /etc/passwd merged as an empty one)."""
    try:
        size = p.stat().st_size
        if size > MAX_CONFIG:
            return f"{size} bytes: too large for a config (at most {MAX_CONFIG})"
        data = p.read_bytes()
    except OSError as e:
        return f"cannot read it: {e.strerror}"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return f"not UTF-8 text (byte {e.start}), so no config"
    for i, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if s and not KCONFIG_LINE.fullmatch(s):
            return f"line {i}: {show(line)}: not a Kconfig line (CONFIG_<NAME>=<value>, '# CONFIG_<NAME> is not set')"
    return None


def tarball_problem(p: Path) -> str | None:
    """Why the file p is no tar archive (plain, gz, bz2 or xz), or None; only its first member is
    read. A file that is none was refused when the build extracted it, after the kernels before it."""
    import lzma
    import tarfile
    import zlib

    try:
        with tarfile.open(p, mode="r:*") as tf:
            if tf.next() is None:
                return "an empty tar archive"
    except tarfile.ReadError:
        return "not a tar archive (plain, gzip, bzip2 or xz)"
    except (tarfile.TarError, EOFError, lzma.LZMAError, zlib.error) as e:
        return f"a damaged or truncated tar archive ({type(e).__name__})"
    except OSError as e:
        return f"cannot read it: {e.strerror or e}"
    return None


def board_file(name_or_path: str, boards: Path | None = None) -> Path:
    boards = boards or paths.BOARDS
    if name_or_path.endswith(".toml") or "/" in name_or_path:
        return Path(name_or_path)
    if not NAME_RE.match(name_or_path):
        raise DataError(f"{show(name_or_path)} is not a board name (letters, digits and . _ + - only)")
    return boards / f"{name_or_path}.toml"


def list_boards(boards: Path | None = None) -> list[str]:
    boards = boards or paths.BOARDS
    return sorted(p.stem for p in boards.glob("*.toml"))


def load_board(name_or_path: str, boards: Path | None = None, configs: Path | None = None) -> Board:
    configs = configs or paths.CONFIGS
    f = board_file(name_or_path, boards)
    if not f.exists() and not f.is_symlink():
        raise DataError(
            f"unknown board {name_or_path!r} (no {paths.rel(f)}; known: {', '.join(list_boards(boards)) or 'none'})"
        )
    where = paths.rel(f)
    d = validate_as(BoardFile, load_toml(f, "board file"), where)
    if d.name != f.stem:
        raise DataError(f"{where}: field 'name': {d.name!r} does not match the file name {f.stem!r}")
    try:
        arch = load_arch(d.arch, configs)
    except DataError as e:
        raise DataError(f"{where}: field 'arch': {e}") from None
    if d.image.target not in arch.images:
        raise DataError(
            f"{where}: field 'image.target': {d.image.target!r} is not an image of arch {arch.name} "
            f"({', '.join(arch.images)})"
        )
    check_overrides(d.milestones, where)
    board_cc = d.cross_compile if d.cross_compile is not None else arch.cross_compile
    kernels = [_kernel(k, i, d, arch, board_cc, where, configs) for i, k in enumerate(d.kernels)]
    return Board(
        name=d.name,
        description=d.description,
        file=f,
        arch=arch,
        cross_compile=board_cc,
        memory_mb=d.memory_mb,
        libc=d.libc,
        console=d.console,
        earlycon=d.earlycon,
        cmdline=d.cmdline,
        image=d.image,
        qemu=d.qemu,
        uboot=d.uboot,
        serial=d.serial,
        power=d.power,
        tftp=d.tftp,
        nfs=d.nfs,
        boot=d.boot,
        milestones=d.milestones,
        kernels=kernels,
        labgrid=d.labgrid,
        workloads=d.workloads,
    )


def _kernel(k: KernelSpec, i: int, d: BoardFile, arch: Arch, board_cc: str, where: str, configs: Path) -> Kernel:
    kw = f"kernels[{i}]"
    try:
        era = load_era(k.era, configs)
    except DataError as e:
        raise DataError(f"{where}: field '{kw}.era': {e}") from None
    for name, value in ([("config_file", k.config_file)] if k.config_file else []) + [
        (f"fragments[{j}]", frag) for j, frag in enumerate(k.fragments)
    ]:
        why = check_config_path(value, configs) or config_text_problem(
            resolve_config(str(paths.expand_user(value, "config file")), configs)
        )
        if why:
            raise DataError(f"{where}: field '{kw}.{name}': {value!r}: {why}")
    src = k.source
    if src.tarball and not paths.expand_user(src.tarball, "source.tarball").is_file():
        raise DataError(f"{where}: field '{kw}.source.tarball': {src.tarball!r}: no such file")
    why = tarball_problem(paths.expand_user(src.tarball, "source.tarball")) if src.tarball else None
    if why:
        raise DataError(f"{where}: field '{kw}.source.tarball': {src.tarball!r}: {why}")
    if src.path and not paths.expand_user(src.path, "source.path").is_dir():
        raise DataError(f"{where}: field '{kw}.source.path': {src.path!r}: no such directory")
    karch = arch
    if k.arch:
        try:
            karch = load_arch(k.arch, configs)
        except DataError as e:
            raise DataError(f"{where}: field '{kw}.arch': {e}") from None
    if k.cross_compile is not None:
        kcc = k.cross_compile
    elif k.arch and d.cross_compile is None:
        kcc = karch.cross_compile
    else:
        kcc = board_cc
    return Kernel(
        id=k.id,
        description=k.description,
        source=k.source,
        defconfig=k.defconfig,
        config_file=k.config_file,
        fragments=list(k.fragments),
        era=era,
        arch=karch,
        cross_compile=kcc,
        make_args=list(k.make_args),
        cmdline=k.cmdline,
        dtb=d.image.dtb if k.dtb is None else k.dtb,
    )


# --- published schema and reference docs ------------------------------------


def board_schema() -> dict[str, Any]:
    """The JSON Schema of a board file (docs/board-schema.json; `bringup doc board-schema`)."""
    s = BoardFile.model_json_schema()
    s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    s["title"] = "bringup board file (boards/<name>.toml)"
    return s


def board_schema_json() -> str:
    return json.dumps(board_schema(), indent=2, sort_keys=True) + "\n"


def reference_markdown() -> str:
    """docs/board-files.md, generated from the models above (tests check it is current)."""
    from bringup.model.docgen import markdown

    lines = [
        "# Board, architecture and era files",
        "",
        "Generated from `scripts/lib/bringup/model/board.py` by `bringup doc board-files`; do not edit by hand.",
        "",
        "A board is `boards/<name>.toml`. It names an architecture (`configs/arch/<arch>.toml`), "
        "and each kernel names an era (`configs/era/<era>.toml`) that selects the build recipe. "
        "Config fragments and config files are paths relative to `configs/` (an absolute path must be an existing "
        "file), and hold Kconfig text only (`CONFIG_X=value`, `# CONFIG_X is not set`, comments). Every file is "
        "validated on load; an error names the file, the field and the value.",
        "",
        "The JSON Schema of a board file is `docs/board-schema.json` (`bringup doc board-schema`); the shipped "
        "boards name it in their first line (`#:schema ../docs/board-schema.json`), so editors with a TOML "
        "language server (Even Better TOML / taplo) complete and check board files as you type.",
        "",
        "## Board files (`boards/*.toml`)",
        "",
    ]
    lines += markdown(BoardFile, "top level")
    lines += ["## Architecture files (`configs/arch/*.toml`)", ""]
    lines += markdown(ArchFile, "fields")
    lines += [
        "## Era files (`configs/era/*.toml`)",
        "",
        "An era is a build recipe and the compatibility fixes old trees need with today's tools "
        "(explained one by one in `docs/eras.md`). A fix applies when the kernel version, the architecture "
        "and the gcc major version are all in its ranges; the build record lists every fix applied.",
        "",
    ]
    lines += markdown(EraFile, "fields")
    return "\n".join(lines).rstrip() + "\n"
