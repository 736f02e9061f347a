"""The dependency rules of docs/architecture.md, enforced: every import of a
bringup module (at the top of a file or inside a function) is checked against
the layer it comes from.  Also: no Python file names a milestone; milestone
names live in configs/milestones.toml only."""

import ast
import re
import tomllib
from pathlib import Path

import pytest

from bringup.util import paths

PKG = paths.ROOT / "scripts" / "lib" / "bringup"

DOC = paths.ROOT / "docs" / "architecture.md"
ROW = re.compile(r"^\| `([\w.]+?)(?:\.py|/)` \| .* \| ([^|]+) \|$", re.M)
ARROW = re.compile(r"^    ([\w]+) ──> ([\w, ]+?)(?: \(and everything\))?$", re.M)


def table(text: str) -> dict[str, set[str] | None]:
    """docs/architecture.md's table: layer -> the layers it may import (None: everything)."""
    out: dict[str, set[str] | None] = {}
    for name, cell in ROW.findall(text):
        cell = cell.strip()
        out[name] = None if cell == "everything" else set() if cell == "nothing" else set(re.findall(r"`(\w+)`", cell))
    return out


def drawing(text: str) -> dict[str, set[str]]:
    """The drawing's arrows: layer -> the layers it points at."""
    out: dict[str, set[str]] = {}
    for name, targets in ARROW.findall(text):
        out.setdefault(name, set()).update(x.strip() for x in targets.split(","))
    return out


def reach(arrows: dict[str, set[str]], start: str, stop: frozenset[str] = frozenset()) -> set[str]:
    """The layers start reaches by arrows (itself included), not going on from those in stop."""
    seen, todo = {start}, [start]
    while todo:
        at = todo.pop()
        if at in stop and at != start:
            continue
        for nxt in arrows.get(at, ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


# layer -> the layers it may import (itself included): the table of docs/architecture.md, the one source
ALLOWED = table(DOC.read_text(encoding="utf-8"))


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


def test_the_table_names_every_package_and_module_and_nothing_else():
    code = {f.name.removesuffix(".py") for f in PKG.iterdir() if f.suffix == ".py" or (f / "__init__.py").is_file()}
    missing, extra = sorted(code - set(ALLOWED)), sorted(set(ALLOWED) - code)
    assert not missing and not extra, f"docs/architecture.md's table: missing {missing}, no such code {extra}"
    assert ALLOWED["parse"] == {"parse"} and ALLOWED["cli"] is None  # the table was read, not guessed


def test_the_drawing_says_what_the_table_says():
    """Each layer reaches by the drawing's arrows exactly the layers the table lets it import
    (a layer the table lets import everything is drawn with "(and everything)"; what reaches
    it may import it, not what it imports)."""
    arrows = drawing(DOC.read_text(encoding="utf-8"))
    anything = frozenset(n for n, a in ALLOWED.items() if a is None)
    assert set(arrows) | {x for v in arrows.values() for x in v} <= set(ALLOWED), "a layer the table does not have"
    for name, allowed in ALLOWED.items():
        if allowed is None:
            continue
        drawn = reach(arrows, name, anything)
        assert drawn - {name} == allowed - {name}, (
            f"docs/architecture.md: {name} reaches {sorted(drawn)} in the drawing, the table says {sorted(allowed)}"
        )


def test_the_drawing_check_can_fail():
    """A negative control: an arrow the table does not allow (report ──> boot) is caught."""
    text = DOC.read_text(encoding="utf-8").replace(
        "    report ──> records, model, stats", "    report ──> records, model, stats, boot"
    )
    arrows = drawing(text)
    assert "boot" in reach(arrows, "report") and "boot" not in (ALLOWED["report"] or set())
    bad = table("| `report/` | x | `records`, `boot` |\n")
    assert bad == {"report": {"records", "boot"}}


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
