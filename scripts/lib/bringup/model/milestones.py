"""configs/milestones.toml as a typed model, turned into the parser's Rules.

A board overrides a milestone's regex by name in its [milestones] table; the
overrides are checked here, when the board is loaded, not when a boot starts.
"""

from __future__ import annotations

import dataclasses
import re
import typing
import warnings
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, create_model, field_validator, model_validator

from bringup.model.base import DataError, Strict, field_path, load_toml, no_duplicate, validate_as
from bringup.parse.milestones import Milestone, Roles, Rules
from bringup.util import paths

NAME_RE = r"^[a-z][a-z0-9_]*$"


# a repeated group that is one repeated atom, `(a+)+`, `(\w*)*`, `(?:.+){2,}`: on a long line that
# almost matches, the regex engine tries exponentially many ways to split it (a hung boot watch)
NESTED_QUANTIFIER = re.compile(r"\((?:\?:)?(?:\\.|\[(?:\\.|[^\]\\])*\]|[^()\\|\[])[+*]\)(?:[+*]|\{\d*,)")


# Console lines of every kind that no milestone, bootloader or fault means (kernel and U-Boot
# chatter, a short line, a word, punctuation): a regex that matches many of them marks an event
# at almost any line (' ', '.', '\\s', '\\w+', 'e'), so it means nothing
UNRELATED_LINES = (
    "[    0.000000] Booting Linux on physical CPU 0x0",
    "[    0.000000] Kernel command line: console=ttyAMA0,115200 rdinit=/init",
    "[    0.011263] Calibrating delay loop... 996.14 BogoMIPS (lpj=4980736)",
    "[    0.120000] NET: Registered PF_INET protocol family",
    "[    0.230416] Serial: AMBA PL011 UART driver",
    "[    0.351092] clk: Disabling unused clocks",
    "[    1.402210] random: crng init done",
    "[    2.004100] EXT4-fs (vda): mounted filesystem with ordered data mode",
    "PCI: CLS 0 bytes, default 64",
    "Dentry cache hash table entries: 65536 (order: 6, 262144 bytes, linear)",
    "DRAM:  512 MiB",
    "Loading Environment from Flash... *** Warning - bad CRC, using default environment",
    "In:    pl011@9000000",
    "Net:   eth0: virtio-net#31",
    "Bytes transferred = 1794624 (1b6240 hex)",
    "#################################################################",
    "done",
    "OK",
    "   Verifying Checksum ... OK",
    "Starting syslogd: OK",
    "udhcpc: sending discover",
    "hello world",
    "x",
    " ",
    "0",
    "-",
    ".",
    "...",
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ abcdefghijklmnopqrstuvwxyz 0123456789",
    "the quick brown fox jumps over the lazy dog",
    "!\"%&'()*+,-./:;<=>?@[]^_`{|}~",
    "\u00e4\u00f6\u00fc \u20ac \u4e2d\u6587",
)
MAX_UNRELATED = len(UNRELATED_LINES) // 4  # a quarter of them: it matches almost any line


def matches_almost_anything(rx: re.Pattern[str], v: str) -> str | None:
    """Why a regex means no particular line (only spaces, or many unrelated lines match), or None."""
    if not v.strip():
        return "only spaces: every console line with a space would match it"
    hits = [ln for ln in UNRELATED_LINES if rx.search(ln)]
    if len(hits) > MAX_UNRELATED:
        return (
            f"matches {len(hits)} of {len(UNRELATED_LINES)} unrelated console lines (e.g. {hits[0]!r}), "
            "so almost any line would match it: make it match the one line it means"
        )
    return None


def check_regex(v: str) -> str:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # "possible nested set": valid today
            rx = re.compile(v)
    except re.error as e:
        raise ValueError(f"not a valid regular expression: {e}") from None
    why = pattern_problem(rx, v, empty="every console line would match it", long="a long line")
    if why:
        raise ValueError(why)
    return v


def pattern_problem(rx: re.Pattern[str], v: str, empty: str, long: str, lines: str = "console line") -> str | None:
    """Why a compiled pattern (of the text v) matches what it should not, or None: the empty
    string (`empty` says what would follow), a nested quantifier (catastrophic backtracking on
    `long`), almost any of the unrelated `lines`."""
    if rx.search("") is not None:
        return f"matches the empty string, so {empty}"
    if NESTED_QUANTIFIER.search(v):
        return f"a repeated group of one repeated atom (catastrophic backtracking on {long})"
    why = matches_almost_anything(rx, v)
    return why.replace("console line", lines) if why else None


Regex = Annotated[str, Field(min_length=1, max_length=1000), AfterValidator(check_regex)]


BootloaderField = Literal["banner", "first_stage", "kernel_load", "starting"]


class MilestoneFields(Strict):
    """A milestone table of configs/milestones.toml but its roles: its name, label and
    wordings.  MilestoneSpec adds the roles as parse/milestones.py's Roles declares them."""

    name: Annotated[str, Field(pattern=NAME_RE, max_length=40)]
    label: Annotated[
        str,
        Field(
            max_length=120,
            pattern=r"^[^\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]*$",
            description="shown for it (empty: its name)",
        ),
    ] = ""
    regex: Regex | None = None
    from_bootloaders: BootloaderField | None = None

    @model_validator(mode="after")
    def _some_regex(self) -> MilestoneFields:
        if self.regex is None and self.from_bootloaders is None:
            raise ValueError(f"milestone {self.name!r} has neither regex nor from_bootloaders")
        return self

    def roles(self) -> Roles:
        """Its roles as the parser takes them."""
        values: dict[str, Any] = {}
        for f in dataclasses.fields(Roles):
            v = getattr(self, f.name)
            values[f.name] = tuple(v) if isinstance(v, list) else v
        return Roles(**values)


