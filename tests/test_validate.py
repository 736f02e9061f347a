"""bringup validate: every shipped data file passes; a bad one ends in one line naming
the file, the field and the value, exit 2, and nothing under logs/ changes."""

import subprocess
import sys

import pytest

from bringup.util import paths

BRINGUP = [sys.executable, "-m", "bringup"]


def run(args, tmp_path):
    env = {"BRINGUP_LOGS": str(tmp_path / "logs"), "PATH": "/usr/bin:/bin"}
    return subprocess.run(BRINGUP + args, capture_output=True, text=True, env=env, cwd=paths.ROOT)


def test_shipped_files_are_valid(tmp_path):
    files = [str(p.relative_to(paths.ROOT)) for p in sorted(paths.CONFIGS.glob("**/*.toml"))]
    files += ["boards/qemu-arm.toml", "tests/data/records/build-qemu-arm-5.10.json"]
    p = run(["validate", *files], tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("a valid") == len(files)


BAD = [
    (
        "profiles/p.toml",
        'description = "x"\noptional_milestones = ["nope"]\n',
        None,
        ["p.toml", "optional_milestones[0]", "'nope'"],
    ),
    ("b.toml", 'name = "b"\narch = "arm"\nmemory_mb = -1\n', None, ["b.toml", "memory_mb", "-1"]),
    ("r.json", '{"schema": "bringup.build/99"}', None, ["r.json", "schema", "bringup.build/99"]),
    ("r2.json", '{"schema": "bringup.bu', None, ["r2.json", "not valid JSON"]),
    ("w.toml", "description = 3\n", "workload", ["w.toml", "description", "3"]),
]


@pytest.mark.parametrize(("name", "text", "kind", "words"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_file_is_one_line(tmp_path, name, text, kind, words):
    f = tmp_path / "in" / name
    f.parent.mkdir(parents=True)
    f.write_text(text)
    logs = tmp_path / "logs" / "qemu-arm" / "5.10"
    logs.mkdir(parents=True)
    good = (paths.ROOT / "tests/data/records/build-qemu-arm-5.10.json").read_bytes()
    (logs / "build.json").write_bytes(good)
    p = run(["validate", *(["--kind", kind] if kind else []), str(f)], tmp_path)
    assert p.returncode == 2
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("bringup: error: "), p.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert (logs / "build.json").read_bytes() == good
    assert sorted(x.name for x in (tmp_path / "logs").rglob("*")) == ["5.10", "build.json", "qemu-arm"]
