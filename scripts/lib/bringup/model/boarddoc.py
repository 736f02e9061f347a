"""docs/board-files.md and docs/board-schema.json, generated from the models of
the board, architecture and era files (`bringup doc board-files`, `bringup doc
board-schema`; a test fails when they are stale)."""

from __future__ import annotations

import json
from typing import Any

from bringup.model.board import ArchFile, EraFile, board_file_model
from bringup.model.targetkind import kinds


def board_schema() -> dict[str, Any]:
    """The JSON Schema of a board file (docs/board-schema.json; `bringup doc board-schema`)."""
    s = board_file_model().model_json_schema()
    s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    s["title"] = "bringup board file (boards/<name>.toml)"
    return s


def board_schema_json() -> str:
    return json.dumps(board_schema(), indent=2, sort_keys=True) + "\n"


def reference_markdown() -> str:
    """docs/board-files.md, generated from the models above (tests check it is current)."""
    from bringup.model.docgen import markdown

    tables = ", ".join(f"`[{k.table}]`" for k in kinds())
    lines = [
        "# Board, architecture and era files",
        "",
        "Generated from the models of `scripts/lib/bringup/model/` (`board.py`, `specs.py`, `values.py`) and "
        f"the target tables of `scripts/lib/bringup/targets/` ({tables}: each kind of target's module) by "
        "`bringup doc board-files`; do not edit by hand.",
        "",
        "A board is `boards/<name>.toml`. It names an architecture (`configs/arch/<arch>.toml`), "
        "and each kernel names an era (`configs/era/<era>.toml`) that selects the build recipe. "
        "Config fragments and config files are paths relative to `configs/` (an absolute path must be an existing "
        "file), and hold Kconfig text only (`CONFIG_X=value`, `# CONFIG_X is not set`, comments). Every file is "
        "validated on load; an error names the file, the field and the value.",
        "",
        "The JSON Schema of a board file is `docs/board-schema.json` (`bringup doc board-schema`); the shipped "
        "boards name it in their first line (`#:schema ../docs/board-schema.json`), so editors with a TOML "
        "language server (Even Better TOML / taplo) complete and check board files as you type.",
        "",
        "## Board files (`boards/*.toml`)",
        "",
    ]
    lines += markdown(board_file_model(), "top level")
    lines += ["## Architecture files (`configs/arch/*.toml`)", ""]
    lines += markdown(ArchFile, "fields")
    lines += [
        "## Era files (`configs/era/*.toml`)",
        "",
        "An era is a build recipe and the compatibility fixes old trees need with today's tools "
        "(explained one by one in `docs/eras.md`). A fix applies when the kernel version, the architecture "
        "and the gcc major version are all in its ranges; the build record lists every fix applied.",
        "",
    ]
    lines += markdown(EraFile, "fields")
    return "\n".join(lines).rstrip() + "\n"