ROLE_LIMITS = {"timeout": Field(gt=0, le=3600, allow_inf_nan=False)}  # what the file may say beyond the type


def _role_fields() -> dict[str, Any]:
    """Roles' fields as pydantic fields: its types and defaults, a tuple written as a list."""
    hints = typing.get_type_hints(Roles)
    out: dict[str, Any] = {}
    for f in dataclasses.fields(Roles):
        tp: Any = hints[f.name]
        default: Any = f.default
        if typing.get_origin(tp) is tuple:
            tp, default = list[typing.get_args(tp)[0]], list(default)  # type: ignore[misc]
        out[f.name] = (Annotated[tp, ROLE_LIMITS[f.name]] if f.name in ROLE_LIMITS else tp, default)
    return out


if typing.TYPE_CHECKING:
    MilestoneSpec = MilestoneFields
else:
    MilestoneSpec = create_model("MilestoneSpec", __base__=MilestoneFields, **_role_fields())


class BootloaderSpec(Strict):
    """What one bootloader prints; milestones with from_bootloaders match these."""

    name: Annotated[str, Field(min_length=1, max_length=40, pattern=r"^[A-Za-z0-9][A-Za-z0-9 ._+-]*$")]
    banner: Regex | None = None
    first_stage: Regex | None = None
    prompt: Regex | None = None
    kernel_load: Regex | None = None
    starting: Regex | None = None
    # a line of its first stage loading its own next one, which prints the same banner
    # (barebox's OMAP MLO: "booting from MMC"): that banner is then no reset
    next_stage: Regex | None = None


class MilestonesFile(Strict):
    milestone: Annotated[list[MilestoneSpec], Field(min_length=1, max_length=100)]
    faults: dict[Annotated[str, Field(pattern=NAME_RE, max_length=40)], Regex] = {}
    bootloader: Annotated[list[BootloaderSpec], Field(max_length=100)] = []

    @field_validator("bootloader")
    @classmethod
    def _one_bootloader_each(cls, v: list[BootloaderSpec]) -> list[BootloaderSpec]:
        no_duplicate([b.name for b in v], "bootloader", verb="defined", inside=True)
        return v

    @field_validator("milestone")
    @classmethod
    def _one_each(cls, v: list[MilestoneSpec]) -> list[MilestoneSpec]:
        no_duplicate([m.name for m in v], "milestone", verb="defined", inside=True)
        roles = [m.roles() for m in v]
        if not any(r.end for r in roles):
            raise ValueError("no milestone has end = true, so a boot would never be done")
        if sum(r.reference for r in roles) > 1:
            raise ValueError("more than one milestone has reference = true")
        if sum(r.after_initcalls for r in roles) > 1:
            raise ValueError("more than one milestone has after_initcalls = true")
        if sum(r.delayed for r in roles) > 1:
            raise ValueError("more than one milestone has delayed = true")
        return v


def default_file() -> Path:
    return paths.CONFIGS / "milestones.toml"


def load_file(file: Path | None = None) -> MilestonesFile:
    f = file or default_file()
    return validate_as(MilestonesFile, load_toml(f), paths.rel(f))


def check_overrides(overrides: dict[str, str], where: str, file: Path | None = None) -> None:
    """A board's [milestones] table: known names, valid regexes (raises DataError)."""
    known = [m.name for m in load_file(file).milestone]
    for name, rx in overrides.items():
        if name not in known:
            raise DataError(
                f"{where}: field 'milestones.{field_path((name,))}': no such milestone (known: {', '.join(known)})"
            )
        try:
            check_regex(rx)
        except ValueError as e:
            raise DataError(f"{where}: field 'milestones.{field_path((name,))}': {rx!r}: {e}") from None


def _variants(m: MilestoneSpec, spec: MilestonesFile) -> list[tuple[str, str]]:
    """(who prints it, regex) of a milestone: its bootloaders' field, then its own regex."""
    out = []
    if m.from_bootloaders is not None:
        out += [(b.name, rx) for b in spec.bootloader if (rx := getattr(b, m.from_bootloaders)) is not None]
    if m.regex is not None:
        out.append(("", m.regex))
    return out


def load_rules(overrides: dict[str, str] | None = None, file: Path | None = None) -> Rules:
    spec = load_file(file)
    overrides = dict(overrides or {})
    check_overrides(overrides, "board", file)
    ms = [
        _milestone(m, [("", overrides[m.name])] if m.name in overrides else _variants(m, spec), file)
        for m in spec.milestone
    ]
    prompts = tuple((b.name, re.compile(b.prompt)) for b in spec.bootloader if b.prompt is not None)
    stages = tuple((b.name, re.compile(b.next_stage)) for b in spec.bootloader if b.next_stage is not None)
    return Rules(ms, {k: re.compile(v) for k, v in spec.faults.items()}, prompts, stages)


def _milestone(m: MilestoneSpec, variants: list[tuple[str, str]], file: Path | None) -> Milestone:
    if not variants:  # from_bootloaders names a field no bootloader has: it never matches
        combined = r"(?!x)x"
    elif len(variants) == 1:
        combined = variants[0][1]
    else:
        combined = "|".join(f"(?:{rx})" for _, rx in variants)
    try:
        regex = re.compile(combined)
    except re.error as e:  # e.g. a bootloader regex with a global flag such as (?i) inside
        where = paths.rel(file or default_file())
        raise DataError(f"{where}: milestone {m.name!r}: its bootloaders' regexes do not combine: {e}") from None
    return Milestone(
        name=m.name,
        label=m.label or m.name,
        regex=regex,
        variants=tuple((who, re.compile(rx)) for who, rx in variants) if any(who for who, _ in variants) else (),
        source=m.from_bootloaders,
        **dataclasses.asdict(m.roles()),
    )
