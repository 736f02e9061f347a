"""The board model: boards/<name>.toml, validated on load.

The architecture (configs/arch/*.toml) and era (configs/era/*.toml) files a
board refers to are model/archfiles.py's, the checks of the files it names under
configs/ model/configfiles.py's.  Adding a board, an architecture or an era is a
data change; nothing here knows about a particular one.

Two layers:
  *File models (pydantic) describe the files as written: every field typed,
  with ranges and what each value may mean (model/values.py: a make variable
  without `$(`, a command line without control characters, ...; model/specs.py:
  the board file's tables; the table that says what kind of target the board is,
  [qemu], [serial] or [labgrid], is its kind's module's under targets/, found
  through model/targetkind.py's registry: board_file_model()).  Their JSON Schema is published
  (docs/board-schema.json, model/boarddoc.py) so editors check board files as
  they are typed.
  Board / Kernel are the resolved result: the arch and era files loaded, the
  toolchain prefix chosen, the paths checked, the target table kept as `target`
  (what the rest of bringup asks about the board's kind).  Board is one pydantic
  model with BoardFile: both declare the file's fields once, in BoardFields.
Which boot paths a board can take: model/bootpath.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, InstanceOf, create_model, model_validator

# architectures and eras (model/archfiles.py) and the files under configs/ (model/configfiles.py)
# have modules of their own; their names stay importable from here, where most callers look
from bringup.model.archfiles import (  # noqa: F401
    NAME_RE,
    Arch,
    ArchFile,
    Era,
    EraFile,
    EraFix,
    MajorRange,
    VersionRange,
    known_eras,
    load_arch,
    load_era,
    version_tuple,
)
from bringup.model.base import DataError, Strict, load_toml, located, no_duplicate, show, validate_as
from bringup.model.configfiles import (  # noqa: F401
    check_config_path,
    config_text_problem,
    resolve_config,
    source_problem,
    tarball_problem,
)
from bringup.model.milestones import check_overrides
from bringup.model.specs import (
    ImageSpec,
    KernelSpec,
    NfsSpec,
    PowerSpec,
    SourceSpec,
    TftpSpec,
    UbootSpec,
    WorkloadsSpec,
)
from bringup.model.targetkind import TargetSpec, chosen, kinds
from bringup.model.values import (
    ID_PATTERN,
    Cmdline,
    OneArgument,
    Prefix,
    Text,
    _console,
)
from bringup.util import paths

# --- the board file -------------------------------------------------------


class BoardHead(Strict):
    """The fields of a board file that come before its target table ([qemu], [serial],
    [labgrid]: board_file_model() puts the kinds' tables here, so that a file's first
    error is the first in the file's usual order)."""

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


class BoardTail(Strict):
    """The fields of a board file after its target table."""

    uboot: Annotated[UbootSpec | None, Field(description="the U-Boot dialogue (boards with boot = 'u-boot')")] = None
    power: Annotated[
        PowerSpec | None, Field(description="power commands of a real board (argument lists, no shell)")
    ] = None
    tftp: Annotated[TftpSpec | None, Field(description="TFTP for a real board booting through U-Boot")] = None
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


class BoardFields(BoardTail, BoardHead):
    """What a board file says and a board in use keeps as it was said: declared once, for
    BoardFile (the file as written) and Board (the board in use, with its architecture,
    cross compiler and kernels resolved).  Its fields: BoardHead's, then BoardTail's."""


class BoardFile(BoardFields):
    """boards/<name>.toml, without its target table: board_file_model() adds a field for
    the table of each kind of target registered (model/targetkind.py)."""

    arch: Annotated[str, Field(max_length=64, description="an architecture under configs/arch/")]
    cross_compile: Prefix | None = Field(None, description="CROSS_COMPILE prefix (default: the arch's)")
    kernels: Annotated[
        list[KernelSpec], Field(min_length=1, max_length=32, description="the kernels to build and compare")
    ]

    @model_validator(mode="after")
    def _consistent(self) -> BoardFile:
        if self.boot == "u-boot" and self.uboot is None:
            raise located("uboot", "missing, but boot = 'u-boot'")
        self.target_spec().check_board(self)
        no_duplicate([k.id for k in self.kernels], "kernels", key="id")
        return self

    def target_spec(self) -> TargetSpec:
        """The board's one target table (refused when it has none or several)."""
        present = {k.table: getattr(self, k.table, None) for k in kinds()}
        return chosen({t: spec for t, spec in present.items() if spec is not None})


_MODELS: dict[tuple[type[TargetSpec], ...], type[BoardFile]] = {}


def board_file_model() -> type[BoardFile]:
    """BoardFile with a field for the table of each kind of target registered: the model a
    board file is validated by, and docs/board-schema.json and docs/board-files.md are made from.
    The tables come after BoardHead's fields: pydantic orders fields by the bases' order
    (BoardHead, the tables, BoardTail, BoardFile's own), and reports a file's errors in it."""
    key = tuple(kinds())
    if key not in _MODELS:
        tables: dict[str, Any] = {k.table: (k | None, Field(None, description=k.table_doc)) for k in key}
        with_tables = create_model("TargetTables", __base__=BoardHead, __module__=__name__, **tables)
        bases: Any = (BoardFile, with_tables)  # a subclass of BoardFile (mypy cannot see it through the tuple)
        _MODELS[key] = create_model("BoardFile", __base__=bases, __module__=__name__, __doc__="boards/<name>.toml")
    return _MODELS[key]


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
    target: InstanceOf[TargetSpec]  # the board file's target table: what kind of target the board is
    arch: InstanceOf[Arch]
    cross_compile: str
    kernels: list[InstanceOf[Kernel]] = []

    def kernel(self, kid: str) -> Kernel:
        for k in self.kernels:
            if k.id == kid:
                return k
        raise DataError(f"board {self.name}: no kernel {kid!r} (has: {', '.join(k.id for k in self.kernels)})")


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
    d = validate_as(board_file_model(), load_toml(f, "board file"), where)
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
    target = d.target_spec()
    if target.measuring_clock().deterministic:
        for i, k in enumerate(kernels):
            if not k.era.printk_times:  # the instruction clock times milestones by their printk times
                raise DataError(
                    f"{where}: field 'kernels[{i}].era': {k.era.name!r} prints no printk times: kernel {k.id} "
                    f"cannot be timed on {target.table}.clock = 'instructions' (use 'host')"
                )
    resolved = {"file": f, "target": target, "arch": arch, "cross_compile": board_cc, "kernels": kernels}
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
    why = source_problem(k.source)
    if why:
        raise DataError(f"{where}: field '{kw}.source.{k.source.kind}': {getattr(k.source, k.source.kind)!r}: {why}")
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
