"""The board model: boards/<name>.toml, validated on load.

Also the architecture (configs/arch/*.toml) and era (configs/era/*.toml)
definitions a board refers to.  Adding a board, an architecture or an era is a
data change; nothing here knows about a particular one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from bringup.model.schema import DataError, Field, is_hex_address, is_sha256, load_toml, validate
from bringup.util import paths

ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


def _is_id(v: str) -> str | None:
    return None if ID_RE.match(v) else "use letters, digits and . _ + - only"


# --- architecture and era definitions -------------------------------------

ARCH_SPEC = {
    "description": Field(str, default=""),
    "kernel_arch": Field(str, required=True, doc="ARCH= for the kernel's make"),
    "srcarch": Field(str, default="", doc="directory under arch/ (defaults to kernel_arch)"),
    "cross_compile": Field(str, default="", doc="default CROSS_COMPILE prefix"),
    "images": Field(dict, required=True, doc="make target -> path of the image in the build tree"),
    "compressed_image": Field(str, required=True, doc="make target whose file is the compressed kernel"),
    "uncompressed_image": Field(str, default="", doc="path of the raw binary image, if the arch makes one"),
    "dtbs": Field(bool, default=False),
    "mkimage_arch": Field(str, default=""),
    "toolchain_packages": Field(dict, default={}, doc="CROSS_COMPILE prefix -> Debian package"),
    "debian_arch": Field(str, default="", doc="Debian architecture of a matching userspace"),
    "userspace_cross_compile": Field(
        str, default="", doc="compiler prefix for static userspace tools (mem_eat, busybox from source)"
    ),
}

ERA_SPEC = {
    "description": Field(str, default=""),
    "out_of_tree": Field(bool, required=True, doc="build with O=<dir> (2.6+) or in a private copy (2.4)"),
    "config_target": Field(str, required=True),
    "config_fallback": Field(str, default="", doc="used, fed default answers, when the tree lacks config_target"),
    "steps": Field(list, items=str, required=True, doc="make targets after configuration; {image} and {dtbs} expand"),
}


@dataclass
class Arch:
    name: str
    kernel_arch: str
    srcarch: str
    cross_compile: str
    images: dict
    compressed_image: str
    uncompressed_image: str
    dtbs: bool
    mkimage_arch: str
    toolchain_packages: dict
    debian_arch: str
    userspace_cross_compile: str = ""
    description: str = ""


@dataclass
class Era:
    name: str
    out_of_tree: bool
    config_target: str
    config_fallback: str
    steps: list
    description: str = ""


def load_arch(name: str, configs: Path | None = None) -> Arch:
    configs = configs or paths.CONFIGS
    f = configs / "arch" / f"{name}.toml"
    if not f.exists():
        known = sorted(p.stem for p in (configs / "arch").glob("*.toml"))
        raise DataError(f"unknown architecture {name!r} (no {paths.rel(f)}; known: {', '.join(known)})")
    d = validate(load_toml(f), ARCH_SPEC, paths.rel(f))
    if d["compressed_image"] not in d["images"]:
        raise DataError(f"{paths.rel(f)}: field 'compressed_image': {d['compressed_image']!r} is not a key of 'images'")
    d["srcarch"] = d["srcarch"] or d["kernel_arch"]
    return Arch(name=name, **d)


def load_era(name: str, configs: Path | None = None) -> Era:
    configs = configs or paths.CONFIGS
    f = configs / "era" / f"{name}.toml"
    if not f.exists():
        known = sorted(p.stem for p in (configs / "era").glob("*.toml"))
        raise DataError(f"unknown era {name!r} (no {paths.rel(f)}; known: {', '.join(known)})")
    return Era(name=name, **validate(load_toml(f), ERA_SPEC, paths.rel(f)))


def known_eras(configs: Path | None = None) -> tuple:
    configs = configs or paths.CONFIGS
    return tuple(sorted(p.stem for p in (configs / "era").glob("*.toml")))


# --- the board file -------------------------------------------------------

SOURCE_SPEC = {
    "debian": Field(str, doc="Debian package, e.g. linux-source-6.1"),
    "suite": Field(str, doc="Debian suite for 'debian'"),
    "url": Field(str, doc="tarball URL"),
    "tarball": Field(str, doc="local tarball path"),
    "path": Field(str, doc="local kernel tree"),
    "sha256": Field(str, check=is_sha256),
    "version": Field(str, default="", doc="kernel version, for records and eras"),
}

KERNEL_SPEC = {
    "id": Field(str, required=True, check=_is_id, doc="names logs/<board>/<id>/"),
    "description": Field(str, default=""),
    "source": Field(SOURCE_SPEC, required=True, doc="exactly one of debian, url, tarball, path"),
    "defconfig": Field(str, default="", doc="make target that writes the base .config"),
    "config_file": Field(str, default="", doc="a complete .config, relative to configs/"),
    "fragments": Field(list, items=str, default=[], doc="config fragments, relative to configs/"),
    "era": Field(str, default="2.6+", doc="build recipe: a file under configs/era/ ('2.4' or '2.6+')"),
    "arch": Field(str, default="", doc="override the board's arch"),
    "cross_compile": Field(str, doc="override the board's CROSS_COMPILE"),
    "make_args": Field(list, items=str, default=[], doc="extra VAR=value for make"),
    "cmdline": Field(str, default="", doc="extra kernel command line"),
}

IMAGE_SPEC = {
    "target": Field(str, required=True, doc="make target for the boot image (zImage, bzImage, uImage)"),
    "uimage": Field(bool, default=False, doc="wrap the image with mkimage for U-Boot"),
    "load_address": Field((str, int), default="", check=lambda v: v == "" and None or is_hex_address(v)),
    "entry_point": Field((str, int), default="", check=lambda v: v == "" and None or is_hex_address(v)),
    "dtb": Field(str, default="", doc="device tree blob name (e.g. vexpress-v2p-ca9.dtb)"),
}

QEMU_SPEC = {
    "binary": Field(str, required=True),
    "machine": Field(str, required=True),
    "cpu": Field(str, default=""),
    "smp": Field(int, default=1),
    "args": Field(list, items=str, default=[], doc="extra QEMU arguments"),
    "net_device": Field(str, default="", doc="QEMU NIC model for user networking"),
}

UBOOT_SPEC = {
    "binary": Field(str, required=True, doc="U-Boot image given to QEMU as -bios"),
    "kernel_addr": Field(str, required=True, check=is_hex_address),
    "initrd_addr": Field(str, required=True, check=is_hex_address),
    "fdt": Field(str, default="${fdtcontroladdr}", doc="fdt address argument of bootm"),
    "prompt": Field(str, default="=> "),
    "boot_command": Field(str, default="bootm"),
}

SERIAL_SPEC = {
    "port": Field(str, required=True, doc="/dev/ttyUSB0, socket://host:port or rfc2217://host:port"),
    "baud": Field(int, default=115200, doc="for local serial devices"),
}

TFTP_SPEC = {
    "dir": Field(
        str,
        required=True,
        doc="the host's TFTP root (tftpd-hpa's directory); bringup writes bringup/<board>/<kernel>/ under it",
    ),
    "serverip": Field(str, default="", doc="U-Boot serverip (empty: the one DHCP gives)"),
    "ipaddr": Field(str, default="", doc="U-Boot ipaddr when dhcp = false"),
    "dhcp": Field(bool, default=True, doc="run dhcp in U-Boot"),
}

NFS_SPEC = {
    "server": Field(
        str,
        default="ganesha",
        choices=("ganesha", "external"),
        doc="ganesha: bringup runs NFS-Ganesha for each run; external: your own NFS server",
    ),
    "bind": Field(
        str,
        default="127.0.0.1",
        doc="address (or interface name, e.g. eth1) Ganesha listens on: "
        "loopback for QEMU (the guest reaches it as 10.0.2.2); on a "
        "bench, the host's interface on the board's network",
    ),
    "address": Field(str, default="10.0.2.2", doc="the NFS server's address as the board sees it"),
    "port": Field(
        int,
        default=0,
        doc="Ganesha's port; 0 picks a free one (the kernel is told the port); "
        "an external server: its port, usually 2049",
    ),
    "version": Field(
        str,
        default="4",
        choices=("3", "4", "4.0", "4.1", "4.2"),
        doc="nfsroot vers=; 4 needs no rpcbind (Ganesha here serves v4 only)",
    ),
    "options": Field(str, default="tcp", doc="more nfsroot options"),
    "ip": Field(str, default="dhcp", doc="kernel ip= argument (dhcp, or client:server:gw:netmask::dev:off)"),
    "export_dir": Field(
        str,
        default="",
        doc="external: the host directory your server exports; bringup "
        "copies each run's rootfs under bringup/<board>/<kernel>/<run>/",
    ),
    "export_path": Field(str, default="", doc="external: the same directory as the server exports it"),
}

POWER_SPEC = {
    "on": Field(list, items=str, default=[], doc="command that switches the board on"),
    "off": Field(list, items=str, default=[], doc="command that switches it off"),
    "reset": Field(list, items=str, default=[], doc="command that resets it (used when there is no 'on')"),
}

BOARD_SPEC = {
    "name": Field(str, required=True, check=_is_id, doc="must equal the file name without .toml"),
    "description": Field(str, default=""),
    "arch": Field(str, required=True, doc="an architecture under configs/arch/"),
    "cross_compile": Field(str, doc="CROSS_COMPILE prefix (default: the arch's)"),
    "memory_mb": Field(
        int,
        default=256,
        check=lambda v: None if v > 0 else "must be positive",
        doc="RAM given to QEMU; the board's RAM for a real board",
    ),
    "console": Field(str, default="ttyS0,115200", doc="kernel console= argument"),
    "earlycon": Field(str, default="", doc="kernel earlycon= argument"),
    "cmdline": Field(str, default=""),
    "image": Field(IMAGE_SPEC, required=True, doc="what the build produces and how it is loaded"),
    "qemu": Field(QEMU_SPEC, doc="how QEMU emulates the board (a QEMU board)"),
    "uboot": Field(UBOOT_SPEC, doc="the U-Boot dialogue (boards with boot = 'u-boot')"),
    "serial": Field(SERIAL_SPEC, doc="the console of a real board"),
    "power": Field(POWER_SPEC, doc="power commands of a real board (argument lists, no shell)"),
    "tftp": Field(TFTP_SPEC, doc="TFTP for a real board booting through U-Boot"),
    "nfs": Field(NFS_SPEC, doc="NFS root (boot-timing --root nfs); the defaults suit QEMU boards"),
    "boot": Field(
        str,
        default="direct",
        choices=("direct", "u-boot"),
        doc="default boot path: QEMU -kernel/-initrd, or U-Boot with TFTP",
    ),
    "milestones": Field(dict, default={}, doc="milestone name -> regex, overriding the defaults"),
    "kernels": Field(list, items=KERNEL_SPEC, required=True, doc="the kernels to build and compare"),
}


@dataclass
class Kernel:
    id: str
    description: str
    source: dict
    defconfig: str
    config_file: str
    fragments: list
    era: Era
    arch: Arch
    cross_compile: str
    make_args: list
    cmdline: str

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
    console: str
    earlycon: str
    cmdline: str
    image: dict
    qemu: dict | None
    uboot: dict | None
    serial: dict | None
    power: dict | None
    tftp: dict | None
    nfs: dict
    boot: str
    milestones: dict
    kernels: list = field(default_factory=list)

    def kernel(self, kid: str) -> Kernel:
        for k in self.kernels:
            if k.id == kid:
                return k
        raise DataError(f"board {self.name}: no kernel {kid!r} (has: {', '.join(k.id for k in self.kernels)})")


def resolve_config(name: str, configs: Path) -> Path:
    p = Path(name)
    return p if p.is_absolute() else configs / p


def board_file(name_or_path: str, boards: Path | None = None) -> Path:
    boards = boards or paths.BOARDS
    if name_or_path.endswith(".toml") or "/" in name_or_path:
        return Path(name_or_path)
    return boards / f"{name_or_path}.toml"


def list_boards(boards: Path | None = None) -> list[str]:
    boards = boards or paths.BOARDS
    return sorted(p.stem for p in boards.glob("*.toml"))


def load_board(name_or_path: str, boards: Path | None = None, configs: Path | None = None) -> Board:
    configs = configs or paths.CONFIGS
    f = board_file(name_or_path, boards)
    if not f.exists():
        raise DataError(
            f"unknown board {name_or_path!r} (no {paths.rel(f)}; known: {', '.join(list_boards(boards)) or 'none'})"
        )
    where = paths.rel(f)
    d = validate(load_toml(f), BOARD_SPEC, where)
    if d["name"] != f.stem:
        raise DataError(f"{where}: field 'name': {d['name']!r} does not match the file name {f.stem!r}")
    if not d["kernels"]:
        raise DataError(f"{where}: field 'kernels': the board lists no kernel")
    if d["boot"] == "u-boot" and not d["uboot"]:
        raise DataError(f"{where}: field 'uboot': missing, but boot = 'u-boot'")
    if not d["qemu"] and not d["serial"]:
        raise DataError(f"{where}: field 'qemu': a board needs a [qemu] or a [serial] table")
    if d["nfs"] and d["nfs"]["server"] == "external":
        for key in ("export_dir", "export_path"):
            if not d["nfs"][key]:
                raise DataError(f"{where}: field 'nfs.{key}': required when nfs.server = 'external'")
    try:
        arch = load_arch(d["arch"], configs)
    except DataError as e:
        raise DataError(f"{where}: field 'arch': {e}")
    if d["image"]["target"] not in arch.images:
        raise DataError(
            f"{where}: field 'image.target': {d['image']['target']!r} is not an image of "
            f"arch {arch.name} ({', '.join(arch.images)})"
        )
    board_cc = d["cross_compile"] if d["cross_compile"] is not None else arch.cross_compile
    kernels = []
    seen = set()
    eras = known_eras(configs)
    for i, k in enumerate(d["kernels"]):
        kw = f"kernels[{i}]"
        if k["id"] in seen:
            raise DataError(f"{where}: field '{kw}.id': {k['id']!r} is listed twice")
        seen.add(k["id"])
        if k["era"] not in eras:
            raise DataError(
                f"{where}: field '{kw}.era': {k['era']!r} is not one of " + ", ".join(repr(e) for e in eras)
            )
        _check_source(k["source"], where, f"{kw}.source")
        if not k["defconfig"] and not k["config_file"]:
            raise DataError(f"{where}: field '{kw}.defconfig': give a defconfig or a config_file")
        for j, frag in enumerate([k["config_file"]] if k["config_file"] else []):
            if not resolve_config(frag, configs).exists():
                raise DataError(f"{where}: field '{kw}.config_file': {frag!r}: no such file under configs/")
        for j, frag in enumerate(k["fragments"]):
            if not resolve_config(frag, configs).exists():
                raise DataError(f"{where}: field '{kw}.fragments[{j}]': {frag!r}: no such file under configs/")
        for j, a in enumerate(k["make_args"]):
            if "=" not in a or a.startswith("="):
                raise DataError(f"{where}: field '{kw}.make_args[{j}]': {a!r}: expected VAR=value")
        karch = arch
        if k["arch"]:
            try:
                karch = load_arch(k["arch"], configs)
            except DataError as e:
                raise DataError(f"{where}: field '{kw}.arch': {e}")
        if k["cross_compile"] is not None:
            kcc = k["cross_compile"]
        elif k["arch"] and d["cross_compile"] is None:
            kcc = karch.cross_compile
        else:
            kcc = board_cc
        kernels.append(
            Kernel(
                id=k["id"],
                description=k["description"],
                source=k["source"],
                defconfig=k["defconfig"],
                config_file=k["config_file"],
                fragments=k["fragments"],
                era=load_era(k["era"], configs),
                arch=karch,
                cross_compile=kcc,
                make_args=k["make_args"],
                cmdline=k["cmdline"],
            )
        )
    return Board(
        name=d["name"],
        description=d["description"],
        file=f,
        arch=arch,
        cross_compile=board_cc,
        memory_mb=d["memory_mb"],
        console=d["console"],
        earlycon=d["earlycon"],
        cmdline=d["cmdline"],
        image=d["image"],
        qemu=d["qemu"],
        uboot=d["uboot"],
        serial=d["serial"],
        power=d["power"],
        tftp=d["tftp"],
        nfs=d["nfs"] or validate({}, NFS_SPEC, where, "nfs"),
        boot=d["boot"],
        milestones=d["milestones"],
        kernels=kernels,
    )


def _check_source(s: dict, where: str, name: str) -> None:
    kinds = [k for k in ("debian", "url", "tarball", "path") if s.get(k)]
    if len(kinds) != 1:
        raise DataError(
            f"{where}: field '{name}': give exactly one of debian, url, tarball, path "
            f"(got {', '.join(kinds) or 'none'})"
        )
    kind = kinds[0]
    if kind == "debian" and not s.get("suite"):
        raise DataError(f"{where}: field '{name}.suite': missing (required with 'debian')")
    if kind == "url" and not s.get("sha256"):
        raise DataError(
            f"{where}: field '{name}.sha256': missing (required with 'url'; "
            f"take it from the sha256sums file published next to the tarball)"
        )


def reference_markdown() -> str:
    """docs/board-files.md, generated from the specs above (tests check it is current)."""
    from bringup.model.schema import markdown

    lines = [
        "# Board, architecture and era files",
        "",
        "Generated from `scripts/lib/bringup/board.py` by `scripts/bringup doc board-files`; do not edit by hand.",
        "",
        "A board is `boards/<name>.toml`. It names an architecture (`configs/arch/<arch>.toml`), "
        "and each kernel names an era (`configs/era/<era>.toml`) that selects the build recipe. "
        "Config fragments and config files are paths relative to `configs/`. Every file is "
        "validated on load; an error names the file, the field and the value.",
        "",
        "## Board files (`boards/*.toml`)",
        "",
    ]
    lines += markdown(BOARD_SPEC, "top level")
    lines += ["## Architecture files (`configs/arch/*.toml`)", ""]
    lines += markdown(ARCH_SPEC, "fields")
    lines += ["## Era files (`configs/era/*.toml`)", ""]
    lines += markdown(ERA_SPEC, "fields")
    return "\n".join(lines).rstrip() + "\n"
