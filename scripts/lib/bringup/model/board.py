"""The board model: boards/<name>.toml, validated on load.

Also the architecture (configs/arch/*.toml) and era (configs/era/*.toml)
definitions a board refers to.  Adding a board, an architecture or an era is a
data change; nothing here knows about a particular one.

Two layers:
  *File models (pydantic) describe the files as written: every field typed,
  with ranges and what each value may mean (model/values.py: a make variable
  without `$(`, a command line without control characters, ...; model/specs.py:
  the board file's tables).  Their JSON Schema is published
  (docs/board-schema.json, model/boarddoc.py) so editors check board files as
  they are typed.
  Board / Kernel are the resolved result: the arch and era files loaded, the
  toolchain prefix chosen, the paths checked.  Board is one pydantic model with
  BoardFile: both declare the file's fields once, in BoardFields.
Which boot paths a board can take: model/bootpath.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, InstanceOf, field_validator, model_validator

from bringup.model.base import DataError, Strict, load_toml, located, no_duplicate, show, validate_as
from bringup.model.milestones import check_overrides
from bringup.model.specs import (
    ImageSpec,
    KernelSpec,
    LabgridSpec,
    NfsSpec,
    PowerSpec,
    QemuSpec,
    SerialSpec,
    SourceSpec,
    TftpSpec,
    UbootSpec,
    WorkloadsSpec,
)
from bringup.model.values import (
    ID_PATTERN,
    OWN_MAKE_VARS,
    Cmdline,
    ConfigTarget,
    OneArgument,
    Prefix,
    Text,
    TreePath,
    _console,
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


# --- the board file -------------------------------------------------------


class BoardFields(Strict):
    """What a board file says and a board in use keeps as it was said: declared once, for
    BoardFile (the file as written) and Board (the board in use, with its architecture,
    cross compiler and kernels resolved)."""

    name: Annotated[str, Field(pattern=ID_PATTERN, max_length=64, description="must equal the file name without .toml")]
    description: Text = ""
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


class BoardFile(BoardFields):
    """boards/<name>.toml"""

    arch: Annotated[str, Field(max_length=64, description="an architecture under configs/arch/")]
    cross_compile: Prefix | None = Field(None, description="CROSS_COMPILE prefix (default: the arch's)")
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
        no_duplicate([k.id for k in self.kernels], "kernels", key="id")
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


class Board(BoardFields):
    """A board in use: the fields of its file as validated (BoardFields), the file it came
    from, its architecture, the cross compiler its kernels use and its kernels resolved
    (load_board)."""

    file: InstanceOf[Path]
    arch: InstanceOf[Arch]
    cross_compile: str
    kernels: list[InstanceOf[Kernel]] = []

    def kernel(self, kid: str) -> Kernel:
        for k in self.kernels:
            if k.id == kid:
                return k
        raise DataError(f"board {self.name}: no kernel {kid!r} (has: {', '.join(k.id for k in self.kernels)})")


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
    if d.qemu is not None and d.qemu.clock == "instructions":
        for i, k in enumerate(kernels):
            if not k.era.printk_times:  # the instruction clock times milestones by their printk times
                raise DataError(
                    f"{where}: field 'kernels[{i}].era': {k.era.name!r} prints no printk times: kernel {k.id} "
                    "cannot be timed on qemu.clock = 'instructions' (use 'host')"
                )
    resolved = {"file": f, "arch": arch, "cross_compile": board_cc, "kernels": kernels}
    return Board.model_validate({**{n: getattr(d, n) for n in BoardFields.model_fields}, **resolved})


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
