"""lmbench from a user-given source: the recipe of configs/lmbench.toml run by the
real cross compiler on a fake lmbench tree (a src/Makefile that builds a few
programs into ../bin/$(OS)/ the way lmbench's does)."""

import io
import shutil
import tarfile

import pytest
from elftools.elf.elffile import ELFFile

from bringup.builder import lmbench as lmbench_build
from bringup.builder import sources
from bringup.errors import BringupError
from bringup.measure import footprint
from bringup.model import benchset
from bringup.model.benchset import SourceFile
from bringup.util import gittree

ARM = "arm-linux-gnueabihf-"
needs_arm = pytest.mark.skipif(shutil.which(ARM + "gcc") is None, reason="no arm cross gcc (make deps)")

PROG = r"""
#include <stdio.h>
#include <rpc/rpc.h>        /* lmbench's bench.h needs the Sun RPC headers (CPPFLAGS) */
int main(void) {            /* lib_tcp.c calls the portmapper: the stubs object (LDFLAGS) */
    printf("%d %d\n", (int)sizeof(struct rpc_msg) > 0, pmap_unset(1, 1));
    return 0;
}
"""


def fake_tree(root, counter, fail=False):
    """lmbench's src/Makefile in miniature: programs into ../bin/$(OS)/ with
    $(CC) $(CFLAGS) $(CPPFLAGS) $(LDFLAGS), a library object and the `lmbench` script
    beside them, and lat_rpc, which cannot be built (make -k goes on past it)."""
    (root / "src").mkdir(parents=True)
    (root / "src" / "prog.c").write_text(PROG)
    (root / "src" / "Makefile").write_text(
        "all: progs lat_rpc\n"
        "progs:\n"
        '\ttest -n "$(OS)" && test -d ../bin/$(OS)\n'
        f"\techo built >> {counter}\n"
        + ("\tfalse\n" if fail else "")
        + "\tfor b in lat_ctx bw_mem lat_syscall hello; do"
        " $(CC) $(CFLAGS) $(CPPFLAGS) $(LDFLAGS) -o ../bin/$(OS)/$$b prog.c || exit 1; done\n"
        "\t$(CC) $(CFLAGS) $(CPPFLAGS) -c -o ../bin/$(OS)/lib_timing.o prog.c\n"
        "\tprintf '#!/bin/sh\\n' > ../bin/$(OS)/lmbench && chmod +x ../bin/$(OS)/lmbench\n"
        "lat_rpc:\n"
        "\t@echo 'undefined reference to clnt_perror' && false\n"
    )
    return root


def recipe():
    return footprint.load_set().source_build


@needs_arm
def test_builds_static_stripped_binaries_with_the_cross_compiler_and_caches(tmp_path):
    tree = fake_tree(tmp_path / "lmbench-3.0-a9", tmp_path / "count")
    spec = lmbench_build.parse_spec(str(tree), None)
    entries, info = lmbench_build.build(spec, recipe(), ARM, "armhf", tmp_path / "cache", say=lambda m: None)
    files = {e.path: e for e in entries}
    # every program (no .o, no `lmbench` script); lat_rpc failed and make -k went on
    assert sorted(p for p in files if p.startswith("usr/lib/lmbench/bin/") and files[p].data) == [
        "usr/lib/lmbench/bin/bw_mem",
        "usr/lib/lmbench/bin/hello",
        "usr/lib/lmbench/bin/lat_ctx",
        "usr/lib/lmbench/bin/lat_syscall",
    ]
    elf = ELFFile(io.BytesIO(files["usr/lib/lmbench/bin/lat_ctx"].data))
    assert elf["e_machine"] == "EM_ARM"
    assert not any(s["p_type"] == "PT_INTERP" for s in elf.iter_segments())  # static
    assert elf.get_section_by_name(".symtab") is None  # stripped
    assert info["binaries"] == 4 and "OS=arm-linux-gnueabihf" in info["make_args"]
    # the initramfs unpacker makes no missing parents: each one is an entry before its children
    order = [e.path for e in entries]
    for i, path in enumerate(order):
        parent = path.rsplit("/", 1)[0]
        assert "/" not in path or parent in order[:i], f"{path} comes without its parent {parent}"
    assert info["make_args"][-1] == "LDFLAGS=-static pmap_stubs.o"  # no temporary path in the record
    assert info["origin"] == "bringup-build" and info["toolchain"] == "glibc" and info["libc"] == "glibc"
    assert info["not_built"] == ["lat_rpc"] and info["source_sha256"] is None  # a directory has no sha256
    again, _ = lmbench_build.build(
        spec, recipe(), ARM, "armhf", tmp_path / "cache", say=lambda m: None, programs=["lat_ctx", "hello"]
    )
    assert (tmp_path / "count").read_text().count("built") == 1  # cached
    assert sorted(e.path for e in again if e.data) == ["usr/lib/lmbench/bin/hello", "usr/lib/lmbench/bin/lat_ctx"]
    with pytest.raises(BringupError, match=r"lmbench for armhf: the build at .* has no lat_pipe \(the benchmark set"):
        lmbench_build.build(
            spec, recipe(), ARM, "armhf", tmp_path / "cache", say=lambda m: None, programs=["lat_ctx", "lat_pipe"]
        )


