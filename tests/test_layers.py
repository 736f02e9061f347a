"""The package's dependency rules, read from the source (every import, also
those inside functions):

  parse/   imports nothing else of bringup (parsers stand alone, errors included)
  util/    imports only bringup.errors and util/
  report/  never imports boot/, build/ or measure/ (reports read records)
"""

import ast
from pathlib import Path

import pytest

import bringup

PKG = Path(bringup.__file__).parent


def bringup_imports(source: str, package: str) -> set[str]:
    """The bringup modules that source (a module of `package`) imports, as dotted names."""
    here = package.split(".")
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "bringup"}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(here[: len(here) - node.level + 1] + ([base] if base else []))
            if base.split(".")[0] == "bringup":
                # `from bringup import records` imports bringup.records
                out |= {f"{base}.{a.name}" if base == "bringup" else base for a in node.names}
    return out


def within(name: str, *allowed: str) -> bool:
    return any(name == a or name.startswith(a + ".") for a in allowed)


RULES = {
    "parse": lambda m: within(m, "bringup.parse"),
    "util": lambda m: within(m, "bringup.util", "bringup.errors"),
    "report": lambda m: not within(m, "bringup.boot", "bringup.build", "bringup.measure"),
}


@pytest.mark.parametrize("sub", sorted(RULES))
def test_dependency_rules(sub):
    files = sorted((PKG / sub).rglob("*.py"))
    assert files
    bad = [
        f"{f.relative_to(PKG)} imports {m}"
        for f in files
        for m in sorted(bringup_imports(f.read_text(), ".".join(["bringup", *f.relative_to(PKG).parts[:-1]])))
        if not RULES[sub](m)
    ]
    assert bad == []


def test_the_checker_sees_every_kind_of_import():
    src = """
import os
import bringup.records
from bringup import errors, study
from . import kconfig
from ..util import paths
def late():
    from bringup.build.kernel import parse_config
"""
    assert bringup_imports(src, "bringup.parse") == {
        "bringup.records",
        "bringup.errors",
        "bringup.study",
        "bringup.parse",
        "bringup.util",
        "bringup.build.kernel",
    }
