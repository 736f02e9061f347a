"""Era compatibility fixes: chosen by kernel version, architecture and gcc major
version; applied to a private copy of the tree (never to the source), listed in
the build record and part of the build key.  The builds run on the fake Kbuild
tree (tests/fakelinux) with its 2.6 style config step: allnoconfig, fragments,
'make oldconfig' fed default answers."""

import hashlib
import json
import re
import shutil
import tarfile
import textwrap

import pytest
from pydantic import ValidationError

from bringup.builder import kernel as build
from bringup.builder.toolchain import gcc_major
from bringup.errors import BuildFailed
from bringup.model.base import DataError
from bringup.model.board import EraFix, MajorRange, VersionRange, load_arch, load_board, load_era, version_tuple
from bringup.util import paths
from conftest import make_fake_tree, write_board

# --- which fixes: the shipped 2.6+ era ------------------------------------------

COMMON = ["compiler-gcc5plus", "timeconst-perl522", "gnu89", "no-pie"]
RUNTIME = ["fstatat-empty-path"]  # any arch, any gcc: lets today's glibc start on 2.6.32


@pytest.mark.parametrize(
    "version,arch,gcc,expected",
    [
        ("2.6.32.71", "arm", 12, COMMON + ["arm-put_user-r2", "arm-no-build-id"] + RUNTIME),
        ("2.6.32", "arm", 12, COMMON + ["arm-put_user-r2", "arm-no-build-id"] + RUNTIME),
        ("2.6.32.71", "x86", 12, COMMON + RUNTIME),
        ("2.6.32.71", "x86_64", 12, COMMON + ["x86_64-decompressor-no-sse"] + RUNTIME),
        ("2.6.32.71", "x86_64", 11, COMMON + RUNTIME),  # gcc 11 does not vectorise at -O2
        ("2.6.32.71", "powerpc", 12, COMMON + ["ppc-disable-werror"] + RUNTIME),
        ("2.6.32.71", "arm", 4, ["timeconst-perl522", "arm-put_user-r2", "arm-no-build-id"] + RUNTIME),
        ("2.6.32.71", "x86", 5, ["compiler-gcc5plus", "timeconst-perl522", "gnu89"] + RUNTIME),  # gcc 5 was not PIE
        ("2.6.31.14", "arm", 12, []),
        ("2.6.33", "arm", 12, []),
        ("5.10.262", "arm", 12, []),
        ("6.12.95", "x86_64", 12, []),
        ("", "arm", 12, []),  # unknown version: no ranged fix
    ],
)
def test_fixes_are_chosen_by_version_arch_and_gcc(version, arch, gcc, expected):
    era = load_era("2.6+")
    assert [f.name for f in era.fixes_for(version, load_arch(arch), gcc)] == expected


def test_unknown_gcc_gets_only_fixes_without_a_gcc_range():
    era = load_era("2.6+")
    assert [f.name for f in era.fixes_for("2.6.32.71", load_arch("x86"), None)] == ["timeconst-perl522"] + RUNTIME


def test_every_shipped_fix_says_what_it_avoids_and_its_file_exists():
    era = load_era("2.6+")
    assert era.fixes, "the 2.6+ era carries the 2.6.32 fixes"
    for f in era.fixes:
        assert f.avoids and f.unchanged
        if f.patch:
            assert era.patch_path(f).is_file()
        if f.fragment:
            assert era.fragment_path(f).is_file()
    era24 = load_era("2.4")
    for f in era24.fixes:
        assert f.avoids and f.unchanged and f.name.startswith("2.4-")
        assert era24.patch_path(f).is_file() if f.patch else True
        assert era24.fragment_path(f).is_file() if f.fragment else True


# --- which fixes: the shipped 2.4 era (verified on i386 with gcc 12 only) ---------

I386_24 = [
    "2.4-gcc-guard-override",
    "2.4-i386-semaphore-asmlinkage",
    "2.4-do_exit-asmlinkage",
    "2.4-i386-spinlock-printk-asmlinkage",
    "2.4-no-loop-distribute-patterns",
    "2.4-gnu89",
    "2.4-no-pie",
    "2.4-no-modversions",
]


