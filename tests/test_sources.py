"""Sources: safe extraction, checksums, versions."""

import hashlib
import io
import os
import subprocess
import tarfile

import pytest

from bringup.builder import sources
from bringup.errors import BringupError
from bringup.model.specs import SourceSpec
from bringup.util import gittree
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


# --- git tree ids -------------------------------------------------------------


def _git(tree, *args):
    return subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True, check=True).stdout.strip()


def _odd_tree(root):
    """Names that exercise git's ordering (a directory sorts as 'name/'), modes, links, empties."""
    root.mkdir()
    (root / "Makefile").write_text("VERSION = 2\n")
    (root / "a.c").write_text("int a;\n")
    (root / "a").mkdir()
    (root / "a" / "x").write_bytes(b"\x00\x01binary\xff")
    (root / "a-b").write_text("dash\n")
    (root / "a0").write_text("zero\n")
    (root / "run.sh").write_text("#!/bin/sh\n")
    (root / "run.sh").chmod(0o755)
    (root / "ro.txt").write_text("read only\n")
    (root / "ro.txt").chmod(0o444)
    (root / "link").symlink_to("a/x")
    (root / "dangling").symlink_to("nowhere/at/all")
    (root / "empty").mkdir()  # git has no empty directories
    (root / "deep" / "er" / "est").mkdir(parents=True)
    (root / "deep" / "er" / "est" / "f").write_text("")
    (root / "deep" / "er" / "e").write_text("e\n")
    return root


def test_tree_id_is_what_git_write_tree_prints(tmp_path):
    tree = _odd_tree(tmp_path / "t")
    mine = gittree.tree_id(tree)
    _git(tree, "init", "-q")
    _git(tree, "add", "-A", "-f")
    assert mine == _git(tree, "write-tree")
    assert gittree.tree_id(tree) == mine, "the .git directory is not content"
    assert gittree.blob_id(b"int a;\n") == _git(tree, "hash-object", "a.c")


def test_tree_id_sees_a_mode_a_byte_and_a_name(tmp_path):
    tree = _odd_tree(tmp_path / "t")
    base = gittree.tree_id(tree)
    (tree / "a.c").chmod(0o755)
    assert gittree.tree_id(tree) != base
    (tree / "a.c").chmod(0o644)
    assert gittree.tree_id(tree) == base
    (tree / "a" / "x").write_bytes(b"\x00\x01binary\xfe")
    assert gittree.tree_id(tree) != base


def test_empty_tree_id(tmp_path):
    assert gittree.tree_id(tmp_path) == "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


# --- download directories -------------------------------------------------------

DEAD_URL = "http://127.0.0.1:9/pub/linux-6.1.0.tar.gz"  # nothing listens: any download fails at once


def _release(tmp_path, name="r", mtime=0):
    """(tarball, its sha256, the git tree id of its content) of a fake 6.1.0 tree;
    mtime changes the archive's bytes, not its content."""
    tree = make_fake_tree(tmp_path / f"{name}-tree" / "linux-6.1.0", "6.1.0")
    tb = tmp_path / f"{name}.tar.gz"
    with tarfile.open(tb, "w:gz") as tf:
        tf.add(tree, arcname="linux-6.1.0", filter=lambda ti: (setattr(ti, "mtime", mtime), ti)[1])
    return tb, hashlib.sha256(tb.read_bytes()).hexdigest(), "git:" + gittree.tree_id(tree)


@pytest.fixture
def dl(tmp_path, monkeypatch):
    d1, d2 = tmp_path / "dl1", tmp_path / "dl2"
    d1.mkdir()
    d2.mkdir()
    monkeypatch.setenv("BRINGUP_DL_DIR", f"{d1}::{d2}")
    return d1, d2


def _prepare(spec, tmp_path, said=None):
    return sources.prepare(spec, tmp_path / "cache", log=(said.append if said is not None else lambda m: None))


def test_download_dirs_in_order_then_the_cache(tmp_path, dl):
    assert sources.download_dirs(tmp_path / "cache" / "downloads") == [*dl, tmp_path / "cache" / "downloads"]


