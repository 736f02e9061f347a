"""The dependency rules of docs/architecture.md, enforced: every import of a
bringup module (at the top of a file or inside a function) is checked against
the layer it comes from.  Also: no Python file names a milestone; milestone
names live in configs/milestones.toml only."""

import ast
import tomllib
from pathlib import Path

import pytest

from bringup.util import paths

PKG = paths.ROOT / "scripts" / "lib" / "bringup"

# layer -> the layers it may import (itself included).  docs/architecture.md draws the same.
BASE = {"errors", "util"}
ALLOWED = {
    "errors": {"errors"},
    "util": BASE,
    "parse": {"parse"},
    "model": BASE | {"parse", "model"},
    "records": BASE | {"records"},
    "stats": {"stats"},
    "build": BASE | {"parse", "model", "records", "build"},
    "boot": BASE | {"parse", "model", "records", "stats", "boot"},
    "targets": BASE | {"parse", "model", "records", "stats", "boot", "targets"},
    "measure": BASE | {"parse", "model", "records", "stats", "boot", "build", "targets", "measure"},
    "report": BASE | {"parse", "model", "records", "stats", "report"},
    "study": BASE | {"parse", "model", "records", "stats", "boot", "build", "targets", "measure", "report", "study"},
    # bringup import: files made elsewhere -> records; parsers and models in, records out, nothing run
    "importer": BASE | {"parse", "model", "records", "stats", "importer"},
    "aa": BASE | {"parse", "model", "records", "stats", "boot", "build", "targets", "measure", "report", "aa"},
    "cli": None,  # the command line may import anything
    "__main__": {"cli"},
    "__init__": set(),
}


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def bringup_imports(f: Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(f.read_text(), str(f))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "bringup":
                out += [(node.lineno, f"bringup.{a.name}") for a in node.names]
            elif node.module.startswith("bringup."):
                out.append((node.lineno, node.module))
        elif isinstance(node, ast.ImportFrom) and node.level:
            out.append((node.lineno, "<relative import>"))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.startswith("bringup")]
    return out


def modules() -> list[Path]:
    return sorted(PKG.rglob("*.py"))


def test_every_module_belongs_to_a_known_layer():
    for f in modules():
        rel = f.relative_to(PKG)
        name = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        assert name in ALLOWED, f"{rel}: not in a layer of docs/architecture.md"


@pytest.mark.parametrize("f", modules(), ids=lambda f: str(f.relative_to(PKG)))
def test_imports_follow_the_layer_rules(f):
    rel = f.relative_to(PKG)
    mine = rel.parts[0] if len(rel.parts) > 1 else rel.stem
    allowed = ALLOWED[mine]
    for line, mod in bringup_imports(f):
        assert mod != "<relative import>", f"{rel}:{line}: use absolute imports (from bringup.x import y)"
        if allowed is None:
            continue
        theirs = layer_of(mod)
        assert theirs in allowed, f"{rel}:{line}: {mine}/ may not import {mod} ({theirs}/); see docs/architecture.md"


def test_the_rule_checker_can_fail(tmp_path):
    """A negative control: a report module importing boot/ is caught."""
    bad = tmp_path / "x.py"
    bad.write_text("def f():\n    from bringup.boot import timing\n")
    assert [m for _, m in bringup_imports(bad)] == ["bringup.boot"]
    assert layer_of("bringup.boot") not in ALLOWED["report"]


def milestone_name_uses(tree: ast.AST, names: set[str]) -> list[tuple[int, str]]:
    """String constants equal to a milestone name used as a key or compared:
    d["login"], x == "login", "login" in d, {"login": ...}, d.get("login")."""

    def hit(node: ast.AST | None) -> bool:
        return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names

    out = []
    for node in ast.walk(tree):
        cands: list[ast.AST | None] = []
        if isinstance(node, ast.Subscript):
            cands.append(node.slice)
        elif isinstance(node, ast.Compare):
            cands += [node.left, *node.comparators]
            for c in node.comparators:
                if isinstance(c, (ast.Tuple, ast.List, ast.Set)):
                    cands += c.elts
        elif isinstance(node, ast.Dict):
            cands += node.keys
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("get", "pop"):
            cands += node.args[:1]
        out += [(c.lineno, c.value) for c in cands if hit(c)]  # type: ignore[union-attr]
    return out


def test_no_python_file_names_a_milestone():
    names = {m["name"] for m in tomllib.loads((paths.CONFIGS / "milestones.toml").read_text())["milestone"]}
    found = []
    for f in modules():
        found += [
            f"{f.relative_to(PKG)}:{line}: {name!r}"
            for line, name in milestone_name_uses(ast.parse(f.read_text()), names)
        ]
    assert not found, "milestone names in Python (use a role flag in configs/milestones.toml): " + ", ".join(found)


def test_the_milestone_check_can_fail():
    tree = ast.parse('def f(m):\n    return m["login"] if "freeing_init" in m else m.get("kernel_load")\n')
    assert sorted(n for _, n in milestone_name_uses(tree, {"login", "freeing_init", "kernel_load"})) == [
        "freeing_init",
        "kernel_load",
        "login",
    ]


def test_docs_errors_is_current():
    from bringup.util import errdoc

    assert (paths.ROOT / "docs" / "errors.md").read_text() == errdoc.markdown(), (
        "docs/errors.md is stale: bringup doc errors > docs/errors.md"
    )


def test_every_error_is_listed_with_its_message():
    """A negative control for the generator: a raise in a function is found with its
    qualified name and its message template."""
    from bringup.util import errdoc

    rows = errdoc.raised()
    assert ("model/board.py:load_board", "DataError") in {(w, k) for w, k, _ in rows}
    assert any("is listed twice" in m for _, _, m in rows)
    assert len(rows) > 100