@pytest.mark.parametrize(
    "version,arch,gcc,expected",
    [
        ("2.4.37.11", "i386-2.4", 12, I386_24),
        ("2.4.25", "i386-2.4", 12, I386_24),
        ("2.4.37.11", "i386-2.4", 5, [f for f in I386_24 if f != "2.4-no-pie"]),  # gcc 5 was not PIE
        ("2.4.37.11", "i386-2.4", 4, ["2.4-no-modversions"]),  # a compiler of the tree's own range needs none
        ("2.4.37.11", "armel", 12, ["2.4-no-modversions"]),  # other architectures: unverified, no code fixes
        ("2.6.32.71", "i386-2.4", 12, []),
        ("2.5.75", "i386-2.4", 12, []),
    ],
)
def test_2_4_fixes_are_chosen_by_version_arch_and_gcc(version, arch, gcc, expected):
    assert [f.name for f in load_era("2.4").fixes_for(version, load_arch(arch), gcc)] == expected


def test_only_the_compiler_guard_fix_overrides_what_the_authors_supported():
    """The report must say it beside every 2.4 number: the fix carries the words."""
    over = [f for e in ("2.4", "2.6+") for f in load_era(e).fixes if f.overrides]
    assert [f.name for f in over] == ["2.4-gcc-guard-override"]
    assert "gcc 2.95.3 to 4.1" in over[0].overrides


def test_every_fix_has_its_section_in_the_docs_and_runtime_ones_say_so():
    """docs/eras.md explains each fix under a heading with its name; a fix that changes
    the running kernel (`changes`) says so in its heading."""
    doc = (paths.ROOT / "docs" / "eras.md").read_text(encoding="utf-8")
    heads = {m.group(1): m.group(0) for m in re.finditer(r"^### ([a-z0-9_.+-]+) .*$", doc, re.M)}
    for f in load_era("2.6+").fixes + load_era("2.4").fixes:
        assert f.name in heads, f"docs/eras.md: no section for {f.name}"
        assert ("changes the running kernel" in heads[f.name]) == bool(f.changes), heads[f.name]
        assert ("overrides what the tree's authors supported" in heads[f.name]) == bool(f.overrides), heads[f.name]
    assert [f.name for f in load_era("2.6+").fixes if f.changes] == RUNTIME


@pytest.mark.parametrize(
    "text,expected",
    [
        ("2.6.32.71", (2, 6, 32, 71)),
        ("2.6.32", (2, 6, 32)),
        ("6.12.95+bpo", (6, 12, 95)),
        ("3.0-rc1", (3, 0)),
        ("", ()),
    ],
)
def test_version_tuple(text, expected):
    assert version_tuple(text) == expected


def test_ranges():
    r = VersionRange(min="2.6.32", below="2.6.33")
    assert r.contains("2.6.32") and r.contains("2.6.32.71") and not r.contains("2.6.33") and not r.contains("2.6.4")
    assert VersionRange().contains("") and not r.contains("")
    assert MajorRange(min=5).contains(12) and not MajorRange(min=5).contains(4)
    assert MajorRange(below=5).contains(4) and not MajorRange(below=5).contains(5)
    with pytest.raises(ValidationError, match="'2.6.32' is not above min '2.6.33'"):
        VersionRange(min="2.6.33", below="2.6.32")
    with pytest.raises(ValidationError, match="5 is not above min 12"):
        MajorRange(min=12, below=5)
    with pytest.raises(ValidationError, match="string_pattern_mismatch|should match pattern"):
        VersionRange(min="2.6.x")


def test_a_fix_has_exactly_one_action():
    base = {"name": "x", "avoids": "an error", "unchanged": "why"}
    with pytest.raises(ValidationError, match=r"exactly one of patch, make_vars, cc_flags, fragment \(got none\)"):
        EraFix(**base)
    with pytest.raises(ValidationError, match=r"\(got patch, make_vars\)"):
        EraFix(**base, patch="p.patch", make_vars={"KCFLAGS": "-O1"})
    with pytest.raises(ValidationError, match="make_vars"):
        EraFix(**base, make_vars={"KCFLAGS": "$(shell id)"})
    with pytest.raises(ValidationError, match="cc_flags"):
        EraFix(**base, cc_flags=["-fno-pie; rm -rf /"])


@pytest.mark.parametrize(
    "version_line,major",
    [
        ("gcc (Debian 12.2.0-14+deb12u1) 12.2.0", 12),
        ("arm-linux-gnueabi-gcc (Debian 12.2.0-14) 12.2.0", 12),
        ("ppc_8xx-gcc (GCC) 3.3.3 (DENX ELDK 3.1.1 3.3.3-9)", 3),
        ("gcc (GCC) 4.1.2 20080704 (Red Hat 4.1.2-55)", 4),
        ("unknown", None),
    ],
)
def test_gcc_major(version_line, major):
    assert gcc_major(version_line) == major


