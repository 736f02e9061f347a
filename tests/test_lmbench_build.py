"""lmbench from a user-given source: the recipe of configs/lmbench.toml run by the
real cross compiler on a fake lmbench tree (a src/Makefile that builds a few
programs into ../bin/$(OS)/ the way lmbench's does)."""

import io
import shutil
import tarfile

import pytest
from elftools.elf.elffile import ELFFile

from bringup.build import lmbench as lmbench_build
from bringup.errors import BringupError
from bringup.measure import footprint

ARM = "arm-linux-gnueabihf-"
needs_arm = pytest.mark.skipif(shutil.which(ARM + "gcc") is None, reason="no arm cross gcc (make deps)")

PROG = r"""
#include <stdio.h>
#include <rpc/rpc.h>        /* lmbench's bench.h needs the Sun RPC headers */
#ifndef RUSAGE
#error the recipe's CFLAGS did not arrive
#endif
int main(void) { printf("%d\n", (int)sizeof(struct rpc_msg) > 0); return 0; }
"""


def fake_tree(root, counter, fail=False):
    (root / "src").mkdir(parents=True)
    (root / "src" / "prog.c").write_text(PROG)
    (root / "src" / "Makefile").write_text(
        "all:\n"
        '\ttest -n "$(OS)" && test -d ../bin/$(OS)\n'
        f"\techo built >> {counter}\n"
        + ("\tfalse\n" if fail else "")
        + "\tfor b in lat_ctx bw_mem lat_syscall; do $(CC) $(CFLAGS) $(LDFLAGS) -o ../bin/$(OS)/$$b prog.c"
        " || exit 1; done\n"
        "\t$(CC) $(CFLAGS) -c -o ../bin/$(OS)/lib_timing.o prog.c\n"
    )
    return root


def recipe():
    return footprint.load_set().source_build


@needs_arm
def test_builds_static_binaries_with_the_cross_compiler_and_caches(tmp_path):
    tree = fake_tree(tmp_path / "lmbench-3.0-a9", tmp_path / "count")
    spec = lmbench_build.parse_spec(str(tree), None)
    entries, info = lmbench_build.build(spec, recipe(), ARM, "armhf", tmp_path / "cache", say=lambda m: None)
    files = {e.path: e for e in entries}
    assert sorted(p for p in files if p.startswith("usr/lib/lmbench/bin/") and files[p].data) == [
        "usr/lib/lmbench/bin/bw_mem",
        "usr/lib/lmbench/bin/lat_ctx",
        "usr/lib/lmbench/bin/lat_syscall",
    ]
    elf = ELFFile(io.BytesIO(files["usr/lib/lmbench/bin/lat_ctx"].data))
    assert elf["e_machine"] == "EM_ARM"
    assert not any(s["p_type"] == "PT_INTERP" for s in elf.iter_segments())  # static
    assert info["binaries"] == 3 and "OS=arm-linux-gnueabihf" in info["make_args"]
    lmbench_build.build(spec, recipe(), ARM, "armhf", tmp_path / "cache", say=lambda m: None)
    assert (tmp_path / "count").read_text().count("built") == 1  # cached


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
