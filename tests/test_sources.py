"""Sources: safe extraction, checksums, versions."""

import hashlib
import io
import os
import tarfile

import pytest

from bringup.build import sources
from bringup.errors import BringupError
from bringup.model.board import SourceSpec
from conftest import make_fake_tree


def tar_with(tmp_path, members):
    """members: list of (TarInfo-setup-callable)"""
    tb = tmp_path / "evil.tar"
    with tarfile.open(tb, "w") as tf:
        for name, kind, target in members:
            ti = tarfile.TarInfo(name)
            if kind == "file":
                data = b"x"
                ti.size = len(data)
                tf.addfile(ti, io.BytesIO(data))
            elif kind == "sym":
                ti.type, ti.linkname = tarfile.SYMTYPE, target
                tf.addfile(ti)
            elif kind == "lnk":
                ti.type, ti.linkname = tarfile.LNKTYPE, target
                tf.addfile(ti)
            elif kind == "dev":
                ti.type = tarfile.CHRTYPE
                tf.addfile(ti)
    return tb


@pytest.mark.parametrize(
    "members,msg",
    [
        ([("linux/../../escape", "file", None)], "escapes the target"),
        ([("/etc/passwd-bringup", "file", None)], "escapes the target"),
        ([("linux/link", "sym", "../../outside")], "points outside"),
        ([("linux/link", "sym", "/etc")], "points outside"),
        ([("linux/hl", "lnk", "../../etc/passwd")], "points outside"),
        ([("linux/dev", "dev", None)], "device or fifo"),
    ],
)
def test_extraction_refuses_escapes(tmp_path, members, msg):
    tb = tar_with(tmp_path, [("linux/Makefile", "file", None)] + members)
    dest = tmp_path / "out"
    with pytest.raises(BringupError, match=msg):
        sources.safe_extract(tb, dest)
    assert not dest.exists(), "nothing may be left behind"
    assert not (tmp_path.parent / "escape").exists()


def test_extraction_keeps_exec_bits_and_inner_links(tmp_path):
    tree = make_fake_tree(tmp_path / "linux-6.1.0", "6.1.0")
    (tree / "scripts" / "tool.sh").write_text("#!/bin/sh\n")
    (tree / "scripts" / "tool.sh").chmod(0o755)
    (tree / "link").symlink_to("scripts/tool.sh")
    tb = tmp_path / "l.tar.gz"
    with tarfile.open(tb, "w:gz") as tf:
        tf.add(tree, arcname="linux-6.1.0")
    src = sources.prepare(SourceSpec(tarball=str(tb)), tmp_path / "cache", log=lambda m: None)
    assert (src.path / "scripts" / "tool.sh").stat().st_mode & 0o111
    assert (src.path / "link").is_symlink()
    assert src.version == "6.1.0"
    assert src.identity == "sha256:" + hashlib.sha256(tb.read_bytes()).hexdigest()


def test_tarball_checksum_mismatch(tmp_path):
    tb = tmp_path / "x.tar"
    with tarfile.open(tb, "w"):
        pass
    with pytest.raises(BringupError, match=r"sha256 mismatch: expected 0{64}, got [0-9a-f]{64}"):
        sources.prepare(SourceSpec(tarball=str(tb), sha256="0" * 64), tmp_path / "c", log=lambda m: None)


def test_url_download_verified_and_cached(tmp_path):
    f = tmp_path / "linux.tar"
    f.write_bytes(b"payload")
    good = hashlib.sha256(b"payload").hexdigest()
    got = sources.fetch_url(f.as_uri(), good, tmp_path / "dl", log=lambda m: None)
    assert got.read_bytes() == b"payload"
    f.write_bytes(b"changed")  # the cached copy is used, not the URL
    assert sources.fetch_url(f.as_uri(), good, tmp_path / "dl", log=lambda m: None) == got
    with pytest.raises(BringupError, match="sha256 mismatch"):
        sources.fetch_url(f.as_uri(), "1" * 64, tmp_path / "dl2", log=lambda m: None)
    assert not list((tmp_path / "dl2").iterdir()), "a bad download must not stay in the cache"


@pytest.mark.parametrize(
    "header,version",
    [
        ("VERSION = 2\nPATCHLEVEL = 4\nSUBLEVEL = 25\nEXTRAVERSION =\n", "2.4.25"),
        ("VERSION = 2\nPATCHLEVEL = 6\nSUBLEVEL = 11\nEXTRAVERSION = .7\n", "2.6.11.7"),
        ("# SPDX\nVERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 95\nEXTRAVERSION =\nNAME = Baby Opossum\n", "6.12.95"),
    ],
)
def test_kernel_version(tmp_path, header, version):
    (tmp_path / "Makefile").write_text(header)
    assert sources.kernel_version(tmp_path) == version


@pytest.mark.parametrize("mode, suffix", [("w:gz", ".tar.gz"), ("w:xz", ".tar.xz"), ("w:bz2", ".tar.bz2")])
def test_a_truncated_tarball_is_one_line(tmp_path, mode, suffix):
    tree = tmp_path / "linux-6.1.0"
    tree.mkdir()
    (tree / "Makefile").write_bytes(os.urandom(200_000))
    tb = tmp_path / f"l{suffix}"
    with tarfile.open(tb, mode) as tf:
        tf.add(tree, arcname="linux-6.1.0")
    tb.write_bytes(tb.read_bytes()[: tb.stat().st_size // 2])
    with pytest.raises(BringupError, match=r"l\.tar\.(gz|xz|bz2): (truncated or corrupt|not a readable tarball)"):
        sources.safe_extract(tb, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_symlink_chain_out_of_the_target_is_refused_as_such(tmp_path):
    tb = tmp_path / "chain.tar"
    with tarfile.open(tb, "w") as tf:
        for name, target in (("t/a", "."), ("t/a/b", "../.."), ("t/a/b/c", "..")):
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tf.addfile(info)
    with pytest.raises(BringupError) as e:
        sources.safe_extract(tb, tmp_path / "out")
    assert "not a readable tarball" not in str(e.value)
    assert "outside the target" in str(e.value) and not (tmp_path / "escape").exists()
