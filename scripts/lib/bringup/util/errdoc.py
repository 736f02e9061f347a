"""docs/errors.md, generated from the code: every one-line error bringup can
raise, where it is raised, its exit status, and the message with its variable
parts shown as <...>.  `bringup doc errors` prints it; a test keeps it current."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1]

KINDS = {
    "BringupError": ("2", "bad input or a failed step: the message names the file, field or value"),
    "DataError": ("2", "a data file (board, arch, era, milestones, lmbench set) or a value in it"),
    "BuildFailed": ("3", "a kernel build failed: the message names the step and the log"),
    "BootFailed": ("4", "a boot failed: the message names the milestone, fault or console event"),
    "ParseError": ("2", "a file given to a parser is not what it should be"),
}


def _template(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                out.append(str(part.value))
            elif isinstance(part, ast.FormattedValue):
                out.append(f"<{ast.unparse(part.value)}>")
        return "".join(out)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _template(node.left), _template(node.right)
        if left is not None and right is not None:
            return left + right
    return None


def _raises(node: ast.AST, where: str, out: list[tuple[str, str, str]]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            _raises(child, child.name if where == "<module>" else f"{where}.{child.name}", out)
            continue
        if isinstance(child, ast.Raise) and isinstance(child.exc, ast.Call):
            func = child.exc.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            args = child.exc.args
            if name == "located" and len(args) == 2:  # a model validator's error about one field
                sub = _template(args[0]) or "<field>"
                msg = _template(args[1]) or f"<{ast.unparse(args[1])}>"
                out.append((where, "DataError", f"<file>: field '<table>{'.' + sub if sub else ''}': {msg}"))
            elif name in KINDS and args:
                msg = _template(args[0]) or f"<{ast.unparse(args[0])}>"
                out.append((where, name, " ".join(msg.split())))
        _raises(child, where, out)


def raised(pkg: Path = PKG) -> list[tuple[str, str, str]]:
    """(module:function, exception name, message template) of every raise of a bringup error."""
    out: list[tuple[str, str, str]] = []
    for f in sorted(pkg.rglob("*.py")):
        found: list[tuple[str, str, str]] = []
        _raises(ast.parse(f.read_text(), str(f)), "<module>", found)
        out += [(f"{f.relative_to(pkg)}:{where}", kind, msg) for where, kind, msg in found]
    return out


def markdown(pkg: Path = PKG) -> str:
    rows = raised(pkg)
    lines = [
        "# Errors",
        "",
        "Generated from the code by `bringup doc errors`; do not edit by hand (a test checks it is current).",
        "",
        "Every fault bringup detects ends in one line on standard error, `bringup: error: <message>`, and a",
        "non-zero exit status. Bad input is refused before any work starts; a failed or interrupted step",
        "never replaces a good record. The message names the file, the field and the value at fault, and",
        "where a fix is known it says what to do. `<...>` marks the parts that vary.",
        "",
        "A value given to make (`BOARD=`, `KERNEL=`, `RUNS=`, ...) reaches bringup as one argument, exactly",
        "as typed: the Makefile single-quotes it and takes it unexpanded, so neither make (`$(shell ...)`)",
        "nor the shell (`;`, `` ` ``, `$(...)`, spaces) acts on it, and it follows its option after `=`",
        "(`KERNEL=--force` is a kernel id). Bringup then checks what it means, as for any argument.",
        "An on/off variable (`FORCE=`, `REPLACE=`, `UNTIL_CI=`) is 1 (yes, true, on) or 0 (no, false,",
        "off); any other value is refused. A count (`RUNS=`, `JOBS=`, ...) is ASCII digits only (`1_0`,",
        "` 5` and other scripts' digits are refused, though Python's int() takes them).",
        "",
        "| exception | exit | meaning |",
        "|---|---|---|",
    ]
    lines += [f"| `{k}` | {code} | {meaning} |" for k, (code, meaning) in KINDS.items()]
    lines += [
        "",
        "Other exits: 1 for a file bringup could not read or write (disk full, permissions: the message names",
        "the file), 130 after Ctrl-C, 141 when the reader of its output went away (`bringup boards | head -1`),",
        "70 for a bug in bringup (one line; `BRINGUP_DEBUG=1` shows the traceback). Data-file errors found by",
        "the typed models read `<file>: field '<a.b[0]>': <value>: <reason>`; an unknown field of a data file or",
        "a record, and an unknown option, name the one it was likely meant to be (`did you mean 'memory_mb'?`).",
        "`tests/test_bad_input_corpus.py` checks this for every kind of input and class of fault",
        "(`tests/data/bad-inputs/`).",
        "",
    ]
    current = None
    for where, kind, msg in rows:
        package = where.split("/")[0] if "/" in where else where.split(":")[0]
        if package != current:
            lines += ["", f"## `{package}`", "", "| where | exception | message |", "|---|---|---|"]
            current = package
        text = msg.replace("|", "\\|")
        lines.append(f"| `{where}` | `{kind}` | {text} |")
    return "\n".join(lines).rstrip() + "\n"