def test_toolchain_comes_from_data(tmp_path):
    """The compiler (and so the libc) is a parameter: a toolchain of lmbench.toml by name;
    a name that is not there is refused before any work."""
    r = recipe().model_copy(deep=True)
    r.toolchains["nolibc"] = r.toolchains["glibc"].model_copy(update={"cc": "{cross_compile}nosuchgcc", "libc": "x"})
    tree = fake_tree(tmp_path / "lmbench-3.0-a9", tmp_path / "count")
    spec = lmbench_build.parse_spec(str(tree), None)
    with pytest.raises(BringupError, match=r"needs arm-linux-gnueabihf-nosuchgcc \(toolchain nolibc"):
        lmbench_build.build(spec, r, ARM, "armhf", tmp_path / "cache", say=lambda m: None, toolchain="nolibc")
    with pytest.raises(BringupError, match=r"lmbench toolchain 'uclibc': none of configs/lmbench.toml's \(glibc, musl"):
        lmbench_build.build(spec, recipe(), ARM, "armhf", tmp_path / "cache", say=lambda m: None, toolchain="uclibc")
    assert not (tmp_path / "count").exists()


def test_the_set_names_the_programs_a_build_must_have():
    progs = benchset.programs(footprint.load_set())
    assert {"lat_syscall", "lat_ctx", "bw_mem", "lat_tcp", "bw_file_rd", "hello"} <= set(progs)
    assert "lat_rpc" not in progs and "lmbench" not in progs


def _tarball(tmp_path, name="lmbench-3.0-a9.tar.gz", content="x"):
    tree = tmp_path / "t" / "lmbench-3.0-a9"
    (tree / "src").mkdir(parents=True, exist_ok=True)
    (tree / "src" / "Makefile").write_text(content)
    tgz = tmp_path / "dl" / name
    tgz.parent.mkdir(exist_ok=True)
    with tarfile.open(tgz, "w:gz") as tf:
        tf.add(tree, arcname="lmbench-3.0-a9")
    return tgz


def test_default_source_is_found_in_a_download_directory_by_sha256_or_tree(tmp_path, monkeypatch):
    tgz = _tarball(tmp_path)
    digest = sources.sha256_file(tgz)
    monkeypatch.setenv("BRINGUP_DL_DIR", str(tmp_path / "nothere") + ":" + str(tgz.parent))
    src = SourceFile(file=tgz.name, sha256=digest, version="3.0-a9")
    spec = lmbench_build.default_spec(src, tmp_path / "cache", say=lambda m: None)
    assert spec == {"tarball": str(tgz), "sha256": digest, "verified": "sha256", "version": "3.0-a9"}
    # another archive of the same files: used for its tree id, said so in the spec
    tree_id = "git:" + gittree.tree_id(tmp_path / "t" / "lmbench-3.0-a9")
    other = SourceFile(file=tgz.name, sha256="0" * 64, tree=tree_id, version="3.0-a9")
    assert lmbench_build.default_spec(other, tmp_path / "cache", say=lambda m: None)["verified"] == "tree"
    wrong = SourceFile(file=tgz.name, sha256="0" * 64, tree="git:" + "1" * 40, version="3.0-a9")
    with pytest.raises(BringupError, match=rf"not found: no {tmp_path}/nothere/{tgz.name}; {tgz} has sha256 {digest}"):
        lmbench_build.default_spec(wrong, tmp_path / "cache", say=lambda m: None)


def test_no_debian_lmbench_and_no_source_is_footprint_only_and_says_why(tmp_path, monkeypatch):
    """32-bit PowerPC has no Debian lmbench: without the source in a download
    directory the footprint runs without lmbench, and the reason names the file."""
    from bringup.model.board import load_board

    monkeypatch.setenv("BRINGUP_DL_DIR", str(tmp_path / "empty"))

    def no_debian(arch, cache, say):
        raise BringupError(f"lmbench: Debian has no lmbench binaries for {arch}")

    monkeypatch.setattr(footprint, "lmbench_entries", no_debian)
    entries, info, missing = footprint.lmbench_payload(
        load_board("qemu-bamboo"), footprint.load_set(), "quick", None, tmp_path / "cache", say=lambda m: None
    )
    assert entries == [] and info == {}
    assert missing.startswith("lmbench: Debian has no lmbench binaries for powerpc; lmbench source ")
    assert "lmbench-3.0-a9.tar.gz" in missing and "BRINGUP_DL_DIR" in missing


