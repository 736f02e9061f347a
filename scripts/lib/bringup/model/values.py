"""The value types of the board, architecture and era files: what a field may mean
(an address, a kernel command line and one argument of it, a make argument, a
CROSS_COMPILE prefix, a path in a tree, text without control characters, a port),
each a pydantic Annotated type with its validator, and the names bringup keeps for
itself (reserved kernel ids, files of logs/<board>/)."""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated

from pydantic import AfterValidator, Field

from bringup.model.base import CONTROL

MAX_ADDRESS = 2**64 - 1


# --- value types: what a field may mean ------------------------------------


ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._+-]*$"  # letters, digits and . _ + -
PREFIX_PATTERN = r"^([A-Za-z0-9_./+][A-Za-z0-9_./+-]*)?$"  # a CROSS_COMPILE prefix: a path, no shell, no option
RESERVED_IDS = ("rootfs", "report")  # directories of logs/<board>/ that are not kernels'
BOARD_FILE_SUFFIXES = (".json", ".log", ".lock", ".tmp", ".part")  # files of logs/<board>/ (boot-timing.json)


def kernel_id_problem(v: str) -> str | None:
    """Why a kernel id cannot name a directory of logs/<board>/ (a directory or a file of the
    board's own has that name, or would), or None."""
    if v in RESERVED_IDS:
        return f"logs/<board>/{v}/ holds the board's {v}, not a kernel's records; choose another id"
    if v.endswith(BOARD_FILE_SUFFIXES):
        return (
            f"ends in {v[v.rindex('.') :]!r}: logs/<board>/ holds the board's own files of that kind "
            "(boot-timing.json); a kernel's directory would take its name"
        )
    return None


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


def not_blank(consequence: str) -> AfterValidator:
    """A string that is not only spaces; `consequence` says what such a value would do."""

    def check(v: str) -> str:
        if not v.strip():
            raise ValueError(f"only spaces: {consequence}")
        return v

    return AfterValidator(check)


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
