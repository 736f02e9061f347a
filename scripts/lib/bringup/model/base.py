"""What every data-file model shares: strict pydantic models, safe TOML reading,
and one-line errors that name the file, the field and the value.

Data files (boards/, configs/arch, configs/era, configs/milestones.toml,
configs/lmbench.toml) are read once, validated completely, and turned into
typed models before any work starts.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from bringup.errors import BringupError
from bringup.util import fieldnames, smallfile

MAX_DATA_FILE = 1024 * 1024  # a board or config file larger than this is not one

M = TypeVar("M", bound=BaseModel)


class DataError(BringupError):
    """A data file (or a value in it) is not what it should be."""


class Strict(BaseModel):
    """A table of a data file: unknown fields are errors, types are not coerced."""

    model_config = ConfigDict(extra="forbid", strict=True)


# C0 and C1 control characters (a newline, a tab, ESC; \x9b is a terminal's CSI on its own), and the
# invisible characters that reorder or break the text shown around them (bidi overrides, U+2028/9)
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def no_control(v: str) -> str:
    """A text field shown on a terminal or in the report: refused with a control character."""
    m = CONTROL.search(v)
    if m:
        raise ValueError(f"contains the control character {m.group(0)!r} (a newline, a tab or a terminal escape)")
    return v


def first_duplicate(names: list[str]) -> str | None:
    """The first name that appears more than once, or None."""
    return next((n for i, n in enumerate(names) if n in names[:i]), None)


def no_duplicate(names: list[str], field: str, key: str = "name", verb: str = "listed", inside: bool = False) -> None:
    """Refuse a name given twice, naming its second place: as a model validator's error
    about its field (`field[i].key: 'x' is listed twice`), or, inside=True, as a field
    validator's error about the list itself (`[i].key: 'x' is listed twice (first as field[j])`)."""
    for i, n in enumerate(names):
        if n in names[:i]:
            if inside:
                raise ValueError(f"@[{i}].{key}@{n!r} is {verb} twice (first as {field}[{names.index(n)}])")
            raise located(f"{field}[{i}].{key}", f"{n!r} is {verb} twice")


def show(v: Any) -> str:
    s = repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


WRAPPERS = ("function-after", "function-before", "function-plain", "function-wrap")


def field_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in WRAPPERS or ("[" in str(part) and "]" in str(part)):  # pydantic's validator and union tags
            continue
        else:
            name = str(part) if re.fullmatch(r"[A-Za-z0-9_+-]+", str(part)) else show(str(part))
            out += f".{name}" if out else name
    return out or "<top>"


TYPE_WORDS = {
    "string_type": "expected a string",
    "int_type": "expected an integer",
    "int_from_float": "expected an integer",
    "float_type": "expected a number",
    "bool_type": "expected true or false",
    "list_type": "expected a list",
    "dict_type": "expected a table",
    "model_type": "expected a table",
    "model_attributes_type": "expected a table",
    "finite_number": "expected a finite number",
}


def located(sub: str, text: str) -> ValueError:
    """A model validator's error about one of the model's own fields:
    reported as `field '<model path>.<sub>': <text>` (sub may be '')."""
    return ValueError(f"@{sub}@{text}")


def one_line(e: ValidationError, where: str, prefix: str = "", model: type[BaseModel] | None = None) -> str:
    """The first error of a ValidationError as `where: field 'a.b[0]': value: reason`; an
    unknown field with the field of `model` it was likely meant to be."""
    err = fieldnames.first_error(e.errors(include_url=False))
    path = field_path(tuple(err["loc"]))
    if prefix:
        path = prefix if path == "<top>" else f"{prefix}.{path}"
    msg = err["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    if msg.startswith("@") and msg.count("@") >= 2:  # located(): a sub-field of this model, no value dump
        sub, _, text = msg[1:].partition("@")
        if sub:
            path = sub if path == "<top>" else f"{path}.{sub}" if not sub.startswith("[") else f"{path}{sub}"
        return f"{where}: field '{path}': {text}"
    kind = err["type"]
    if kind == "missing":
        return f"{where}: field '{path}': missing (required)"
    if kind == "extra_forbidden":
        hint = fieldnames.did_you_mean(model, tuple(err["loc"])) if model is not None else ""
        return f"{where}: field '{path}': unknown field{hint}"
    if kind in TYPE_WORDS:
        return f"{where}: field '{path}': {TYPE_WORDS[kind]}, got {show(err['input'])}"
    if kind == "literal_error":
        return f"{where}: field '{path}': {show(err['input'])} is not one of {err.get('ctx', {}).get('expected', '')}"
    if kind == "string_pattern_mismatch":
        pattern = err.get("ctx", {}).get("pattern", "")
        return f"{where}: field '{path}': {show(err['input'])}: not of the accepted form ({pattern})"
    if msg.startswith("Input should be "):
        msg = "must be " + msg[len("Input should be ") :]
    return f"{where}: field '{path}': {show(err['input'])}: {msg}"


def validate_as(model: type[M], data: Any, where: str, prefix: str = "", context: dict | None = None) -> M:
    try:
        return model.model_validate(data, context=context)
    except ValidationError as e:
        raise DataError(one_line(e, where, prefix, model)) from None


def regular_file(path: Path, what: str = "file") -> os.stat_result:
    """The stat of a file bringup is asked to read; DataError, in one line, when it is
    missing, a directory, a FIFO, socket or device, or unreadable (symlink loops included)."""
    try:
        return smallfile.regular_file(path, what)
    except BringupError as e:
        raise DataError(str(e)) from None


def read_data_file(path: Path, what: str = "file", limit: int = MAX_DATA_FILE) -> bytes:
    """The bytes of a data file, refusing what is not a small regular file
    (directories, FIFOs, devices, symlink loops, dangling links, huge files)."""
    try:
        return smallfile.read_small(path, what, limit)
    except BringupError as e:
        raise DataError(str(e)) from None


def load_toml(path: Path, what: str = "TOML file") -> dict[str, Any]:
    data = read_data_file(path, what)
    if data.startswith(b"\xef\xbb\xbf"):
        raise DataError(f"{path}: starts with a UTF-8 byte-order mark; save it as plain UTF-8 without BOM")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DataError(f"{path}: is UTF-16; save it as UTF-8")
    nul = data.find(b"\0")
    if nul >= 0:
        raise DataError(f"{path}: holds NUL bytes (byte {nul}): not a text file, so not a {what}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not UTF-8 text (byte {e.start}: {data[e.start : e.start + 1]!r})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise DataError(f"{path}: not valid TOML: {e}") from None
    except RecursionError:
        raise DataError(f"{path}: not valid TOML: nested too deeply") from None
    except ValueError:  # an integer of thousands of digits, which int() refuses to convert
        n, digits = next(
            ((i, m.group(0)) for i, ln in enumerate(text.splitlines(), 1) if (m := re.search(r"\d{100,}", ln))),
            (0, ""),
        )
        raise DataError(f"{path}: line {n}: a {len(digits)}-digit number: beyond any value a data file holds") from None
