"""The bad-input corpus (tests/data/bad/, its EXPECTED.toml): every file, given to the
command that reads it, ends in one line that names the file and what is wrong, with
exit 2, no traceback, and nothing written under logs/.  Its ARGS.toml: bad values on
the command line, given to scripts/bringup or through make, end the same way, before
any work starts."""

import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from conftest import run_cli

BAD = Path(__file__).parent / "data" / "bad"
ROOT = Path(__file__).resolve().parent.parent
EXPECTED = tomllib.loads((BAD / "EXPECTED.toml").read_text())
ARGS = tomllib.loads((BAD / "ARGS.toml").read_text())
LISTS = ("EXPECTED.toml", "ARGS.toml")


def test_every_file_of_the_corpus_is_listed_and_every_listed_file_exists():
    files = {str(p.relative_to(BAD)) for p in BAD.rglob("*") if p.is_file() and p.name not in LISTS}
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


def _argv(case: dict) -> list[str]:
    """The bringup arguments of a case: its args ({data} is tests/data), or what
    `make -n <target> VAR=value ...` would pass to scripts/bringup."""
    if "make" not in case:
        return [a.replace("{data}", str(BAD.parent)) for a in case["args"]]
    make = shutil.which("make")
    if make is None:
        pytest.skip("no make")
    target, *variables = case["make"]
    argv = [make, "-s", "-n", "-o", ".venv/.requirements.sha256", target, *variables]
    out = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    lines = [ln for ln in out.splitlines() if "scripts/bringup" in ln]
    assert len(lines) == 1, out
    words = [w for w in shlex.split(lines[0]) if not w.startswith(">")]  # make all's >/dev/null
    return words[next(i for i, w in enumerate(words) if w.endswith("scripts/bringup")) + 1 :]


@pytest.mark.parametrize("name", sorted(ARGS), ids=sorted(ARGS))
def test_a_bad_command_line_value_is_one_line_before_any_work(name, tmp_path):
    case = ARGS[name]
    logs, cache = tmp_path / "logs", tmp_path / "cache"
    p = run_cli(*_argv(case), env_extra={"BRINGUP_LOGS": str(logs), "BRINGUP_CACHE": str(cache)})
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("bringup: error: "), lines[0]
    for w in case["words"]:
        assert w in lines[0], (w, lines[0])
    for d in (logs, cache):  # refused before any work: no ramdisk, download or record
        assert not d.exists() or not any(d.rglob("*")), sorted(d.rglob("*"))[:5]


def test_the_parsers_number_guards_name_the_line_and_field():
    """integer() refuses what int() would crash on; checked() refuses what JSON cannot hold."""
    from bringup.parse.errors import LongNumber, ParseError, checked, integer, numbers

    assert integer("12") == 12 and integer("-7") == -7
    with pytest.raises(LongNumber, match=r"^a 5000-digit number '9+\.\.\.: beyond any value a log holds$"):
        integer("9" * 5000)
    with pytest.raises(ParseError, match=r"^f\.log: line 4: a 31-digit number"), numbers("f.log", "x", 4):
        integer("1" * 31)
    result = {"total": 10**30, "entries": [{"line": 3, "s": 1.0}, {"line": 7, "s": float("-inf")}]}
    with pytest.raises(ParseError, match=r"^f\.log: line 7: field 'entries\[1\]\.s': -inf: not a finite number$"):
        checked(result, "f.log")
    result["entries"].pop()
    with pytest.raises(ParseError, match=r"^f\.log: field 'total': 10+: beyond any value a log holds$"):
        checked(result, "f.log")
    ok = {"n": 2**63 - 1, "x": 1.5, "flag": True, "rows": [[1, 2.0]]}
    assert checked(ok, "f.log") is ok


# Bad values in the environment: (variable, value with {tmp} the test's directory, the
# bringup arguments, words of the one-line error).  {tmp}/file is a regular file.
ENV_CASES = {
    "logs-is-a-file": ("BRINGUP_LOGS", "{tmp}/file", ["import", "--board", "qemu-arm", "--kernel", "imp", "bootlog"],
                       ["BRINGUP_LOGS=", "file'", "not a directory"]),
    "logs-under-a-file": ("BRINGUP_LOGS", "{tmp}/file/logs", ["report", "--board", "qemu-arm"],
                          ["BRINGUP_LOGS=", "is not a directory"]),
    "cache-is-a-file": ("BRINGUP_CACHE", "{tmp}/file", ["footprint-report", "--board", "qemu-arm"],
                        ["BRINGUP_CACHE=", "not a directory"]),
    "cache-with-a-space": ("BRINGUP_CACHE", "{tmp}/my cache", ["workloads", "--board", "qemu-arm"],
                           ["BRINGUP_CACHE=", "my cache'", "' '", "kernel's make"]),
    "cache-with-a-colon": ("BRINGUP_CACHE", "{tmp}/a:b", ["footprint-report", "--board", "qemu-arm"],
                           ["BRINGUP_CACHE=", "':'"]),
    "lg-coordinator-not-host-port": ("LG_COORDINATOR", "lab host:20408", ["boot-timing", "--board", "labgrid-example"],
                                     ["LG_COORDINATOR='lab host:20408'", "HOST:PORT"]),
    "mirror-newline": ("BRINGUP_DEBIAN_MIRROR", "http://deb.example/debian\ndeb http://evil/ x main",
                       ["build-all", "--board", "qemu-arm"], ["BRINGUP_DEBIAN_MIRROR=", "not a mirror URL"]),
    # on/off variables took any value but 0 as on (BRINGUP_CCACHE=off built with ccache)
    "ccache-not-a-switch": ("BRINGUP_CCACHE", "disabled", ["build-all", "--board", "qemu-arm", "--kernel", "nosuch"],
                            ["BRINGUP_CCACHE='disabled'", "give 1"]),
    "host-guard-not-a-switch": ("BRINGUP_HOST_GUARD", "maybe",
                                ["boot-timing", "--board", "qemu-arm", "--kernel", "nosuch"],
                                ["BRINGUP_HOST_GUARD='maybe'", "give 1"]),
    # a download directory that is a file, or ~nosuchuser: found only when a URL source was fetched
    "dl-dir-is-a-file": ("BRINGUP_DL_DIR", "{tmp}/file", ["build-all", "--board", "qemu-arm", "--kernel", "nosuch"],
                         ["BRINGUP_DL_DIR", "file'", "not a directory"]),
    "dl-dir-no-such-user": ("BRINGUP_DL_DIR", "/srv/src:~nosuchuser/src",
                            ["workloads", "--board", "qemu-arm", "--kernel", "nosuch"],
                            ["BRINGUP_DL_DIR", "~nosuchuser/src", "no user 'nosuchuser'"]),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(ENV_CASES), ids=sorted(ENV_CASES))