def test_url_found_in_a_download_dir_is_used_without_downloading(tmp_path, dl):
    tb, sha, _ = _release(tmp_path)
    (dl[1] / "linux-6.1.0.tar.gz").write_bytes(tb.read_bytes())
    src = _prepare(SourceSpec(url=DEAD_URL, sha256=sha), tmp_path)
    assert src.version == "6.1.0" and src.identity == f"sha256:{sha}"
    assert src.detail == {
        "kind": "url",
        "url": DEAD_URL,
        "file": str(dl[1] / "linux-6.1.0.tar.gz"),
        "sha256": sha,
        "verified": "sha256",
        "origin": "download-dir",
    }
    # kept in the cache's downloads too, so a clone without that directory beside it finds it
    kept = tmp_path / "cache" / "downloads" / f"{sha[:16]}-linux-6.1.0.tar.gz"
    assert kept.read_bytes() == tb.read_bytes()
    assert not list((tmp_path / "cache" / "downloads").glob("*.part"))


def test_a_download_dir_file_is_found_later_without_the_directory(tmp_path, dl, monkeypatch):
    tb, sha, _ = _release(tmp_path)
    (dl[0] / "linux-6.1.0.tar.gz").write_bytes(tb.read_bytes())
    _prepare(SourceSpec(url=DEAD_URL, sha256=sha), tmp_path)
    (dl[0] / "linux-6.1.0.tar.gz").unlink()
    monkeypatch.delenv("BRINGUP_DL_DIR")
    src = _prepare(SourceSpec(url=DEAD_URL, sha256=sha), tmp_path)
    assert src.detail["origin"] == "cache" and src.identity == f"sha256:{sha}"
    assert src.detail["file"] == str(tmp_path / "cache" / "downloads" / f"{sha[:16]}-linux-6.1.0.tar.gz")


def test_url_with_another_sha256_and_no_tree_is_not_used(tmp_path, dl):
    tb, sha, _ = _release(tmp_path)
    (dl[0] / "linux-6.1.0.tar.gz").write_bytes(tb.read_bytes())
    with pytest.raises(BringupError) as e:
        _prepare(SourceSpec(url=DEAD_URL, sha256="ab" * 32), tmp_path)
    msg = str(e.value)
    assert msg.startswith(f"download {DEAD_URL} failed")
    assert f"{dl[0] / 'linux-6.1.0.tar.gz'} has sha256 {sha} (the board has no 'tree'" in msg


def test_url_missing_everywhere_names_the_places_looked(tmp_path, dl):
    with pytest.raises(BringupError) as e:
        _prepare(SourceSpec(url=DEAD_URL, sha256="ab" * 32), tmp_path)
    msg = str(e.value)
    assert f"no file linux-6.1.0.tar.gz in {dl[0]}, {dl[1]}, {tmp_path / 'cache' / 'downloads'}" in msg
    assert "BRINGUP_DL_DIR" in msg


def test_url_with_another_sha256_is_used_when_its_tree_matches(tmp_path, dl):
    theirs, their_sha, tree = _release(tmp_path, "kernel.org", mtime=1_000_000)
    ours, our_sha, our_tree = _release(tmp_path, "ours", mtime=2_000_000)
    assert their_sha != our_sha and tree == our_tree, "same content, another archive"
    (dl[0] / "linux-6.1.0.tar.gz").write_bytes(ours.read_bytes())
    said = []
    src = _prepare(SourceSpec(url=DEAD_URL, sha256=their_sha, tree=tree), tmp_path, said)
    assert src.detail["verified"] == "tree" and src.detail["sha256"] == our_sha
    assert src.detail["expected_sha256"] == their_sha and src.detail["tree_id"] == tree
    assert src.identity == tree, "the build key names the content, not the archive"
    assert (src.path / "Makefile").is_file()
    assert any(f"its tree is {tree}" in m for m in said)
    # the second time the tree id is not computed again, and the same tree is used
    again = _prepare(SourceSpec(url=DEAD_URL, sha256=their_sha, tree=tree), tmp_path)
    assert again.path == src.path and again.identity == tree
    # kept in the cache under its own sha256, and found there once the directory is gone
    assert (tmp_path / "cache" / "downloads" / f"{our_sha[:16]}-linux-6.1.0.tar.gz").read_bytes() == ours.read_bytes()
    (dl[0] / "linux-6.1.0.tar.gz").unlink()
    third = _prepare(SourceSpec(url=DEAD_URL, sha256=their_sha, tree=tree), tmp_path)
    assert third.identity == tree and third.detail["origin"] == "cache"


