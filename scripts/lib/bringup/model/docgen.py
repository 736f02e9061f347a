"""Markdown reference tables generated from the data-file models, so the docs
cannot drift from what the loader accepts."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


def _type(p: dict[str, Any], defs: dict[str, Any]) -> tuple[str, str | None]:
    """(type text, name of a nested table definition or None)."""
    if "$ref" in p:
        name = p["$ref"].rsplit("/", 1)[-1]
        return "table", name
    if "anyOf" in p:
        parts = [x for x in p["anyOf"] if x.get("type") != "null"]
        texts: list[str] = []
        nested: str | None = None
        for x in parts:
            t, n = _type(x, defs)
            texts.append(t)
            nested = nested or n
        return " or ".join(dict.fromkeys(texts)), nested
    if "enum" in p:
        return "one of " + ", ".join(f"`{v!r}`" for v in p["enum"]), None
    if "const" in p:
        return f"`{p['const']!r}`", None
    kind = p.get("type")
    if kind == "array":
        inner, nested = _type(p.get("items", {}), defs)
        return ("list of tables" if nested else f"list of {inner}"), nested
    if kind == "object":
        values: dict[str, Any] = p.get("additionalProperties") or next(
            iter(p.get("patternProperties", {}).values()), {}
        )
        inner, _ = _type(values, defs)
        return f"table of {inner}", None
    names = {"string": "string", "integer": "integer", "number": "number", "boolean": "true/false"}
    return names.get(str(kind), str(kind or "any")), None


def _range(p: dict[str, Any]) -> str:
    lo = p.get("minimum", p.get("exclusiveMinimum"))
    hi = p.get("maximum", p.get("exclusiveMaximum"))
    if lo is None and hi is None:
        return ""
    return f" ({lo if lo is not None else ''} .. {hi if hi is not None else ''})"


def markdown(model: type[BaseModel], title: str) -> list[str]:
    schema = model.model_json_schema()
    return _table(schema, schema.get("$defs", {}), title, "")


def _table(schema: dict[str, Any], defs: dict[str, Any], title: str, prefix: str) -> list[str]:
    out = [f"### {title}", "", "| field | type | required | default | meaning |", "|---|---|---|---|---|"]
    nested: list[tuple[str, str]] = []
    required = set(schema.get("required", []))
    for name, p in schema.get("properties", {}).items():
        full = f"{prefix}{name}"
        t, ref = _type(p, defs)
        if ref:
            nested.append((f"{full}[]" if t.startswith("list") else full, ref))
        default = p.get("default")
        shown = (
            "" if name in required or default in (None, "", [], {}) or isinstance(default, dict) else f"`{default!r}`"
        )
        doc = (p.get("description") or "").replace("|", "\\|")
        out.append(f"| `{full}` | {t}{_range(p)} | {'yes' if name in required else ''} | {shown} | {doc} |")
    out.append("")
    for full, ref in nested:
        out += _table(defs[ref], defs, f"`{full}`", f"{full}.")
    return out
