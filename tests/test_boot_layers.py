"""The boot engine's layering: boot/ drives any Target and knows none; targets/
implement the protocol.  (The issue "architecture": boot/ imports only errors,
util, parse, model, records and boot/; targets/ add boot/; measure/ may use
boot/, build/ and targets/.)"""

import ast
from pathlib import Path

import pytest

import bringup

PKG = Path(bringup.__file__).parent
ALLOWED = {
    "boot": {"errors", "util", "parse", "model", "records", "boot"},
    "targets": {"errors", "util", "model", "boot", "targets"},
}


def imports(f: Path) -> set[str]:
    """The bringup subpackages (or top-level modules) a file imports."""
    out = set()
    for node in ast.walk(ast.parse(f.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] if node.module != "bringup" else [f"bringup.{a.name}" for a in node.names]
        out |= {n.split(".")[1] for n in names if n.startswith("bringup.")}
    return out


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_only_what_it_may(package):
    wrong = {
        f.name: sorted(imports(f) - ALLOWED[package])
        for f in (PKG / package).glob("*.py")
        if imports(f) - ALLOWED[package]
    }
    assert wrong == {}, f"{package}/ imports outside its layer"


def test_the_boot_engine_never_asks_what_target_it_has():
    for f in (PKG / "boot").glob("*.py"):
        tree = ast.parse(f.read_text())
        text = f.read_text()
        assert "10.0.2.2" not in text, f"{f.name}: QEMU's host address belongs to targets/qemu.py"
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "qemu":
                raise AssertionError(f"{f.name}:{node.lineno}: looks at the board's [qemu] table")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("isinstance", "getattr")
            ):
                arg = ast.unparse(node.args[0]) if node.args else ""
                assert "target" not in arg, f"{f.name}:{node.lineno}: {ast.unparse(node)}"
