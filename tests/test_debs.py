"""util.debs: the one reader of .deb contents (dpkg-deb --fsys-tarfile)."""

import re
import subprocess

import pytest

from bringup.errors import BringupError
from bringup.util import debs


@pytest.fixture
def deb(tmp_path):
    root = tmp_path / "pkg"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text(
        "Package: t\nVersion: 1\nArchitecture: all\nMaintainer: x <x@y>\nDescription: t\n"
    )
    (root / "bin").mkdir()
    (root / "bin" / "busybox").write_bytes(b"\x7fELF busybox")
    (root / "usr/src").mkdir(parents=True)
    (root / "usr/src/linux-source-6.1.tar.xz").write_bytes(b"x" * (3 << 20))  # bigger than a pipe
    (root / "usr/src/linux-source-6.1.tar.xz.sig").write_bytes(b"sig")
    out = tmp_path / "t.deb"
    subprocess.run(["dpkg-deb", "-Zgzip", "--build", str(root), str(out)], check=True, capture_output=True)
    return out


def test_members_in_archive_order_with_clean_paths(deb):
    names = [m.name for m in debs.members(deb)]
    assert names[0] == "" and "bin/busybox" in names and "usr/src/linux-source-6.1.tar.xz" in names
    assert not any(n.startswith(("./", "/")) for n in names)


def test_read_one_member(deb):
    assert debs.read(deb, "bin/busybox") == b"\x7fELF busybox"
    with pytest.raises(BringupError, match=r"^\S+/t\.deb: has no bin/sh$"):
        debs.read(deb, "bin/sh")
    with pytest.raises(BringupError, match=r"t\.deb: bin is not a regular file$"):
        next(m for m in debs.members(deb) if m.name == "bin").read()


def test_extract_streams_the_first_match(deb, tmp_path):
    dest = tmp_path / "out"
    dest.mkdir()
    f = debs.extract(deb, r"usr/src/linux-source-[^/]+\.tar\.(xz|bz2|gz)", dest)
    assert f == dest / "linux-source-6.1.tar.xz" and f.stat().st_size == 3 << 20
    with pytest.raises(BringupError, match=r"t\.deb: no usr/src/linux-\*\.tar\.bz2 inside$"):
        debs.extract(deb, r"usr/src/linux-.*\.tar\.bz2", dest, "usr/src/linux-*.tar.bz2")


def test_stopping_early_leaves_no_dpkg_deb_behind(deb):
    it = debs.members(deb)
    next(it)
    it.close()  # nothing hangs, nothing raised
    for m in debs.members(deb):
        if m.name == "bin":
            break


@pytest.mark.parametrize(
    "content, why",
    [
        (
            b"not an ar archive at all, but long enough for the magic" * 4,
            r"dpkg-deb: error: .*not a Debian format archive",
        ),
        (None, r"(No such file|cannot access|failed to read)"),
    ],
)
def test_a_bad_deb_is_one_line_naming_it(tmp_path, content, why):
    bad = tmp_path / "bad.deb"
    if content is not None:
        bad.write_bytes(content)
    with pytest.raises(BringupError) as e:
        debs.read(bad, "bin/busybox")
    msg = str(e.value)
    assert msg.startswith(f"{bad}: ") and "\n" not in msg
    assert re.search(why, msg), msg


def test_a_truncated_deb_is_one_line_naming_it(deb, tmp_path):
    cut = tmp_path / "cut.deb"
    cut.write_bytes(deb.read_bytes()[: deb.stat().st_size // 2])
    with pytest.raises(BringupError) as e:
        for m in debs.members(cut):
            if m.info.isfile():
                m.read()
    assert str(e.value).startswith(f"{cut}: ") and "\n" not in str(e.value)


def test_no_dpkg_deb(deb, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(BringupError, match=r"t\.deb: cannot run dpkg-deb: .*install Debian package dpkg"):
        debs.read(deb, "bin/busybox")