def test_a_bad_environment_value_is_one_line_before_any_work(name, tmp_path):
    """Before: a results or cache directory that cannot be one failed when the first file was
    written (after the builds, for the cache: after Kbuild refused a path with a space); a
    mirror URL with a newline went into the private sources.list as a line of its own."""
    var, value, args, words = ENV_CASES[name]
    (tmp_path / "file").write_text("x\n")
    logs, cache = tmp_path / "logs", tmp_path / "cache"
    env = {"BRINGUP_LOGS": str(logs), "BRINGUP_CACHE": str(cache), var: value.replace("{tmp}", str(tmp_path))}
    if args[:1] == ["import"]:
        args = [*args, str(BAD.parent / "boot-6.12-arm.stamped.log")]
    p = run_cli(*args, env_extra=env)
    assert p.returncode == 2, (p.returncode, p.stderr)
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("bringup: error: "), p.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    made = [p for p in tmp_path.rglob("*") if p.name != "file"]
    assert made == [], made[:5]


# Links where files are expected (git keeps no loops, so the corpus cannot hold them):
# (name, where the link points, the bringup arguments with {f} the link, words of the error)
LINK_CASES = {
    "board-symlink-loop": ("{f}", ["show", "{f}"], ["loop.toml", "symbolic links"]),
    "board-dangling-symlink": ("nonexistent.toml", ["show", "{f}"], ["loop.toml", "no such board file"]),
    "board-symlink-to-device": ("/dev/zero", ["show", "{f}"], ["loop.toml", "not a regular file"]),
    "board-symlink-to-directory": ("/", ["validate", "{f}"], ["loop.toml", "is a directory"]),
    "record-symlink-loop": ("{f}", ["validate", "--kind", "record", "{f}"], ["loop.toml", "symbolic links"]),
}


@pytest.mark.parametrize("name", sorted(LINK_CASES), ids=sorted(LINK_CASES))
def test_a_link_where_a_file_belongs_is_one_line(name, tmp_path):
    """A board file that is a symlink loop ended in 'internal error: RuntimeError: Symlink loop'
    (Path.resolve() in the error's own file name), and `bringup boards` with it in boards/ too."""
    target, args, words = LINK_CASES[name]
    f = tmp_path / "loop.toml"
    f.symlink_to(target.replace("{f}", str(f)))
    p = run_cli(*[a.replace("{f}", str(f)) for a in args], env_extra={"BRINGUP_LOGS": str(tmp_path / "logs")})
    assert p.returncode == 2, (p.returncode, p.stderr)
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("bringup: error: "), p.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_a_gigantic_file_to_import_is_refused_by_its_size(tmp_path):
    """A 3 GB file (sparse here) was read to its end to hash it before anything was judged."""
    f = tmp_path / "huge.log"
    with open(f, "wb") as fh:
        fh.truncate(3 * 1024**3)
    logs = tmp_path / "logs"
    for kind in ("bootlog", "lmbench"):
        p = run_cli(
            "import", "--board", "qemu-arm", "--kernel", "imp", kind, str(f), env_extra={"BRINGUP_LOGS": str(logs)}
        )
        assert p.returncode == 2, p.stderr
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert "huge.log: 3221225472 bytes: too large" in p.stderr
    assert not logs.exists() or not any(logs.rglob("*"))


@pytest.mark.parametrize("kind", ["board", "profile", "workload", "milestones", "record"])
def test_a_huge_data_file_is_refused_by_its_size(kind, tmp_path):
    """A data file of 2 MB (a board, a config or a record of 64 MB and more) is refused before it is parsed."""
    size = 70 * 1024 * 1024 if kind == "record" else 2 * 1024 * 1024
    f = tmp_path / ("huge.json" if kind == "record" else "huge.toml")
    with open(f, "wb") as fh:
        fh.write(b"# " if kind != "record" else b"{")
        fh.truncate(size)
    p = run_cli("validate", "--kind", kind, str(f), env_extra={"BRINGUP_LOGS": str(tmp_path / "logs")})
    assert p.returncode == 2, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert f"huge.{f.suffix[1:]}: {size} bytes: too large" in p.stderr, p.stderr
