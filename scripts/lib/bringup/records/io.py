"""Reading and writing records (docs/records.md).

Writes are atomic (temporary file + fsync + rename in the same directory), so
a reader never sees half a record and an interrupted run never replaces a good
one.  Every record is validated through its model before it is written, and
when it is read; a record of an older version is migrated on read.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar, overload

from pydantic import BaseModel, ValidationError

from bringup.errors import BringupError
from bringup.records.base import Record, RecordError, one_line, show
from bringup.util import smallfile

R = TypeVar("R", bound=Record)

MAX_RECORD = 64 * 1024 * 1024  # a record larger than this is not one

KINDS: dict[str, list[type[Record]]] = {}  # kind -> its models (filled by records/__init__.py)


def boot_timing_name(root: str = "ramdisk", failed: bool = False, profile: str = "timing") -> str:
    """The boot-timing summary's file name under logs/<board>/: ramdisk and NFS-root
    timings are kept apart, so are boot profiles other than `timing`
    (boot-timing-initcalls.json), and a failed invocation's summary never replaces a good one."""
    stem = "boot-timing" if root == "ramdisk" else f"boot-timing-{root}"
    if profile != "timing":
        stem += f"-{profile}"
    return f"{stem}-failed.json" if failed else f"{stem}.json"


# --- writing ----------------------------------------------------------------


def _umask() -> int:
    old = os.umask(0)
    os.umask(old)
    return old


def _default(o: Any) -> Any:
    if isinstance(o, BaseModel):
        return o.model_dump(mode="json", by_alias=True)
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"{type(o).__name__} is not JSON data")


def write_json(path: Path, data: Any) -> None:
    """Any JSON data (exports, the report's model.json), atomically; models inside are
    written as their JSON.  Records go through write(), which validates them."""
    write_text(path, json.dumps(data, indent=2, sort_keys=False, allow_nan=False, default=_default) + "\n")


def write_text(path: Path, text: str) -> None:
    """Atomic write: a temporary file in the same directory, fsync, rename."""
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        os.fchmod(fd, 0o644 & ~_umask())
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        if isinstance(e, OSError) and e.errno is not None:  # named as the file meant, not the temporary one
            raise OSError(e.errno, f"not written: {e.strerror}", str(path)) from None
        raise


def present(path: Path) -> bool:
    """Whether path exists (a dangling symlink counts); a path that cannot be looked at
    (a directory without read or search permission on the way) is a RecordError naming it,
    never "absent"."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as e:
        raise RecordError(f"{path}: cannot be read: {e.strerror}") from None
    return True


def validate(data: Record | Mapping[str, Any], model: type[R], where: str) -> R:
    """data (a model or a dict, as a writer made it) checked against model; RecordError
    naming `where` and the field otherwise."""
    if isinstance(data, Record):
        if not isinstance(data, model):
            raise RecordError(f"{where}: a {data.schema_name()} record, not {model.schema_name()}")
        data = data.model_dump(by_alias=True)
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise RecordError(one_line(e, where, model)) from None


@overload
def write(path: Path, rec: R) -> R: ...
@overload
def write(path: Path, rec: Mapping[str, Any], model: type[R]) -> R: ...
@overload
def write(path: Path, rec: Mapping[str, Any]) -> Record: ...


def write(path: Path, rec: Record | Mapping[str, Any], model: type[Record] | None = None) -> Record:
    """Validate a record and write it atomically; returns the model written.
    A dict names its model by `model`, or by its `schema` field."""
    m, text = render(path, rec, model)
    write_text(path, text)
    return m


def render(path: Path, rec: Record | Mapping[str, Any], model: type[Record] | None = None) -> tuple[Record, str]:
    """A record validated as write() writes it, and its text (path names it in errors)."""
    path = Path(path)
    if model is None:
        model = type(rec) if isinstance(rec, Record) else _model_for(rec, str(path))
    # text from a console or a program (a NUL, an escape, a line without end) is written as
    # plain_text() makes it: a good boot is never lost to what its console sent
    data = rec.model_dump(mode="json", by_alias=True) if isinstance(rec, Record) else rec
    m = validate(_plain(data), model, f"{path}: not written")
    bad = _first_bad(m.model_dump(mode="json", by_alias=True), "")
    if bad is not None:  # what a reader would refuse is never written
        raise RecordError(f"{path}: not written: {_bad_value(*bad)}")
    return m, m.model_dump_json(by_alias=True, indent=2) + "\n"


def _model_for(data: Mapping[str, Any], where: str) -> type[Record]:
    schema = data.get("schema")
    kind = schema.partition("/")[0] if isinstance(schema, str) else None
    models = KINDS.get(kind or "")
    if not models or len(models) != 1:
        raise RecordError(f"{where}: field 'schema': {show(schema)}: give the record's model to write it")
    return models[0]


# --- reading ----------------------------------------------------------------


def load(path: Path) -> Any:
    """The JSON data of a file, refusing what is not a regular file of sane size
    and what is not JSON, or holds a number no record holds (NaN, an infinity, beyond 64 bits)."""
    path = Path(path)
    try:
        raw = smallfile.read_small(path, "record", MAX_RECORD)
    except BringupError as e:  # named as a record, a RecordError as every reading error is
        raise RecordError(str(e)) from None
    text = _text(raw, path)
    try:
        data = json.loads(text, parse_int=_int, object_pairs_hook=_object)
    except _DuplicateKey as e:
        raise RecordError(
            f"{path}: field {show(e.args[0])}: given twice in one object (JSON readers keep either)"
        ) from None
    except json.JSONDecodeError as e:
        raise RecordError(f"{path}: not valid JSON (truncated?): {e}") from None
    except RecursionError:
        raise RecordError(f"{path}: not valid JSON: nested too deeply") from None
    bad = _first_bad(data, "")
    if bad is not None:
        raise RecordError(f"{path}: {_bad_value(*bad)}")
    return data


def _bad_value(field: str, value: Any) -> str:
    """What _first_bad found, in words: "field 'x': <value>: why"."""
    if isinstance(value, _LongInt):
        return f"field '{field}': a {len(value)}-digit number: beyond any value a record holds"
    if isinstance(value, str):
        return f"field '{field}': {show(value)}: {_string_problem(value)}"
    why = "not a finite number" if isinstance(value, float) else "beyond any value a record holds"
    return f"field '{field}': {show(value)}: {why}"


def _text(raw: bytes, path: Path) -> str:
    """A record's bytes as text: UTF-8, not empty, no byte-order mark."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise RecordError(f"{path}: not UTF-8 text (byte {e.start}), so not a record") from None
    if not text.strip():
        raise RecordError(f"{path}: empty, not a record (an interrupted copy?)")
    if text.startswith("\ufeff"):
        raise RecordError(f"{path}: starts with a UTF-8 byte-order mark, which JSON does not allow; save it without")
    return text