# --- fixes applied in a build (fake tree) ------------------------------------------

ERA_H_PATCH = """\
The fake tree's era.h says "broken"; this makes it "fixed".

--- a/era.h
+++ b/era.h
@@ -1 +1 @@
-broken
+fixed
"""

OLD_ERA = """\
out_of_tree = {out_of_tree}
config_target = "olddefconfig"
config_fallback = "oldconfig"
steps = {steps}

[[fixes]]
name = "fake-era-h"
avoids = "era.h:1:1: error: this old tree needs its era fix"
unchanged = "a fake"
kernel = {{ min = "{lo}", below = "{hi}" }}
patch = "fixes/era-h.patch"

[[fixes]]
name = "gnu89"
avoids = "multiple definition"
unchanged = "the old dialect"
kernel = {{ min = "{lo}", below = "{hi}" }}
gcc = {{ min = 5 }}
make_vars = {{ KCFLAGS = "-std=gnu89" }}

[[fixes]]
name = "no-common"
avoids = "a second KCFLAGS"
unchanged = "joined with the first"
kernel = {{ min = "{lo}", below = "{hi}" }}
make_vars = {{ KCFLAGS = "-fno-common" }}

[[fixes]]
name = "no-pie"
avoids = "impossible constraint in 'asm'"
unchanged = "not PIE, as then"
kernel = {{ min = "{lo}", below = "{hi}" }}
cc_flags = ["-fno-pie"]

[[fixes]]
name = "arm-no-build-id"
avoids = "a silent hang"
unchanged = "a note"
kernel = {{ min = "{lo}", below = "{hi}" }}
arch = ["arm"]
make_vars = {{ LDFLAGS_BUILD_ID = "" }}

[[fixes]]
name = "x86-only"
avoids = "nothing on arm"
unchanged = "never applied here"
arch = ["x86"]
make_vars = {{ FAKE_X86 = "1" }}

[[fixes]]
name = "future-gcc"
avoids = "nothing with gcc 12"
unchanged = "never applied here"
gcc = {{ min = 999 }}
make_vars = {{ FAKE_FUTURE = "1" }}

[[fixes]]
name = "fragment"
avoids = "a -Werror"
unchanged = "a switch"
kernel = {{ min = "{lo}", below = "{hi}" }}
fragment = "era/fixes/fake.config"
"""

APPLIED = ["fake-era-h", "gnu89", "no-common", "no-pie", "arm-no-build-id", "fragment"]


def old_setup(env, version="2.6.32.71", source="tarball", out_of_tree=True, lo="2.6.32", hi="2.6.33", era_h="broken"):
    """A 2.6-style fake tree that only builds with its era fix, a configs/ dir with the
    'old' era, and a board building it from allnoconfig + a fragment."""
    configs = env["tmp"] / "configs"
    (configs / "arch").mkdir(parents=True)
    shutil.copy(paths.CONFIGS / "arch" / "arm.toml", configs / "arch")
    (configs / "era" / "fixes").mkdir(parents=True)
    (configs / "era" / "old.toml").write_text(
        OLD_ERA.format(
            out_of_tree=str(out_of_tree).lower(),
            lo=lo,
            hi=hi,
            steps='["{image}"]' if out_of_tree else '["dep", "{image}"]',
        )
    )
    (configs / "era" / "fixes" / "era-h.patch").write_text(ERA_H_PATCH)
    (configs / "era" / "fixes" / "fake.config").write_text("CONFIG_FAKE_NET=y\n")
    tree = make_fake_tree(env["tmp"] / f"linux-{version}", version, olddefconfig=False)
    (tree / "era.h").write_text(era_h + "\n")
    spec = {"path": str(tree)}
    if source == "tarball":
        tb = env["tmp"] / f"linux-{version}.tar.gz"
        with tarfile.open(tb, "w:gz") as tf:
            tf.add(tree, arcname=f"linux-{version}")
        spec = {"tarball": str(tb)}
    frag = env["tmp"] / "frag.config"
    frag.write_text("CONFIG_FAKE_PRINTK=y\n")
    boards = env["tmp"] / "boards"
    write_board(
        boards,
        "old",
        [{"id": "k1", "source": spec, "defconfig": "allnoconfig", "fragments": [str(frag)], "era": "old"}],
    )
    board = load_board("old", boards=boards, configs=configs)
    return board, tree, configs


