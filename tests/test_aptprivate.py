"""The private apt configuration when the mirror cannot be reached: real apt-get
against a closed loopback port (nothing leaves the machine)."""

import os
import time

import pytest

from bringup.errors import BringupError
from bringup.util.aptprivate import PrivateApt

DEAD = "http://127.0.0.1:9/debian"  # the discard port: nothing listens


@pytest.fixture
def dead_mirror(monkeypatch):
    monkeypatch.setenv("BRINGUP_DEBIAN_MIRROR", DEAD)
    monkeypatch.setenv("BRINGUP_DEBIAN_SECURITY_MIRROR", DEAD + "-security")


def no_retries(apt: PrivateApt) -> PrivateApt:
    """apt 2.x retries a refused connection 3 times with back-off (7 s); the private
    configuration's parts directory takes the test's `Acquire::Retries "0"`."""
    apt._write_config()
    (apt.dir / "etc" / "parts" / "99-test-no-retries").write_text('Acquire::Retries "0";\n')
    return apt


def test_unreachable_mirror_without_lists_is_one_line_and_marks_nothing_fresh(tmp_path, dead_mirror):
    apt = no_retries(PrivateApt(tmp_path / "apt", "bookworm"))
    with pytest.raises(BringupError) as e:
        apt.update()
    msg = str(e.value)
    assert "apt-get update (bookworm): the Debian mirror could not be reached" in msg
    assert "no package lists to fall back on" in msg and "\n" not in msg
    assert not (apt.dir / "lists" / ".bringup-updated").exists()
    assert not (apt.dir / "lists.new").exists()


def test_unreachable_mirror_keeps_old_lists_and_their_age(tmp_path, dead_mirror):
    warnings = []
    apt = no_retries(PrivateApt(tmp_path / "apt", "bookworm", warn=warnings.append))
    lists = apt.dir / "lists"
    index = lists / "deb.debian.org_debian_dists_bookworm_main_binary-amd64_Packages"
    index.write_text("Package: linux-source-6.1\nVersion: 6.1.1-1\n")
    stamp = lists / ".bringup-updated"
    stamp.touch()
    two_days = time.time() - 2 * 86400
    os.utime(stamp, (two_days, two_days))
    before = (index.read_bytes(), index.stat().st_mtime, stamp.stat().st_mtime)
    apt.update()
    assert (index.read_bytes(), index.stat().st_mtime, stamp.stat().st_mtime) == before
    assert len(warnings) == 1 and "the Debian mirror could not be reached" in warnings[0]
    assert "using the package lists already here (48 h old)" in warnings[0]


def test_an_unreachable_mirror_is_asked_once_per_run(tmp_path, dead_mirror, monkeypatch):
    """A source fetch asks for candidates, then downloads: each calls update(); after one
    failed update the run does not try the mirror again (it took 3 x 10 s offline)."""
    import subprocess

    warnings = []
    apt = no_retries(PrivateApt(tmp_path / "apt", "bookworm", warn=warnings.append))
    index = apt.dir / "lists" / "deb.debian.org_debian_dists_bookworm_main_binary-amd64_Packages"
    index.write_text("Package: linux-source-6.1\nVersion: 6.1.1-1\n")
    calls = []
    real_run = subprocess.run

    def counting(argv, *a, **k):
        if argv[:1] == ["apt-get"]:
            calls.append(argv)
        return real_run(argv, *a, **k)

    monkeypatch.setattr(subprocess, "run", counting)
    apt.update()
    apt.update()
    apt.update()
    assert len(calls) == 1 and len(warnings) == 1
    empty = no_retries(PrivateApt(tmp_path / "apt2", "bookworm"))
    for _ in range(2):  # without lists: the same one line each time, from the one failed update
        with pytest.raises(BringupError, match="no package lists to fall back on"):
            empty.update()
    assert len(calls) == 2
