"""The tables of a board file (boards/<name>.toml) as pydantic models: a kernel and
its source, the image, U-Boot, TFTP, the NFS root, the workloads' disk and power
commands.  model/board.py puts them together into BoardFile and Board.  The table
that says what kind of target the board is ([qemu], [serial], [labgrid]) is its
kind's, declared in that kind's module under targets/ (model/targetkind.py)."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from bringup.model.base import Strict, located
from bringup.model.values import (
    _CONTROL,
    ID_PATTERN,
    Address,
    Argv,
    Cmdline,
    ConfigTarget,
    IPv4,
    MakeArg,
    Port,
    Prefix,
    RelPath,
    Text,
    kernel_id_problem,
    not_blank,
)
from bringup.util.aptprivate import SUITES


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
        why = kernel_id_problem(v)
        if why:
            raise ValueError(why)
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
        str,
        Field(min_length=1, max_length=64, pattern=r"^[^\x00-\x1f\x7f]+$", description="U-Boot's prompt"),
        not_blank("every line with a space would look like U-Boot's prompt"),
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

    @model_validator(mode="after")
    def _distinct_addresses(self) -> UbootSpec:
        addrs = [("kernel_addr", self.kernel_addr), ("initrd_addr", self.initrd_addr), ("fdt_addr", self.fdt_addr)]
        for i, (name, a) in enumerate(addrs):
            for other, b in addrs[:i]:
                if int(str(a), 16) == int(str(b), 16):
                    raise located(name, f"{a!r}: the same address as {other}: one file would overwrite the other")
        return self


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