def do_build(env, board, said=None) -> dict:
    """The build record as written (without the fields it does not have), and `reused`."""
    built = build.build_kernel(
        board, board.kernels[0], env["logs"], env["cache"], say=(said.append if said is not None else lambda m: None)
    )
    d = built.record.model_dump(mode="json", by_alias=True)
    d["fixes"] = [f.model_dump(mode="json", exclude_none=True) for f in built.record.fixes]
    return {**d, "reused": built.reused}


def fake_vars(d):
    return (d / ".fake-vars").read_text().splitlines()


def test_fixes_are_applied_to_a_private_copy_and_recorded(env):
    board, tree, configs = old_setup(env)
    said = []
    rec = do_build(env, board, said)
    assert [f["name"] for f in rec["fixes"]] == APPLIED
    patch = configs / "era" / "fixes" / "era-h.patch"
    assert rec["fixes"][0] == {
        "name": "fake-era-h",
        "kind": "patch",
        "sha256": hashlib.sha256(patch.read_bytes()).hexdigest(),
        "patch": "configs/era/fixes/era-h.patch",
        "avoids": "era.h:1:1: error: this old tree needs its era fix",
        "unchanged": "a fake",
    }
    assert rec["fixes"][1]["make_vars"] == {"KCFLAGS": "-std=gnu89"}
    assert rec["fixes"][3]["cc_flags"] == ["-fno-pie"]
    assert rec["fixes"][5]["fragment"] == "era/fixes/fake.config"
    assert any("era fixes for 2.6.32.71: fake-era-h, gnu89" in m for m in said)

    # the private copy carries the patch; the extracted source does not
    copy = rec["source"]["private_copy"]
    assert copy.startswith(str(env["cache"] / "src" / "fixed-"))
    assert (env["cache"] / "src").joinpath(copy).joinpath("era.h").read_text() == "fixed\n"
    extracted = rec["source"]["tree"]
    assert (env["cache"] / "src").joinpath(extracted).joinpath("era.h").read_text() == "broken\n"
    assert (tree / "era.h").read_text() == "broken\n"

    # every make saw the joined KCFLAGS, CC with -fno-pie and the empty LDFLAGS_BUILD_ID
    lines = fake_vars(env["cache"] / "build" / "old" / "k1")
    assert [x.split()[0] for x in lines] == ["allnoconfig", "oldconfig", "zImage"]
    for line in lines:
        assert "KCFLAGS=[-std=gnu89 -fno-common]" in line
        assert "gcc -fno-pie]" in line.split("CC=[")[1]
        assert "LDFLAGS_BUILD_ID=command line[]" in line
        assert "FAKE_X86" not in line and "FAKE_FUTURE" not in line
    assert any(c.startswith("KCFLAGS=-std=gnu89 -fno-common") for c in rec["commands"][0].split(" '"))

    # the fix's fragment was merged after the kernel's and checked like them
    config = (env["logs"] / "old" / "k1" / "images" / "config").read_text()
    assert "CONFIG_FAKE_NET=y" in config and "CONFIG_FAKE_PRINTK=y" in config
    assert rec["config"]["dropped"] == []
    assert [s["name"] for s in rec["time"]["steps"]] == ["make allnoconfig", "make oldconfig", "make zImage"]


def test_the_fixes_are_part_of_the_build_key(env):
    board, _, configs = old_setup(env)
    first = do_build(env, board)
    assert do_build(env, board).get("reused") is True
    patch = configs / "era" / "fixes" / "era-h.patch"
    patch.write_text(patch.read_text().replace("The fake tree", "This fake tree"))
    board = load_board("old", boards=env["tmp"] / "boards", configs=configs)
    third = do_build(env, board)
    assert not third.get("reused") and third["key"] != first["key"]
    assert third["fixes"][0]["sha256"] == hashlib.sha256(patch.read_bytes()).hexdigest()
    assert third["source"]["private_copy"] != first["source"]["private_copy"], "one copy per set of patches"