def test_a_file_with_the_right_sha256_names_the_board_tree(tmp_path, dl):
    tb, sha, tree = _release(tmp_path)
    (dl[0] / "linux-6.1.0.tar.gz").write_bytes(tb.read_bytes())
    src = _prepare(SourceSpec(url=DEAD_URL, sha256=sha, tree=tree), tmp_path)
    assert src.detail["verified"] == "sha256" and src.identity == tree
    assert "expected_sha256" not in src.detail


def test_url_whose_tree_differs_is_refused_and_its_extraction_removed(tmp_path, dl):
    tb, sha, tree = _release(tmp_path)
    (dl[0] / "linux-6.1.0.tar.gz").write_bytes(tb.read_bytes())
    wrong = "git:" + "0" * 40
    with pytest.raises(BringupError) as e:
        _prepare(SourceSpec(url=DEAD_URL, sha256="ab" * 32, tree=wrong), tmp_path)
    assert f"has sha256 {sha} and tree {tree}" in str(e.value)
    assert not list((tmp_path / "cache" / "src").iterdir()), "a tree that is not the board's is not kept"


def test_first_download_dir_with_a_good_file_wins(tmp_path, dl):
    tb, sha, _ = _release(tmp_path)
    (dl[0] / "linux-6.1.0.tar.gz").write_bytes(b"not it")
    (dl[1] / "linux-6.1.0.tar.gz").write_bytes(tb.read_bytes())
    src = _prepare(SourceSpec(url=DEAD_URL, sha256=sha), tmp_path)
    assert src.detail["file"] == str(dl[1] / "linux-6.1.0.tar.gz")


def test_tarball_with_another_sha256_is_used_when_its_tree_matches(tmp_path):
    tb, sha, tree = _release(tmp_path)
    src = _prepare(SourceSpec(tarball=str(tb), sha256="ab" * 32, tree=tree), tmp_path)
    assert src.detail["verified"] == "tree" and src.detail["origin"] == "tarball"
    with pytest.raises(BringupError, match=r"sha256 mismatch .* and its tree is git:[0-9a-f]{40}, not git:0{40}"):
        _prepare(SourceSpec(tarball=str(tb), sha256="ab" * 32, tree="git:" + "0" * 40), tmp_path / "x")


def test_fetch_url_uses_a_download_dir(tmp_path, dl):
    (dl[0] / "lmbench-3.0.tar.gz").write_bytes(b"payload")
    good = hashlib.sha256(b"payload").hexdigest()
    got = sources.fetch_url("http://127.0.0.1:9/lmbench-3.0.tar.gz", good, tmp_path / "c" / "downloads", log=print)
    assert got == dl[0] / "lmbench-3.0.tar.gz"


def test_tree_only_with_url_or_tarball():
    with pytest.raises(ValueError, match="only with url or tarball"):
        SourceSpec(path="/tmp", tree="git:" + "0" * 40)
    with pytest.raises(ValueError, match="tree"):
        SourceSpec(url=DEAD_URL, sha256="ab" * 32, tree="sha1:" + "0" * 40)


def test_a_download_kept_for_its_tree_is_found_again(tmp_path, monkeypatch):
    # served with another sha256 than the board's, kept because its tree matched: the next
    # run finds it in the cache instead of downloading it again
    import functools
    import http.server
    import threading

    theirs, their_sha, tree = _release(tmp_path, "kernel.org", mtime=1_000_000)
    ours, our_sha, _ = _release(tmp_path, "ours", mtime=2_000_000)
    www = tmp_path / "www"
    www.mkdir()
    (www / "linux-6.1.0.tar.gz").write_bytes(ours.read_bytes())
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(www))
    handler.log_message = lambda *a: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.delenv("BRINGUP_DL_DIR", raising=False)
    try:
        spec = SourceSpec(url=f"http://127.0.0.1:{server.server_port}/linux-6.1.0.tar.gz", sha256=their_sha, tree=tree)
        src = _prepare(spec, tmp_path)
    finally:
        server.shutdown()
        server.server_close()
    assert src.detail["origin"] == "download" and src.detail["verified"] == "tree"
    kept = tmp_path / "cache" / "downloads" / f"{our_sha[:16]}-linux-6.1.0.tar.gz"
    assert src.detail["file"] == str(kept) and src.detail["expected_sha256"] == their_sha
    again = _prepare(spec, tmp_path)  # the server is gone: offline now
    assert again.detail["origin"] == "cache" and again.detail["file"] == str(kept) and again.path == src.path
