"""What every record model shares: strict pydantic models, the field types
(finite numbers, sizes, timestamps, keys, paths inside the record's directory),
the schema field with its version, and one-line errors.

A record model lists every field a writer writes: unknown fields are errors,
values are not coerced (a string is not a number), NaN and infinities are
refused, so a record that reads is a record the code could have written.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from pathlib import PurePosixPath
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from bringup.errors import BringupError
from bringup.util import fieldnames


class RecordError(BringupError):
    """A record cannot be read or written; the message is one line naming the
    file, the field and the value."""


CONFIG = ConfigDict(
    extra="forbid",
    strict=True,
    allow_inf_nan=False,
    validate_by_name=True,
    validate_by_alias=True,
    serialize_by_alias=True,
    validate_default=True,
)


class Part(BaseModel):
    """A table inside a record."""

    model_config = CONFIG


# --- field types ------------------------------------------------------------

Count = Annotated[int, Field(ge=0)]
Bytes = Annotated[int, Field(ge=0)]  # a size in bytes
KB = Annotated[int, Field(ge=0)]  # a size in kB
Seconds = Annotated[float, Field(ge=0)]  # a duration
NonNeg = Annotated[float, Field(ge=0)]
Real = float  # any finite number (CONFIG refuses NaN and infinities)
LineNo = Annotated[int, Field(ge=1)]  # 1-based line number in a text file
Text = Annotated[str, Field(max_length=100_000)]
Name = Annotated[str, Field(min_length=1, max_length=200)]  # milestone, benchmark, place


# a board name or kernel id: it names a directory under logs/, so a plain name (model/values.py's ID_PATTERN)
def _id(v: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}", v):
        raise ValueError("not a board name or kernel id (1-64 letters, digits, '.', '_', '+', '-'; it names a folder)")
    return v


Id = Annotated[str, AfterValidator(_id)]


def _timestamp(v: str) -> str:
    try:
        t = dt.datetime.fromisoformat(v)
    except ValueError:
        raise ValueError("not an ISO 8601 timestamp") from None
    if t.tzinfo is None:
        raise ValueError("an ISO 8601 timestamp without a time zone (records write UTC)")
    return v


Timestamp = Annotated[str, Field(max_length=64), AfterValidator(_timestamp)]


def _sha256(v: str) -> str:
    if len(v) != 64 or v.strip("0123456789abcdef"):
        raise ValueError("not a sha256 (64 lowercase hex digits)")
    return v


Sha256 = Annotated[str, AfterValidator(_sha256)]


def _file_name(v: str) -> str:
    if v in ("", ".", "..") or "/" in v or "\\" in v or "\0" in v:
        raise ValueError("not a plain file name")
    return v


FileName = Annotated[str, Field(max_length=255), AfterValidator(_file_name)]


def _rel_path(v: str) -> str:
    if not v or "\0" in v or "\\" in v:
        raise ValueError("not a relative path")
    p = PurePosixPath(v)
    if p.is_absolute():
        raise ValueError("an absolute path: paths in a record are relative to the record's directory")
    if ".." in p.parts:
        raise ValueError("escapes the record's directory")
    if str(p) == ".":
        raise ValueError("names the record's directory itself, not a file in it")
    return v


RelPath = Annotated[str, Field(max_length=1000), AfterValidator(_rel_path)]
"""A path relative to the directory of the record that holds it, never leaving it."""


class ClockInfo(Part):
    """What measured a record's times (model/clocks.py, docs/clock.md): the host clock, or
    QEMU's instruction clock at ns_per_instruction (2^shift).  Records made before the
    instruction clock have none and read as the host clock."""

    kind: Literal["host", "instructions"] = "host"
    shift: Annotated[int, Field(ge=0, le=10)] | None = None
    ns_per_instruction: Annotated[int, Field(ge=1)] | None = None
    seed: Annotated[int, Field(ge=1)] | None = None  # a boot's QEMU -seed (its round), instruction clock only

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.kind == "host" and (self.shift is not None or self.ns_per_instruction is not None or self.seed):
            raise ValueError("the host clock has no instruction shift")
        if self.kind == "instructions" and (self.shift is None or self.ns_per_instruction != 2**self.shift):
            raise ValueError("the instruction clock needs its shift and ns_per_instruction = 2^shift")
        return self


class Environment(Part):
    """The machine a measurement ran on, captured when it ran (util/environment.py):
    the report's Environment section shows it.  Records made before it was captured
    have none (the report says "not recorded")."""

    host: Text  # system, release and architecture: "Linux 6.1.0-13-amd64 x86_64"
    cpu: Text  # the CPU's model name (/proc/cpuinfo), or "unknown"
    cpus: Annotated[int, Field(ge=1)]
    qemu: Text | None  # the first line of the board's `qemu-system-… --version`; None: not a QEMU board
    python: Text
    bringup: Text  # bringup's git commit (short), "(with uncommitted changes)" when the tree had some


# --- records ----------------------------------------------------------------

Migration = Callable[[dict[str, Any]], dict[str, Any]]


class Record(BaseModel):
    """A record kind.  Subclasses set KIND and VERSION, and MIGRATIONS: for each
    older version n still readable, the function that turns an n record into an
    n+1 one (without reading anything but the record)."""

    model_config = CONFIG

    KIND: ClassVar[str]
    VERSION: ClassVar[int]
    MIGRATIONS: ClassVar[Mapping[int, Migration]] = {}

    schema_: str = Field(alias="schema", default="")

    @classmethod
    def schema_name(cls) -> str:
        """The schema this bringup writes, e.g. bringup.build/1."""
        return f"{cls.KIND}/{cls.VERSION}"

    @classmethod
    def readable(cls) -> list[int]:
        """The versions this bringup reads: the current one and those it migrates."""
        out = [cls.VERSION]
        v = cls.VERSION - 1
        while v in cls.MIGRATIONS:
            out.insert(0, v)
            v -= 1
        return out

    @classmethod
    def accepts(cls, data: Mapping[str, Any]) -> bool:
        """Whether data is meant for this model, when several models share a kind."""
        return True

    @model_validator(mode="before")
    @classmethod
    def _fill_schema(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "schema" not in data and "schema_" not in data:
            return {"schema": cls.schema_name(), **data}
        return data

    @model_validator(mode="after")
    def _current_schema(self) -> Self:
        if self.schema_ != self.schema_name():
            raise ValueError(f"schema {self.schema_!r}: this model is {self.schema_name()}")
        return self


class KernelRecord(Record):
    """A record of one kernel of one board (boot, footprint, lmbench, workloads): the
    board and the kernel are its first fields."""

    board: Id
    kernel: Id


# --- errors -----------------------------------------------------------------


def show(v: Any, limit: int = 60) -> str:
    s = repr(v)
    return s if len(s) <= limit else s[: limit - 3] + "..."


def field_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.startswith("function-") or ("[" in part and "]" in part):
            continue  # pydantic's validator steps and union tags, e.g. 'list[str]'
        else:
            out += f".{part}" if out else str(part)
    return out


def one_line(e: ValidationError, where: str, model: type[BaseModel] | None = None) -> str:
    """The first error of a ValidationError as `where: field 'a.b[0]': value: reason`; an
    unknown field with the field of `model` it was likely meant to be."""
    err = fieldnames.first_error(e.errors(include_url=False))
    path = field_path(tuple(err["loc"]))
    msg = err["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if not path:
        return f"{where}: {msg}"
    if err["type"] == "missing":
        return f"{where}: field '{path}': missing (required)"
    if err["type"] == "union_tag_invalid":
        ctx = err.get("ctx") or {}
        tag = str(ctx.get("discriminator", "")).strip("'")
        return f"{where}: field '{path}.{tag}': {show(ctx.get('tag'))}: not one of {ctx.get('expected_tags')}"
    if err["type"] == "extra_forbidden":
        hint = fieldnames.did_you_mean(model, tuple(err["loc"])) if model is not None else ""
        return f"{where}: field '{path}': {show(err['input'])}: not a field of this record{hint}"
    return f"{where}: field '{path}': {show(err['input'])}: {msg}"


def same_fields(d: dict[str, Any]) -> dict[str, Any]:
    """The migration of a version that only added optional fields: the old record reads as it is."""
    return d


def migrations(versions: range, changed: Mapping[int, Migration] | None = None) -> dict[int, Migration]:
    """A Record's MIGRATIONS: for each older version still read, the function `changed`
    gives it, else same_fields (that version's next one only added optional fields)."""
    return {v: (changed or {}).get(v, same_fields) for v in versions}