def test_no_fix_outside_its_version_range(env):
    # 2.6.33 is outside every fix's range: no fix, no copy, and this tree's era.h fails the build
    board, _, _ = old_setup(env, version="2.6.33")
    with pytest.raises(BuildFailed, match=r"failed at 'make zImage'"):
        do_build(env, board)
    failed = json.loads((env["logs"] / "old" / "k1" / "build-failed.json").read_text())
    assert "needs its era fix" in (env["logs"] / "old" / "k1" / "build-failed.log").read_text()
    assert failed["status"] == "fail"
    assert not list((env["cache"] / "src").glob("fixed-*"))


def test_a_patch_that_does_not_apply_fails_in_one_line_naming_the_fix(env):
    board, tree, _ = old_setup(env, era_h="something else")
    with pytest.raises(BuildFailed) as e:
        do_build(env, board)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith("era fix fake-era-h: configs/era/fixes/era-h.patch does not apply to 2.6.32.71 (")
    assert "FAILED" in msg
    recdir = env["logs"] / "old" / "k1"
    assert json.loads((recdir / "build-failed.json").read_text())["error"] == msg
    assert not list((env["cache"] / "src").glob("fixed-*")), "no half-patched copy is left"
    assert (tree / "era.h").read_text() == "something else\n"


def test_a_local_tree_outside_git_is_copied_for_each_build(env):
    board, tree, _ = old_setup(env, source="path")
    rec = do_build(env, board)
    copy = env["cache"] / "build" / "old" / "k1.src" / tree.name
    assert rec["source"]["private_copy"] == str(copy) and rec["key"] is None
    assert (copy / "era.h").read_text() == "fixed\n" and (tree / "era.h").read_text() == "broken\n"
    assert not list((env["cache"] / "src").glob("fixed-*"))
    again = do_build(env, board)
    assert not again.get("reused") and (copy / "era.h").read_text() == "fixed\n"


def test_2_4_recipe_applies_patches_in_its_build_copy(env):
    board, tree, _ = old_setup(env, version="2.4.25", out_of_tree=False, lo="2.4.0", hi="2.5")
    rec = do_build(env, board)
    copy = env["cache"] / "build" / "old" / "k1" / "tree"
    assert rec["source"]["private_copy"] == str(copy)
    assert (copy / "era.h").read_text() == "fixed\n"
    assert [c.split()[0] for c in (copy / ".fake-calls").read_text().splitlines()] == [
        "allnoconfig",
        "oldconfig",
        "dep",
        "zImage",
    ]


def test_a_dropped_symbol_is_named_on_a_2_6_tree(env):
    # 2.6.32 has no CONFIG_TTY: a fragment asking for a symbol the tree lacks is a warning and a record entry
    board, _, _ = old_setup(env)
    (env["tmp"] / "frag.config").write_text("CONFIG_FAKE_PRINTK=y\nCONFIG_FAKE_TTY=y\n")
    board = load_board("old", boards=env["tmp"] / "boards", configs=env["tmp"] / "configs")
    said = []
    rec = do_build(env, board, said)
    assert rec["config"]["dropped"] == [
        {"file": "frag.config", "symbol": "CONFIG_FAKE_TTY", "wanted": "y", "got": "n", "step": "oldconfig"}
    ]
    assert any("CONFIG_FAKE_TTY=y did not survive oldconfig" in m for m in said)


def test_era_file_errors_are_located(tmp_path):
    configs = tmp_path / "configs"
    (configs / "era").mkdir(parents=True)
    body = textwrap.dedent("""\
        out_of_tree = true
        config_target = "olddefconfig"
        steps = ["{image}"]
        [[fixes]]
        name = "a"
        avoids = "x"
        unchanged = "y"
        patch = "fixes/missing.patch"
        """)
    (configs / "era" / "e.toml").write_text(body)
    with pytest.raises(
        DataError, match=r"field 'fixes\[0\]\.patch': 'fixes/missing.patch': no such file under configs/era/"
    ):
        load_era("e", configs)
    (configs / "era" / "e.toml").write_text(
        body.replace('patch = "fixes/missing.patch"', 'make_vars = { A = "1" }') * 1
    )
    (configs / "era" / "e.toml").write_text(
        body.replace('patch = "fixes/missing.patch"', 'make_vars = { A = "1" }')
        + '[[fixes]]\nname = "a"\navoids = "x"\nunchanged = "y"\ncc_flags = ["-O1"]\n'
    )
    with pytest.raises(DataError, match=r"fixes\[1\]\.name.*'a' is listed twice"):
        load_era("e", configs)
