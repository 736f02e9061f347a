"""The Makefile hands what a user types to bringup as one argument each, exactly as typed:
make does not expand it, the shell does not split or run it, an option does not swallow it."""

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAKE = shutil.which("make")
pytestmark = pytest.mark.skipif(MAKE is None, reason="no make")
STAMP = ".venv/.requirements.sha256"


def evil(d: Path) -> str:
    """A value that runs a command in every way make or a shell could run it, has spaces
    and both quotes, and starts like an option."""
    return (
        f"--x a b; touch {d}/semi `touch {d}/tick` $(touch {d}/dollar) $(shell touch {d}/make) "
        f'${{HOME}} it\'s "q" & touch {d}/bg | touch {d}/pipe'
    )


def dry_run(target: str, **variables: str) -> list[str]:
    """The argv of the command `make -n target VAR=...` would run (bringup or a bench script)."""
    argv = [MAKE, "-s", "-n", "-o", STAMP, target] + [f"{k}={v}" for k, v in variables.items()]
    p = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=True)
    lines = [ln for ln in p.stdout.splitlines() if "scripts/bringup" in ln or "bench/" in ln]
    assert len(lines) == 1, p.stdout
    return shlex.split(lines[0])


CASES = [  # (target, variable, option that carries it, other variables the option needs)
    ("build-all", "BOARD", "--board", {}),
    ("build-all", "KERNEL", "--kernel", {}),
    ("build-all", "JOBS", "--jobs", {}),
    ("build-all", "CROSS_COMPILE", "--cross-compile", {}),
    ("build-report", "BOARD", "--board", {}),
    ("boot-timing", "RUNS", "--runs", {}),
    ("boot-timing", "BOOT_PATH", "--path", {}),
    ("boot-timing", "ROOT", "--root", {}),
    ("boot-timing", "PROFILE", "--profile", {}),
    ("boot-timing", "CI_PCT", "--until-ci", {"UNTIL_CI": "1"}),
    ("boot-timing", "MAX_ROUNDS", "--max-rounds", {}),
    ("boot-timing", "PLACES", "--places", {}),
    ("boot-timing", "JOBS", "--jobs", {}),
    ("footprint-report", "JOBS", "--jobs", {}),
    ("workloads", "JOBS", "--jobs", {}),
    ("workloads", "CI_PCT", "--until-ci", {"UNTIL_CI": "1"}),
    ("workloads", "PLACES", "--places", {}),
    ("footprint-report", "LMBENCH", "--lmbench", {}),
    ("footprint-report", "LMBENCH_RUNS", "--lmbench-runs", {}),
    ("footprint-report", "LMBENCH_SRC", "--lmbench-source", {}),
    ("footprint-report", "LMBENCH_SHA256", "--lmbench-sha256", {}),
    ("footprint-report", "KERNEL", "--kernel", {}),
    ("workloads", "WORKLOADS", "--workloads", {}),
    ("workloads", "WORKLOAD_RUNS", "--runs", {}),
    ("workloads", "WORKLOAD_MODE", "--mode", {}),
    ("all", "BOARD", "--board", {}),
    ("all", "JOBS", "--jobs", {}),
    ("all", "LMBENCH_SRC", "--lmbench-source", {}),
    ("all", "WORKLOADS", "--workloads", {}),
    ("all", "WORKLOAD_RUNS", "--workload-runs", {}),
    ("all", "WORKLOAD_MODE", "--workload-mode", {}),
    ("report", "BOARD", "--board", {}),
    ("aa", "KERNEL", "--kernel", {}),
    ("aa", "RUNS", "--runs", {}),
    ("import", "LABEL", "--label", {"KIND": "lmbench", "FILE": "f", "KERNEL": "k"}),
    ("import", "LMBENCH_HOST", "--host", {"KIND": "lmbench", "FILE": "f", "KERNEL": "k"}),
    ("import", "KERNEL", "--kernel", {"KIND": "bootlog", "FILE": "f"}),
    ("import", "ROOT", "--root", {"KIND": "bootlog", "FILE": "f", "KERNEL": "k"}),
    ("bench", "BENCH_ROUNDS", "--rounds", {}),
    ("bench-places", "BENCH_ROUNDS", "-n", {}),
]


