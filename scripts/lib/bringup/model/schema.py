"""A tiny validator for data files (boards, architectures, eras).

A spec is a dict: field name -> Field.  Errors name the file, the dotted field
path and the offending value, on one line.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bringup.errors import BringupError


class DataError(BringupError):
    pass


_MISSING = object()


@dataclass
class Field:
    type: Any  # a type, a tuple of types, or a dict (nested spec)
    required: bool = False
    default: Any = None
    choices: tuple | None = None
    check: Callable[[Any], str | None] | None = None  # returns an error text or None
    items: Any = None  # for lists: the item type or nested spec
    doc: str = ""


def load_toml(path: Path) -> dict:
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise DataError(f"{path}: no such file")
    except tomllib.TOMLDecodeError as e:
        raise DataError(f"{path}: not valid TOML: {e}")


def validate(data: Any, spec: dict, where: str, path: str = "") -> dict:
    """Check `data` against `spec`; returns a new dict with defaults filled in."""
    if not isinstance(data, dict):
        raise DataError(f"{where}: field '{path or '<top>'}': expected a table, got {_show(data)}")
    unknown = sorted(set(data) - set(spec))
    if unknown:
        name = f"{path}.{unknown[0]}" if path else unknown[0]
        raise DataError(f"{where}: field '{name}': unknown field (known: {', '.join(sorted(spec))})")
    out = {}
    for key, f in spec.items():
        name = f"{path}.{key}" if path else key
        value = data.get(key, _MISSING)
        if value is _MISSING:
            if f.required:
                raise DataError(f"{where}: field '{name}': missing (required)")
            out[key] = _copy_default(f.default)
            continue
        out[key] = _check_value(value, f, where, name)
    return out


def _check_value(value, f: Field, where, name):
    if isinstance(f.type, dict):
        return validate(value, f.type, where, name)
    if f.type is list:
        if not isinstance(value, list):
            raise DataError(f"{where}: field '{name}': expected a list, got {_show(value)}")
        res = []
        for i, item in enumerate(value):
            iname = f"{name}[{i}]"
            if isinstance(f.items, dict):
                res.append(validate(item, f.items, where, iname))
            elif f.items is not None and not _isinstance(item, f.items):
                raise DataError(f"{where}: field '{iname}': expected {_tname(f.items)}, got {_show(item)}")
            else:
                res.append(item)
        value = res
    elif not _isinstance(value, f.type):
        raise DataError(f"{where}: field '{name}': expected {_tname(f.type)}, got {_show(value)}")
    if f.choices is not None and value not in f.choices:
        raise DataError(
            f"{where}: field '{name}': {_show(value)} is not one of " + ", ".join(repr(c) for c in f.choices)
        )
    if f.check is not None:
        err = f.check(value)
        if err:
            raise DataError(f"{where}: field '{name}': {_show(value)}: {err}")
    return value


def _isinstance(value, t) -> bool:
    types = t if isinstance(t, tuple) else (t,)
    if isinstance(value, bool) and bool not in types:
        return False
    return isinstance(value, types)


def _tname(t) -> str:
    types = t if isinstance(t, tuple) else (t,)
    names = {str: "a string", int: "an integer", float: "a number", bool: "true/false", list: "a list", dict: "a table"}
    return " or ".join(names.get(x, x.__name__) for x in types)


def _show(v) -> str:
    s = repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


def _copy_default(d):
    if isinstance(d, (list, dict)):
        import copy

        return copy.deepcopy(d)
    return d


def is_hex_address(v) -> str | None:
    if isinstance(v, int):
        return None if v >= 0 else "must not be negative"
    try:
        int(v, 16)
        return None
    except ValueError:
        return "not a hex address like 0x40008000"


def is_sha256(v) -> str | None:
    if len(v) == 64 and all(c in "0123456789abcdef" for c in v.lower()):
        return None
    return "not a sha256 (64 hex digits)"


def markdown(spec: dict, title: str, prefix: str = "") -> list[str]:
    """Markdown tables describing a spec (nested tables get their own section)."""
    out = [f"### {title}", "", "| field | type | required | default | meaning |", "|---|---|---|---|---|"]
    nested = []
    for name, f in spec.items():
        full = f"{prefix}{name}"
        if isinstance(f.type, dict):
            t = "table"
            nested.append((full, f.type))
        elif f.type is list and isinstance(f.items, dict):
            t = "list of tables"
            nested.append((f"{full}[]", f.items))
        elif f.type is list:
            t = f"list of {_tname(f.items).replace('a ', '').replace('an ', '')}s" if f.items else "list"
        else:
            t = _tname(f.type).replace("a ", "").replace("an ", "")
        default = "" if f.required or f.default in (None, "", [], {}) else f"`{f.default!r}`"
        doc = f.doc
        if f.choices:
            doc = (doc.rstrip(".") + ". " if doc else "") + f"One of {', '.join(repr(c) for c in f.choices)}."
        out.append(f"| `{full}` | {t} | {'yes' if f.required else ''} | {default} | {doc.strip()} |")
    out.append("")
    for full, sub in nested:
        out += markdown(sub, f"`{full}`", f"{full}.")
    return out
