"""The field a misspelt one was meant to be: the names a pydantic model knows where a
validation error points (`qemu.machin` -> the fields of [qemu]), and the closest of them.
Used by the one-line errors of data files (model/base.py) and records (records/base.py)."""

from __future__ import annotations

import difflib
import typing
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel


def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    """The pydantic models an annotation holds: itself, or inside Optional, list, dict, Annotated, unions."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for arg in typing.get_args(annotation):
        yield from _models_in(arg)


def known_fields(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    """The fields (and their aliases) of the table a ValidationError's location `loc` (the
    unknown field's own name left out) is in: a part that names a field steps into the
    models of its type; list indexes, dict keys and pydantic's validator steps are passed over."""
    models = [model]
    for part in loc:
        named = [m for m in models if isinstance(part, str) and part in m.model_fields]
        if named:
            models = [inner for m in named for inner in _models_in(m.model_fields[str(part)].annotation)]
    names: set[str] = set()
    for m in models:
        for name, info in m.model_fields.items():
            names |= {name} | ({info.alias} if isinstance(info.alias, str) else set())
    return sorted(names)


def did_you_mean(model: type[BaseModel], loc: tuple[int | str, ...]) -> str:
    """' (did you mean 'memory_mb'?)' for an unknown field at loc, or '' when none is close."""
    if not loc or not isinstance(loc[-1], str):
        return ""
    close = difflib.get_close_matches(loc[-1], known_fields(model, loc[:-1]), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def first_error(errors: list[Any]) -> Any:
    """The error of a ValidationError's list to report: the first, except that an unknown field
    beside a missing one it is close to (`imagse` where `images` is required) explains it: that one."""
    first = errors[0]
    if first["type"] == "missing" and first["loc"] and isinstance(first["loc"][-1], str):
        parent, name = tuple(first["loc"][:-1]), first["loc"][-1]
        for err in errors:
            typo = err["loc"][-1] if err["type"] == "extra_forbidden" and err["loc"] else None
            if tuple(err["loc"][:-1]) == parent and isinstance(typo, str) and _close(typo, name):
                return err
    return first


def _close(a: str, b: str) -> bool:
    return bool(difflib.get_close_matches(a, [b], n=1, cutoff=0.6))