@pytest.mark.parametrize(("target", "var", "option", "extra"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_a_value_reaches_its_option_whole_and_runs_nothing(tmp_path, target, var, option, extra):
    value = evil(tmp_path)
    argv = dry_run(target, **extra, **{var: value})
    assert f"{option}={value}" in argv
    assert list(tmp_path.iterdir()) == []  # neither make ($(shell)) nor a shell ran anything


def test_import_takes_kind_and_file_as_positionals_after_double_dash(tmp_path):
    kind, file = evil(tmp_path), f"{tmp_path}/a log; rm -rf x"
    argv = dry_run("import", KIND=kind, FILE=file, KERNEL="k")
    assert argv[-3:] == ["--", kind, file]
    assert "--root=ramdisk" not in argv  # --root goes with a boot log only
    assert "--root=ramdisk" in dry_run("import", KIND="bootlog", FILE=file, KERNEL="k")
    assert list(tmp_path.iterdir()) == []


def test_flags_and_defaults():
    argv = dry_run("boot-timing")
    # no --runs: bringup chooses the rounds from the board's clock (1 on the instruction clock, 5 on the host's)
    assert argv[1:] == ["boot-timing", "--board=qemu-arm", "--root=ramdisk", "--profile=timing"]
    assert "--runs=7" in dry_run("boot-timing", RUNS="7")
    assert "--clock=host" in dry_run("boot-timing", CLOCK="host") and "--clock=host" in dry_run("all", CLOCK="host")
    assert "--delay-ms=1000" in dry_run("ab") and "--delay-ms=250" in dry_run("ab", DELAY_MS="250")
    assert not [a for a in dry_run("aa") if a.startswith("--delay-ms")]
    argv = dry_run("boot-timing", UNTIL_CI="1", BOARD="qemu-x86")
    assert "--until-ci" in argv and "--until-ci-if=1" in argv and "--board=qemu-x86" in argv
    # an on/off variable reaches bringup with its value, which decides (FORCE=0 does not force)
    assert "--force=1" in dry_run("build-all", FORCE="1") and "--force=0" in dry_run("build-all", FORCE="0")
    assert not [a for a in dry_run("build-all") if a.startswith("--force")]


def test_on_off_values_as_make_passes_them():
    from bringup.cli.program import switches as _switches

    assert _switches(["build-all", "--force=1"]) == ["build-all", "--force"]
    assert _switches(["build-all", "--force=0"]) == ["build-all"]
    assert _switches(["import", "--replace=no", "--", "bootlog", "--force=1"]) == [
        "import",
        "--",
        "bootlog",
        "--force=1",
    ]
    assert _switches(["boot-timing", "--until-ci-if=0", "--until-ci=5"]) == ["boot-timing"]
    assert _switches(["boot-timing", "--until-ci-if=1", "--until-ci"]) == ["boot-timing", "--until-ci"]


def test_import_without_its_variables_says_what_it_needs(tmp_path):
    p = subprocess.run(
        [MAKE, "-s", "-o", STAMP, "import", f"KIND=$(shell touch {tmp_path}/x)"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2
    line = p.stderr.strip().splitlines()[0]
    assert line.startswith("bringup: error: make import: give KIND=bootlog|lmbench FILE=<file> KERNEL=<id>"), line
    assert "(missing: FILE= KERNEL=)" in line, line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not (ROOT / ".venv/bin/python").exists(), reason="no venv (make deps)")
def test_a_real_run_with_a_hostile_board_fails_in_one_line_and_runs_nothing(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    p = subprocess.run(
        [MAKE, "-s", "-o", STAMP, "build-report", f"BOARD={evil(tmp_path)}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
    )
    assert p.returncode != 0
    err = [ln for ln in p.stderr.splitlines() if ln.strip() and not ln.startswith("make")]
    assert len(err) == 1 and "board" in err[0], p.stderr
    assert list(tmp_path.iterdir()) == []


def test_bringup_does_not_hand_the_calling_makes_variables_to_the_makes_it_starts(monkeypatch, capsys):
    from bringup import cli

    monkeypatch.setenv("MAKEFLAGS", " -- KERNEL=6.12 CROSS_COMPILE=evil-")
    monkeypatch.setenv("MAKELEVEL", "1")
    monkeypatch.setenv("MAKEOVERRIDES", "${-*-command-variables-*-}")
    assert cli.main(["boards"]) == 0
    assert {"MAKEFLAGS", "MAKELEVEL", "MAKEOVERRIDES"}.isdisjoint(os.environ)
    assert "qemu-arm" in capsys.readouterr().out
