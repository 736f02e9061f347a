"""The bad-input corpus (tests/data/bad/, its EXPECTED.toml): every file, given to the
command that reads it, ends in one line that names the file and what is wrong, with
exit 2, no traceback, and nothing written under logs/."""

import tomllib
from pathlib import Path

import pytest

from conftest import run_cli

BAD = Path(__file__).parent / "data" / "bad"
EXPECTED = tomllib.loads((BAD / "EXPECTED.toml").read_text())


def test_every_file_of_the_corpus_is_listed_and_every_listed_file_exists():
    files = {str(p.relative_to(BAD)) for p in BAD.rglob("*") if p.is_file() and p.name != "EXPECTED.toml"}
    assert files == set(EXPECTED)


@pytest.mark.parametrize("rel", sorted(EXPECTED), ids=sorted(EXPECTED))
def test_a_bad_file_is_one_line_naming_it(rel, tmp_path):
    case = EXPECTED[rel]
    f = BAD / rel
    logs = tmp_path / "logs"
    p = run_cli(*case["args"], str(f), env_extra={"BRINGUP_LOGS": str(logs), "BRINGUP_CACHE": str(tmp_path / "c")})
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, p.stderr
    line = lines[0]
    assert line.startswith("bringup: error: ") and f.name in line, line
    for w in case["words"]:
        assert w in line, (w, line)
    assert not logs.exists() or not any(logs.rglob("*"))


def test_a_huge_single_line_is_refused_in_one_line(tmp_path):
    """A few MB without a newline (a capture of a line with no end): read, judged, refused."""
    f = tmp_path / "one-line.log"
    f.write_bytes(b"x" * 4_000_000)
    for kind in ("bootlog", "lmbench", "initcalls"):
        p = run_cli("parse", kind, str(f))
        assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert "one-line.log" in p.stderr
