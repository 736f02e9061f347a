"""records/sets.py: a step's files land whole or not at all; util/lock.board: one
measurement of a board at a time; records.present: absent is not unreadable."""

import json
import os
import subprocess
import sys

import pytest

from bringup import records
from bringup.records import sets
from bringup.util import lock


def _names(d):
    return sorted(str(p.relative_to(d)) for p in d.rglob("*") if p.is_file())


def test_a_set_lands_whole_and_its_manifest_names_every_member(tmp_path):
    b = tmp_path / "qemu-arm"
    with records.ResultSet(b, "report") as s:
        s.write_text(b / "report" / "report.md", "md\n")
        s.write_text(b / "report" / "index.html", "<html>\n")
        assert not (b / "report" / "report.md").exists(), "nothing is visible before the block ends"
    man, problems = sets.check(b, "report")
    assert problems == [] and man is not None and man.set == s.id
    assert sorted(man.members) == ["report/index.html", "report/report.md"]
    assert {m.set for m in man.members.values()} == {s.id}
    assert _names(b) == [".sets/report.json", "report/index.html", "report/report.md"]


def test_a_set_that_fails_half_way_leaves_the_earlier_files_byte_identical(tmp_path):
    b = tmp_path / "qemu-arm"
    with records.ResultSet(b, "report") as s:
        s.write_text(b / "report" / "report.md", "old md\n")
        s.write_text(b / "report" / "index.html", "old html\n")
    before = {p: (b / p).read_bytes() for p in _names(b)}
    with pytest.raises(RuntimeError, match="disk gone"), records.ResultSet(b, "report") as s2:
        s2.write_text(b / "report" / "report.md", "new md\n")
        raise RuntimeError("disk gone")
    assert {p: (b / p).read_bytes() for p in _names(b)} == before, "no staged file left, nothing replaced"


def test_a_set_killed_after_its_journal_is_finished_by_the_next_run(tmp_path):
    b = tmp_path / "qemu-arm"
    s = records.ResultSet(b, "footprint")
    s.write_text(b / "5.10" / "footprint.json", "{}\n")
    s.write_text(b / "6.12" / "footprint.json", "{}\n")
    # the journal is written, then the run dies before its renames: simulated by writing the journal only
    plan = {"set": s.id, "step": "footprint", "renames": [[str(t), str(f), h] for f, t, h in s._staged], "remove": []}
    records.write_text(b / ".sets" / "footprint.pending.json", json.dumps(plan))
    assert not (b / "5.10" / "footprint.json").exists()
    assert sets.recover(b) == [f"footprint set {s.id}"]
    assert (b / "5.10" / "footprint.json").exists() and (b / "6.12" / "footprint.json").exists()
    assert sets.check(b, "footprint")[1] == [] and not (b / ".sets" / "footprint.pending.json").exists()


def test_a_member_changed_outside_its_set_is_named_by_the_check(tmp_path):
    b = tmp_path / "qemu-arm"
    with records.ResultSet(b, "footprint") as s:
        s.write_text(b / "5.10" / "lmbench.json", "{}\n")
    (b / "5.10" / "lmbench.json").write_text('{"other": 1}\n')
    _, problems = sets.check(b, "footprint")
    assert len(problems) == 1 and "5.10/lmbench.json" in problems[0] and s.id in problems[0]


def test_a_later_set_of_some_kernels_keeps_the_others_members_and_removes_a_stale_failure(tmp_path):
    b = tmp_path / "qemu-arm"
    with records.ResultSet(b, "footprint") as s1:
        s1.write_text(b / "5.10" / "footprint.json", "a\n")
        s1.write_text(b / "6.12" / "footprint-failed.json", "f\n")
    with records.ResultSet(b, "footprint") as s2:
        s2.write_text(b / "6.12" / "footprint.json", "b\n")
        s2.remove(b / "6.12" / "footprint-failed.json")
    man, problems = sets.check(b, "footprint")
    assert problems == [] and man is not None
    assert {k: m.set for k, m in man.members.items()} == {"5.10/footprint.json": s1.id, "6.12/footprint.json": s2.id}
    assert not (b / "6.12" / "footprint-failed.json").exists()


def test_a_second_measurement_of_a_board_refuses_with_no_wait_naming_the_holder(tmp_path):
    b = tmp_path / "qemu-arm"
    with lock.board(b, "footprint", say=lambda _: None):
        code = (
            "import sys; from bringup.util import lock\nwith lock.board(sys.argv[1], 'boot-timing', wait=False): pass\n"
        )
        p = subprocess.run([sys.executable, "-c", code, str(b)], capture_output=True, text=True)
        assert p.returncode != 0
        last = p.stderr.strip().splitlines()[-1]
        assert f"pid {os.getpid()}, footprint, since " in last and "not waiting" in last
    with lock.board(b, "boot-timing", wait=False):  # released with the block
        assert "boot-timing" in (b / ".lock").read_text()


def _as_user(code: str, *args: str) -> subprocess.CompletedProcess:
    """code run by a user the permissions apply to: nobody when the tests run as root."""
    pre = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
    return subprocess.run([*pre, sys.executable, "-c", code, *args], capture_output=True, text=True)


def _owned(p):
    if os.geteuid() == 0:
        os.chown(p, 65534, 65534)


@pytest.fixture
def open_tmp():
    """A directory every user can reach (pytest's tmp_path is not, under root's 0700 base)."""
    import shutil
    import tempfile

    d = tempfile.mkdtemp(prefix="bringup-sets-")
    os.chmod(d, 0o755)
    yield __import__("pathlib").Path(d)
    shutil.rmtree(d, ignore_errors=True)


def test_a_read_only_board_directory_is_refused_before_any_boot(open_tmp):
    b = open_tmp / "qemu-arm"
    b.mkdir()
    _owned(b)
    b.chmod(0o555)
    code = "import sys; from bringup.util import lock\nwith lock.board(sys.argv[1], 'footprint'): print('got it')\n"
    p = _as_user(code, str(b))
    assert p.returncode != 0 and "got it" not in p.stdout
    assert (
        p.stderr.strip()
        .splitlines()[-1]
        .endswith(f"footprint: {b}: cannot write there: Permission denied (nothing measured)")
    )


def test_an_unreadable_directory_is_not_absent(open_tmp):
    d = open_tmp / "5.10"
    d.mkdir()
    _owned(d)
    code = (
        "import sys; from bringup import records\n"
        "print(records.present(sys.argv[1] + '/footprint.json'))\n"
        "import os; os.chmod(sys.argv[1], 0)\n"
        "print(records.present(sys.argv[1] + '/footprint.json'))\n"
    )
    p = _as_user(code, str(d))
    assert p.stdout == "False\n" and p.returncode != 0
    assert p.stderr.strip().splitlines()[-1].endswith("footprint.json: cannot be read: Permission denied")
