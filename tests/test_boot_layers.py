"""The boot engine's layering: boot/ drives any Target and knows none; targets/
implement the protocol.  (The import rules of every layer are checked by
tests/test_architecture.py.)"""

import ast
from pathlib import Path

import bringup

PKG = Path(bringup.__file__).parent


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