@needs_arm
def test_tarball_sha256_checked_and_failed_build_names_its_log(tmp_path):
    tree = fake_tree(tmp_path / "t" / "lmbench-3.0-a9", tmp_path / "count", fail=True)
    tgz = tmp_path / "lmbench.tgz"
    with tarfile.open(tgz, "w:gz") as tf:
        tf.add(tree, arcname="lmbench-3.0-a9")
    with pytest.raises(BringupError, match="sha256 mismatch"):
        lmbench_build.build(
            lmbench_build.parse_spec(str(tgz), "00" * 32),
            recipe(),
            ARM,
            "armhf",
            tmp_path / "cache",
            say=lambda m: None,
        )
    with pytest.raises(BringupError, match=r"lmbench build for armhf failed \(make exited 2\); log: .*build\.log"):
        lmbench_build.build(
            lmbench_build.parse_spec(str(tgz), None), recipe(), ARM, "armhf", tmp_path / "cache", say=lambda m: None
        )
    assert not list((tmp_path / "cache" / "userspace" / "armhf").glob("lmbench-*/.complete"))


def test_bad_specs(tmp_path):
    with pytest.raises(BringupError, match="a URL needs its sha256"):
        lmbench_build.parse_spec("https://example.org/lmbench.tgz", None)
    with pytest.raises(BringupError, match="no such file or directory"):
        lmbench_build.parse_spec(str(tmp_path / "nope"), None)
    (tmp_path / "x").mkdir()
    with pytest.raises(BringupError, match=r"not an lmbench tree \(no src/Makefile\)"):
        lmbench_build.tree_for({"path": str(tmp_path / "x")}, tmp_path)
    assert lmbench_build.parse_spec("", None) is None


def test_a_named_lmbench_source_that_cannot_be_used_stops_the_footprint(tmp_path):
    """A refused (unsafe) tarball the user named is an error, not "lmbench not measured"."""
    import tarfile

    from bringup.errors import BringupError
    from bringup.model.board import load_board

    bad = tmp_path / "lmbench.tar.gz"
    with tarfile.open(bad, "w:gz") as tf:
        info = tarfile.TarInfo("../escape")
        info.size = 0
        tf.addfile(info)
    spec = lmbench_build.parse_spec(str(bad), None)
    with pytest.raises(BringupError, match=r"escapes the target directory"):
        footprint.lmbench_payload(
            load_board("qemu-arm"), footprint.load_set(), "quick", spec, tmp_path / "cache", say=lambda m: None
        )


PPC = "powerpc-linux-gnu-"


@pytest.mark.skipif(shutil.which(PPC + "gcc") is None, reason="no powerpc cross gcc (make deps)")
def test_no_debian_lmbench_builds_the_default_source_and_says_so(tmp_path, monkeypatch):
    """32-bit PowerPC: Debian has no lmbench, so the footprint's ramdisk gets bringup's
    build of lmbench.toml's [source] from a download directory (here a fake tree with
    that file's name and sha256), and the provenance says so."""
    from bringup.model.board import load_board

    tree = fake_tree(tmp_path / "t" / "lmbench-3.0-a9", tmp_path / "count")
    tgz = tmp_path / "dl" / "lmbench-3.0-a9.tar.gz"
    tgz.parent.mkdir()
    with tarfile.open(tgz, "w:gz") as tf:
        tf.add(tree, arcname="lmbench-3.0-a9")
    monkeypatch.setenv("BRINGUP_DL_DIR", str(tgz.parent))

    def no_debian(arch, cache, say):
        raise BringupError(f"lmbench: Debian has no lmbench binaries for {arch}")

    monkeypatch.setattr(footprint, "lmbench_entries", no_debian)
    full = footprint.load_set()
    bset = full.model_copy(
        update={
            "source": SourceFile(file=tgz.name, sha256=sources.sha256_file(tgz), version="3.0-a9"),
            "bench": [b for b in full.bench if b.name in ("lat_ctx_0k", "bw_mem_rd")],
        }
    )
    entries, info, missing = footprint.lmbench_payload(
        load_board("qemu-bamboo"), bset, "quick", None, tmp_path / "cache", say=lambda m: None
    )
    assert missing is None
    bins = sorted(e.path.rsplit("/", 1)[-1] for e in entries if e.path.startswith("usr/lib/lmbench/bin/") and e.data)
    assert bins == ["bw_mem", "hello", "lat_ctx"]  # the set's programs only
    elf = ELFFile(io.BytesIO(next(e.data for e in entries if e.path.endswith("/lat_ctx"))))
    assert elf["e_machine"] == "EM_PPC"
    assert info["origin"] == "bringup-build" and info["verified"] == "sha256" and info["version"] == "3.0-a9"
    assert info["source_sha256"] == sources.sha256_file(tgz) and info["source_file"] == "lmbench-3.0-a9.tar.gz"
    assert any(e.path == "etc/bringup/bench.list" for e in entries)
