"""The bad-input corpus by kind and class (tests/data/bad-inputs/<kind>.toml): for every kind
of input bringup takes (board files, each data file under configs/, the command line and the
Makefile's variables, BRINGUP_* variables, records read back, files to import, local kernel
trees and tarballs) and every class of fault that applies to it (CLASSES), cases that run the
real command and end in exactly one line, `bringup: error: ...`, naming the file, the field and
the value, with the documented exit status (docs/errors.md: 2 for bad input), no traceback,
and no work started: nothing new under the test's directory (no logs, no cache, no build
tree) and no QEMU, mkimage or NFS server started (PATH holds stand-ins that would say so).

A case is a table of its kind's file:
  class   one of CLASSES
  why     what is wrong, in words
  file    where the bad file goes under the test's directory (default: base's name)
  text    the file's text, or base (a file of the project) with sub = [[old, new], ...] and append
  setup   files = {name = text}, dirs = [names], tars = {name = [member names]} made first
  args    bringup's arguments, or make = [target, VAR=value, ...] for a value that comes from make
  env     environment variables of the run
  field   the field, option or variable the line must name; value: the value it must show
  words   more words the line must hold
  exit    the exit status (default 2)
Placeholders in text, args, env and words: {tmp} (the test's directory), {file} (the bad
file), {data} (tests/data)."""

from __future__ import annotations

import os
import re
import subprocess
import tarfile
import tomllib
from pathlib import Path

import pytest

from conftest import run_cli

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(__file__).parent / "data" / "bad-inputs"
DATA = Path(__file__).parent / "data"
BRINGUP = ROOT / "scripts" / "bringup"

CLASSES = {
    "missing": "a required field left out",
    "unknown-field": "a field bringup does not know: a typo of a real one, which the line suggests",
    "wrong-type": "a value of the wrong type",
    "zero": "0 where the value must be above it",
    "negative": "a negative number",
    "huge": "a number beyond any sensible value",
    "empty": "an empty string",
    "metachar": "shell, make or U-Boot syntax (; $( ` newline space) in a value that reaches them",
    "path-escape": "a path that leaves its directory (../, absolute)",
    "dangling": "a reference to something that does not exist (kernel id, arch, era, bench, workload, milestone)",
    "duplicate": "one name given twice",
    "syntax": "a TOML or JSON syntax error, named with its line",
}

# Which classes apply to which kind of input: the corpus must hold a case of each.  What is
# left out has no such value (the reason is beside each kind).
ALL = set(CLASSES)
NAMES = {"wrong-type", "empty", "metachar", "path-escape", "dangling", "duplicate", "syntax"}
APPLIES = {
    "board": ALL,
    "arch": ALL - {"zero", "negative", "huge"},  # an architecture file holds no numbers
    "era": ALL,
    "milestones": ALL - {"metachar", "path-escape"},  # names and regexes reach no command, name no path
    "lmbench-set": ALL,
    "workload": ALL,
    "profile": ALL,  # its path escape: a profile named by a path (--profile, PROFILE=)
    "clock": ALL - {"missing", "metachar", "path-escape"},  # numbers with defaults keyed by findings' keys
    "fragment": NAMES,  # Kconfig text: no fields, numbers or references inside; its name in the board file
    "command-line": ALL - {"syntax"},
    "make": ALL - {"syntax", "unknown-field"},  # make takes any variable; an unknown one is no input of bringup's
    "environment": {"wrong-type", "metachar", "dangling"},  # one string each: empty is unset, its directories anywhere
    "record": ALL,
    "import": ALL - {"unknown-field", "zero", "negative"},  # text a parser reads, and the values given with it
    "kernel-source": ALL - {"zero", "negative", "huge"},  # paths and names
}  # fmt: skip
KINDS = sorted(APPLIES)

# stand-ins for what only work would start: each writes its name to STARTED and fails
STARTED_BY = ("qemu-system-arm", "qemu-system-i386", "qemu-system-x86_64", "qemu-system-ppc", "qemu-system-aarch64",
              "mkimage", "ganesha.nfsd", "labgrid-client", "tftp", "apt-get", "dpkg-deb")  # fmt: skip


MAKE_TRAILER = re.compile(r"make(\[\d+\])?: \*\*\* \[")
MAKE_HANDOVER = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "MAKEFILES")  # of a make running the tests


def _cases() -> dict[str, dict]:
    out: dict[str, dict] = {}
    for f in sorted(CORPUS.glob("*.toml")):
        for name, case in tomllib.loads(f.read_text()).items():
            out[f"{f.stem}/{name}"] = case
    return out


CASES = _cases()
# the cases run as the real scripts/bringup in a process of its own (the first of each kind, and
# every make case, which make starts); the others run bringup's main() in the test's process,
# the same code without a Python start and bringup's imports (about a second each)
REAL = {min(k for k in CASES if k.startswith(f"{kind}/")) for kind in APPLIES}