MAX_INT = 2**63 - 1  # records hold 64-bit numbers; a reader in another language takes them as they are


class _LongInt(str):
    """An integer of more digits than any record number (int() would refuse thousands)."""


def _int(s: str) -> int | _LongInt:
    return _LongInt(s) if len(s) > 30 else int(s)


class _DuplicateKey(ValueError):
    """A key given twice in one JSON object."""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


MAX_STRING = 100_000  # a string of a record (a key or a value) longer than this is no text a writer wrote
# control characters a record's text never holds (a newline and a tab may be in a message): ESC and
# the rest would reach a terminal or the report as they are; bidi overrides reorder what is shown
STRING_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _string_problem(v: str) -> str | None:
    """Why a string cannot be in a record, or None."""
    if len(v) > MAX_STRING:
        return f"{len(v)} characters: longer than any text a record holds (at most {MAX_STRING})"
    m = STRING_CONTROL.search(v)
    if m:
        return (
            f"holds the control character {m.group(0)!r} (a terminal escape or an invisible one), which no record holds"
        )
    return None


def plain_text(s: str, limit: int = MAX_STRING) -> str:
    """A message (an exception's text) as a record holds it: control characters written as their
    escapes (\\x1b), cut to `limit` characters."""
    s = STRING_CONTROL.sub(lambda m: repr(m.group(0))[1:-1], s)
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _plain(v: Any) -> Any:
    """JSON data with every string (value or key) as plain_text() makes it."""
    if isinstance(v, str):
        return plain_text(v)
    if isinstance(v, Mapping):
        return {plain_text(k) if isinstance(k, str) else k: _plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    if isinstance(v, BaseModel):  # a record or a part of one inside a mapping
        return _plain(v.model_dump(mode="json", by_alias=True))
    return v


def _first_bad(v: Any, path: str) -> tuple[str, Any] | None:
    """The first value of JSON data that no record holds (NaN, an infinity, a number beyond 64 bits,
    a string with a control character or of more than MAX_STRING characters), with its field."""
    if isinstance(v, _LongInt):
        return path or "<top>", v
    if isinstance(v, str):
        return (path or "<top>", v) if _string_problem(v) else None
    if isinstance(v, bool):
        return None
    if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
        return path or "<top>", v
    if isinstance(v, int | float) and abs(v) > MAX_INT:
        return path or "<top>", v
    items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
    for k, x in items:
        if isinstance(k, str) and _string_problem(k):
            return (path or "<top>") + " (a key)", k
        bad = _first_bad(x, f"{path}[{k}]" if isinstance(k, int) else f"{path}.{k}" if path else str(k))
        if bad is not None:
            return bad
    return None


def _schema(data: Any, where: str, kind: str) -> str:
    """The record's `schema` field; RecordError when data is no record (kind names what was expected)."""
    if not isinstance(data, dict):
        what = {list: "an array", str: "a string", int: "a number", float: "a number", bool: "a boolean"}
        raise RecordError(f"{where}: the JSON is {what.get(type(data), 'null')}, not a record (an object)")
    if "schema" not in data:
        raise RecordError(f"{where}: field 'schema': missing (required): not {kind} record")
    return data["schema"]


def _version(data: Any, model: type[Record], where: str) -> int:
    schema = _schema(data, where, f"a {model.KIND}")
    if not isinstance(schema, str):
        raise RecordError(f"{where}: field 'schema': {show(schema)}: not a schema name like {model.schema_name()!r}")
    kind, _, ver = schema.partition("/")
    if kind != model.KIND:
        raise RecordError(f"{where}: field 'schema': {show(schema)}: not a {model.KIND} record")
    readable = model.readable()
    number = (
        re.fullmatch(r"[0-9]{1,9}", ver) is not None
    )  # ASCII digits; str.isdigit() takes '²', int() not 5000 digits
    if not number or int(ver) not in readable:
        newer = number and int(ver) > model.VERSION
        raise RecordError(
            f"{where}: field 'schema': {show(schema)}: version {show(ver)} of {kind} is not readable by this "
            f"bringup (reads {', '.join(map(str, readable))})" + ("; update bringup" if newer else "")
        )
    return int(ver)


def migrate(data: Any, model: type[R], where: str) -> dict[str, Any]:
    """The record's data in the current version of model."""
    v = _version(data, model, where)
    while v < model.VERSION:
        try:
            data = model.MIGRATIONS[v](dict(data))
        except (KeyError, TypeError, AttributeError, ValueError) as e:  # the old record was malformed
            raise RecordError(f"{where}: a {model.KIND}/{v} record that cannot be migrated: {show(e)}") from None
        v += 1
        data["schema"] = f"{model.KIND}/{v}"
    return data


@overload
def read(path: Path, model: type[R]) -> R: ...
@overload
def read(path: Path, model: str | None = None) -> Record: ...


def read(path: Path, model: type[Record] | str | None = None) -> Record:
    """Read a record: checked, migrated to the current version, validated.  model is its
    model (records.Build), a kind by its schema name ('bringup.build'; build.json and
    build-failed.json share one, the record's own fields choose), or None: any kind, as
    the record's `schema` field names it.  Anything wrong raises RecordError (a
    BringupError) in one line naming the file and the field.  Plain data, where a caller
    wants it, is the model's .model_dump(mode="json", by_alias=True)."""
    data = load(path)
    where = str(path)
    chosen = model if isinstance(model, type) else _model_to_read(data, model, where)
    return validate(migrate(data, chosen, where), chosen, where)


def _model_to_read(data: Any, kind: str | None, where: str) -> type[Record]:
    """The model a record is read with: of `kind`, or of the kind its schema field names."""
    if kind is None:
        schema = _schema(data, where, "a")
        kind = schema.partition("/")[0] if isinstance(schema, str) else ""
        if kind not in KINDS:
            raise RecordError(
                f"{where}: field 'schema': {show(schema)}: not a record kind this bringup reads "
                f"(kinds: {', '.join(sorted(KINDS))})"
            )
    models = KINDS.get(kind)
    if not models:
        raise RecordError(f"{where}: {kind!r} is not a record kind (kinds: {', '.join(sorted(KINDS))})")
    if len(models) > 1 and isinstance(data, dict):  # build.json and build-failed.json share a kind
        return next((m for m in models if m.accepts(data)), models[0])
    return models[0]


def artifact(record_file: Path, rel: str, field: str) -> Path:
    """A file a record names by a path relative to its directory, resolved; refused
    (RecordError) when it resolves outside that directory, e.g. through a symlink."""
    base = Path(record_file).parent.resolve()
    try:
        p = (base / rel).resolve()
    except (RuntimeError, OSError):  # a symlink loop (RuntimeError before Python 3.13)
        raise RecordError(f"{record_file}: field {field!r}: {show(rel)}: a symlink loop") from None
    if not p.is_relative_to(base):
        raise RecordError(f"{record_file}: field {field!r}: {show(rel)}: resolves outside the record's directory")
    return p