def test_every_kind_has_a_file_and_every_case_a_known_class_and_its_kinds_classes_a_case():
    assert sorted(f.stem for f in CORPUS.glob("*.toml")) == KINDS
    for key, case in CASES.items():
        assert case.get("class") in CLASSES, (key, case.get("class"))
        assert ("args" in case) != ("make" in case), key
        assert "field" in case, key
        assert "value" in case or case["class"] == "missing", key
    covered = {(key.split("/")[0], case["class"]) for key, case in CASES.items()}
    wanted = {(kind, c) for kind in KINDS for c in APPLIES[kind]}
    assert sorted(wanted - covered) == []
    assert sorted(covered - wanted) == []


def _fill(s: str, tmp: Path, file: Path | None) -> str:
    return s.replace("{tmp}", str(tmp)).replace("{file}", str(file or "")).replace("{data}", str(DATA))


def _setup(case: dict, tmp: Path) -> Path | None:
    """The case's files under tmp; the bad file's path (None when the case has none)."""
    setup = case.get("setup", {})
    for d in setup.get("dirs", []):
        (tmp / d).mkdir(parents=True, exist_ok=True)
    for name, text in setup.get("files", {}).items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(_fill(text, tmp, None))
    for name, members in setup.get("tars", {}).items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        with tarfile.open(tmp / name, "w:gz") as tf:
            for m in members:
                info = tarfile.TarInfo(m)
                info.size = 0
                tf.addfile(info)
    if "text" not in case and "base" not in case:
        return None
    file = tmp / case.get("file", Path(case.get("base", "input")).name)
    if "text" in case:
        text = case["text"]
    else:
        text = (ROOT / case["base"]).read_text()
        for old, new in case.get("sub", []):
            assert old in text, (case["base"], old)
            text = text.replace(old, new, 1)
        text += case.get("append", "")
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(_fill(text, tmp, file))
    return file


def _stand_ins(tmp: Path) -> tuple[Path, Path]:
    bin_dir, started = tmp / "bin", tmp / "started"
    bin_dir.mkdir()
    for name in STARTED_BY:
        (bin_dir / name).write_text(f'#!/bin/sh\necho "$0 $*" >> {started}\nexit 1\n')
        (bin_dir / name).chmod(0o755)
    return bin_dir, started


def _argv(case: dict, tmp: Path, file: Path | None) -> list[str]:
    if "args" in case:
        return [str(BRINGUP), *(_fill(a, tmp, file) for a in case["args"])]
    target, *variables = case["make"]
    # the deps stamp taken as made: the case runs the target's recipe, scripts/bringup as make starts it
    return ["make", "-s", "--no-print-directory", "-o", ".venv/.requirements.sha256", target,
            *(_fill(v, tmp, file) for v in variables)]  # fmt: skip


def _tree(d: Path) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*"))


@pytest.mark.parametrize("key", sorted(CASES), ids=sorted(CASES))
def test_bad_input_is_one_line_naming_file_field_and_value_before_any_work(key, tmp_path):
    case = CASES[key]
    work = tmp_path / "work"
    work.mkdir()
    file = _setup(case, work)
    bin_dir, started = _stand_ins(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in MAKE_HANDOVER}
    env.update({"BRINGUP_LOGS": str(work / "logs"), "BRINGUP_CACHE": str(work / "cache")})
    env.update({k: _fill(v, work, file) for k, v in case.get("env", {}).items()})
    env["PATH"] = f"{bin_dir}:{env['PATH']}"
    before = _tree(work)
    if "make" in case or key in REAL:
        p = subprocess.run(_argv(case, work, file), cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    else:  # bringup's main() in this process, as scripts/bringup runs it (a second less each)
        p = run_cli(*_argv(case, work, file)[1:], env_extra={k: v for k, v in env.items() if os.environ.get(k) != v})
    # make's own line about the recipe that failed ("make: *** [Makefile:139: build-all] Error 2") is not bringup's
    lines = [ln for ln in p.stderr.splitlines() if ln.strip() and not ("make" in case and MAKE_TRAILER.match(ln))]
    assert "Traceback" not in p.stderr, p.stderr
    assert len(lines) == 1, p.stderr
    line = lines[0]
    assert line.startswith("bringup: error: "), line
    assert p.returncode == case.get("exit", 2), (p.returncode, line)
    if file is not None:
        assert file.name in line, (file.name, line)
    for w in [case["field"], *([case["value"]] if "value" in case else []), *case.get("words", [])]:
        assert _fill(w, work, file) in line, (w, line)
    assert _tree(work) == before, "work started: " + ", ".join(sorted(set(_tree(work)) - set(before))[:5])
    assert not started.exists(), started.read_text()
