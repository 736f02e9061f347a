"""The build engine against a fake Kbuild tree: recipes per era, records,
reuse, failures.  Needs only the host gcc."""

import json
import subprocess
import tarfile
from pathlib import Path

import pytest

from bringup import records
from bringup.builder import context, store
from bringup.builder import kernel as build
from bringup.errors import BringupError, BuildFailed
from bringup.model.board import load_board
from bringup.parse import kconfig
from conftest import make_fake_tree, write_board


def calls(builddir_or_tree: Path) -> list[str]:
    return (builddir_or_tree / ".fake-calls").read_text().splitlines()


def setup_board(
    env, version, olddefconfig=True, fragment="CONFIG_FAKE_PRINTK=y\n", era="2.6+", name="fake", tarball=False
):
    tree = make_fake_tree(env["tmp"] / f"linux-{version}", version, olddefconfig)
    source = {"path": str(tree)}
    if tarball:
        tb = env["tmp"] / f"linux-{version}.tar.gz"
        with tarfile.open(tb, "w:gz") as tf:
            tf.add(tree, arcname=f"linux-{version}")
        source = {"tarball": str(tb)}
    frag = env["tmp"] / "frag.config"
    frag.write_text(fragment)
    boards = env["tmp"] / "boards"
    write_board(
        boards, name, [{"id": "k1", "source": source, "defconfig": "tinyconfig", "fragments": [str(frag)], "era": era}]
    )
    return load_board(name, boards=boards), tree, frag


def do_build(env, board, **kw) -> context.Built:
    return build.build_kernel(board, board.kernels[0], env["logs"], env["cache"], say=lambda m: None, **kw)


def test_modern_recipe_builds_out_of_tree_with_olddefconfig(env):
    board, tree, _ = setup_board(env, "6.1.0")
    rec = do_build(env, board).record
    builddir = env["cache"] / "build" / "fake" / "k1"
    got = calls(builddir)
    assert got[0].startswith("tinyconfig O=" + str(builddir))
    assert got[1].startswith("olddefconfig")
    assert got[2].startswith("zImage")
    assert not any(c.startswith("dep") for c in got)
    assert not (tree / ".config").exists(), "an O= build must leave the source tree clean"
    assert rec.status == "ok" and rec.era == "2.6+" and rec.kernelrelease == "6.1.0"


def test_record_numbers_match_the_artifacts(env):
    board, _, _ = setup_board(env, "6.1.0")
    built = do_build(env, board)
    rec = built.record
    recdir = env["logs"] / "fake" / "k1"
    assert built.file == recdir / "build.json" and not built.reused
    on_disk = records.read(recdir / "build.json", records.Build)
    assert on_disk == rec
    assert "_artifact_sources" not in json.loads(built.file.read_text()), "no private keys in records"
    z = recdir / rec.artifacts["zImage"]
    assert rec.sizes.compressed_image.model_dump() == {"file": "zImage", "bytes": z.stat().st_size}
    vm = recdir / rec.artifacts["vmlinux"]
    assert rec.sizes.vmlinux_bytes == vm.stat().st_size
    out = subprocess.run(["size", str(vm)], capture_output=True, text=True, check=True).stdout
    text, data, bss, dec = (int(x) for x in out.splitlines()[1].split()[:4])
    assert rec.sizes.berkeley.model_dump() == {"text": text, "data": data, "bss": bss, "dec": dec}
    assert rec.warnings == 1 and rec.errors == 0
    t = rec.time
    assert t.real > 0 and t.user >= 0 and t.sys >= 0
    assert [s.name for s in t.steps] == ["make tinyconfig", "make olddefconfig", "make zImage"]
    assert abs(sum(s.real for s in t.steps) - t.real) < 0.01
    assert (recdir / "build.log").exists() and not (recdir / "build.log.partial").exists()


def test_2_6_tree_without_olddefconfig_gets_oldconfig_with_default_answers(env):
    board, _, _ = setup_board(env, "2.6.11.7", olddefconfig=False)
    rec = do_build(env, board).record
    got = calls(env["cache"] / "build" / "fake" / "k1")
    assert got[1].startswith("oldconfig"), got
    assert rec.time.steps[1].name == "make oldconfig"
    assert rec.version == "2.6.11.7"


def test_2_4_recipe_runs_dep_in_a_private_copy(env):
    board, tree, _ = setup_board(env, "2.4.25", era="2.4")
    rec = do_build(env, board).record
    copy = env["cache"] / "build" / "fake" / "k1" / "tree"
    got = calls(copy)
    assert [c.split()[0] for c in got] == ["tinyconfig", "oldconfig", "dep", "zImage"]
    assert all(c.endswith("O=") for c in got), "2.4 builds must not pass O="
    assert not (tree / ".config").exists() and not (tree / ".fake-calls").exists()
    assert rec.era == "2.4" and rec.status == "ok"


def test_the_2_6_recipe_on_a_2_4_tree_fails_clearly(env):
    # a 2.4 tree needs 'make dep' before the image: the wrong era must not pass silently
    board, _, _ = setup_board(env, "2.4.25", era="2.6+")
    with pytest.raises(BuildFailed, match=r"'make tinyconfig' wrote no .*era = \"2.4\""):
        do_build(env, board)


def test_dropped_fragment_symbol_is_named(env):
    board, _, _ = setup_board(env, "6.1.0", fragment="CONFIG_FAKE_PRINTK=y\nCONFIG_FAKE_GONE=y\n")
    rec = do_build(env, board).record
    assert [d.model_dump() for d in rec.config.dropped] == [
        {"file": "frag.config", "symbol": "CONFIG_FAKE_GONE", "wanted": "y", "got": "n", "step": "olddefconfig"}
    ]
    assert "CONFIG_FAKE_GONE=y did not survive olddefconfig" in (env["logs"] / "fake" / "k1" / "build.log").read_text()


def test_second_build_is_reused_and_a_changed_fragment_rebuilds(env):
    board, tree, frag = setup_board(env, "6.1.0", tarball=True)
    first = do_build(env, board)
    n = len(calls(env["cache"] / "build" / "fake" / "k1"))
    second = do_build(env, board)
    assert second.reused is True and second.record == first.record
    assert len(calls(env["cache"] / "build" / "fake" / "k1")) == n, "an up-to-date build must not run make"
    frag.write_text("CONFIG_FAKE_PRINTK=y\nCONFIG_FAKE_NET=y\n")
    board = load_board("fake", boards=env["tmp"] / "boards")
    stale = env["cache"] / "build" / "fake" / "k1" / "stale.o"
    stale.write_text("left over")
    third = do_build(env, board)
    assert not third.reused and third.record.key != first.record.key
    assert not stale.exists(), "a build that runs starts from an empty tree (whole-build times)"


def test_another_logs_dir_gets_the_stored_build_without_make(env, tmp_path):
    board, _, frag = setup_board(env, "6.1.0", tarball=True)
    first = do_build(env, board)
    builddir = env["cache"] / "build" / "fake" / "k1"
    (builddir / ".fake-calls").unlink()
    said = []
    other = tmp_path / "other-logs"
    copy = build.build_kernel(board, board.kernels[0], other, env["cache"], say=said.append)
    assert copy.reused is True and copy.record == first.record
    assert not (builddir / ".fake-calls").exists(), "a stored build must not run make"
    assert any("copied from" in m for m in said), said
    rec = records.read(other / "fake" / "k1" / "build.json", records.Build)
    for rel in rec.artifacts.values():
        a, b = other / "fake" / "k1" / rel, env["logs"] / "fake" / "k1" / rel
        assert a.read_bytes() == b.read_bytes()
    assert (other / "fake" / "k1" / "build.log").read_text() == (env["logs"] / "fake" / "k1" / "build.log").read_text()
    # FORCE runs make even though the store has this key
    forced = build.build_kernel(
        board, board.kernels[0], tmp_path / "third", env["cache"], force=True, say=lambda m: None
    )
    assert forced.reused is False and calls(builddir)[-1].startswith("zImage")
    # another config is another key: not in the store, so make runs
    frag.write_text("CONFIG_FAKE_PRINTK=y\nCONFIG_FAKE_NET=y\n")
    board = load_board("fake", boards=env["tmp"] / "boards")
    changed = build.build_kernel(board, board.kernels[0], tmp_path / "fourth", env["cache"], say=lambda m: None)
    assert changed.reused is False and changed.record.key != first.record.key


def test_an_incomplete_stored_build_is_not_used(env, tmp_path):
    board, _, _ = setup_board(env, "6.1.0", tarball=True)
    first = do_build(env, board)
    stored = env["cache"] / "results" / "fake" / "k1" / first.record.key
    assert (stored / "build.json").exists()
    for img in (stored / "images").iterdir():
        img.unlink()
    again = build.build_kernel(board, board.kernels[0], tmp_path / "other", env["cache"], say=lambda m: None)
    assert again.reused is False


def test_the_store_keeps_the_newest_builds_only(env, tmp_path):
    board, _, frag = setup_board(env, "6.1.0", tarball=True)
    for i in range(store.STORE_KEEP + 2):
        frag.write_text(f"CONFIG_FAKE_PRINTK=y\nCONFIG_FAKE_N{i}=y\n")
        board = load_board("fake", boards=env["tmp"] / "boards")
        last = do_build(env, board)
    kept = [d for d in (env["cache"] / "results" / "fake" / "k1").iterdir() if not d.name.startswith(".")]
    assert len(kept) == store.STORE_KEEP
    assert last.record.key in {d.name for d in kept}


def test_local_tree_outside_git_always_runs_make(env):
    # its content is unknown, so make (incremental) decides; bringup must not skip it
    board, _, _ = setup_board(env, "6.1.0")
    do_build(env, board)
    again = do_build(env, board)
    assert not again.reused and again.record.key is None


def test_failed_build_keeps_the_earlier_good_record(env):
    board, tree, frag = setup_board(env, "6.1.0")
    good = do_build(env, board)
    recdir = env["logs"] / "fake" / "k1"
    before = (recdir / "build.json").read_bytes()
    zimage = (recdir / "images" / "zImage").read_bytes()
    frag.write_text("CONFIG_FAKE_BREAK=y\n")
    board = load_board("fake", boards=env["tmp"] / "boards")
    with pytest.raises(BuildFailed, match=r"fake/k1 failed at 'make zImage' \(exit 2\)"):
        do_build(env, board)
    assert (recdir / "build.json").read_bytes() == before
    assert (recdir / "images" / "zImage").read_bytes() == zimage
    failed = records.read(recdir / "build-failed.json", records.BuildFailure)
    assert failed.status == "fail" and "make zImage" in (failed.error or "")
    assert [s.exit for s in failed.steps] == [0, 0, 2]
    assert "broken on purpose" in (recdir / "build-failed.log").read_text()
    assert good.record.status == "ok"


def test_missing_toolchain_names_the_debian_package(env):
    board, _, _ = setup_board(env, "6.1.0")
    k = board.kernels[0]
    k.cross_compile = "arm-nonexistent-linux-gnueabihf-"
    k.arch.toolchain_packages = {"arm-nonexistent-linux-gnueabihf-": "gcc-arm-nonexistent"}
    with pytest.raises(BringupError, match=r"arm-nonexistent-linux-gnueabihf-gcc not found .*gcc-arm-nonexistent"):
        build.build_kernel(board, k, env["logs"], env["cache"], say=lambda m: None)


def test_merge_fragment_replaces_and_appends():
    cfg = 'CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C="x"\n'
    out = kconfig.merge_fragment(cfg, {"CONFIG_B": "y", "CONFIG_A": "n", "CONFIG_D": "12"})
    parsed = kconfig.parse_config(out)
    assert parsed == {"CONFIG_A": "n", "CONFIG_B": "y", "CONFIG_C": '"x"', "CONFIG_D": "12"}
    assert out.count("CONFIG_A") == 1


def test_ctrl_c_keeps_the_good_record_and_leaves_no_make(env):
    import os
    import signal
    import sys
    import time

    board, tree, frag = setup_board(env, "6.1.0")
    do_build(env, board)
    recdir = env["logs"] / "fake" / "k1"
    before = (recdir / "build.json").read_bytes()
    frag.write_text("CONFIG_FAKE_SLOW=y\n")
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bringup",
            "build-all",
            "--board",
            str(env["tmp"] / "boards" / "fake.toml"),
        ],
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as at a terminal, even when this test runs where SIGINT is ignored (a shell
        # script's background job inherits SIG_IGN, and Python then keeps it)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    log = recdir / "build.log.partial"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (log.exists() and "slow.o" in log.read_text()):
        time.sleep(0.05)
    time.sleep(0.3)  # the slow step has run a while: its time is more than a rounding of 0
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 130 and "bringup: interrupted" in err
    assert (recdir / "build.json").read_bytes() == before
    failed = records.read(recdir / "build-failed.json", records.BuildFailure)
    assert failed.status == "interrupted"
    cut = [s for s in failed.steps if s.exit is None]
    assert len(cut) == 1 and cut[0].real > 0, "the interrupted make's step says how long it ran, not 0.0"
    left = subprocess.run(["pgrep", "-f", str(tree)], capture_output=True, text=True).stdout.strip()
    assert left == "", "make must not outlive an interrupted build"


def test_build_all_goes_on_after_a_failed_kernel(env):
    tree = make_fake_tree(env["tmp"] / "linux-6.1.0", "6.1.0")
    bad, good = env["tmp"] / "bad.config", env["tmp"] / "good.config"
    bad.write_text("CONFIG_FAKE_BREAK=y\n")
    good.write_text("CONFIG_FAKE_NET=y\n")
    boards = env["tmp"] / "boards"
    write_board(
        boards,
        "two",
        [
            {"id": "broken", "source": {"path": str(tree)}, "defconfig": "tinyconfig", "fragments": [str(bad)]},
            {"id": "fine", "source": {"path": str(tree)}, "defconfig": "tinyconfig", "fragments": [str(good)]},
        ],
    )
    said = []
    with pytest.raises(BuildFailed, match=r"1 of 2 builds failed for board two"):
        build.build_all(load_board("two", boards=boards), env["logs"], env["cache"], say=said.append)
    assert (env["logs"] / "two" / "fine" / "build.json").exists()
    assert not (env["logs"] / "two" / "broken" / "build.json").exists()
    assert any("failed at 'make zImage'" in s for s in said)
    assert any("broken on purpose" in s for s in said), "the tail of the failed log is shown"


def test_sigkill_of_bringup_keeps_the_good_record_and_leaves_no_make(env):
    """bringup killed with SIGKILL mid-build (no chance to clean up): the kernel
    kills make's whole process group, the good record stays byte-identical."""
    import os
    import signal
    import sys
    import time

    board, tree, frag = setup_board(env, "6.1.0")
    do_build(env, board)
    recdir = env["logs"] / "fake" / "k1"
    before = (recdir / "build.json").read_bytes()
    frag.write_text("CONFIG_FAKE_SLOW=y\n")
    p = subprocess.Popen(
        [sys.executable, "-m", "bringup", "build-all", "--board", str(env["tmp"] / "boards" / "fake.toml")],
        env=dict(os.environ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    log = recdir / "build.log.partial"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (log.exists() and "slow.o" in log.read_text()):
        time.sleep(0.05)
    assert "slow.o" in log.read_text(), "the slow step never started"
    # make's process group (the keeper's): make, its shell and the slow step, and only ours
    keeper = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split()
    assert len(keeper) == 1, keeper
    slow = subprocess.run(["pgrep", "-g", keeper[0]], capture_output=True, text=True).stdout.split()
    assert len(slow) >= 3, "the keeper, make and the slow step should be running"
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=10)
    deadline = time.monotonic() + 5
    alive = slow
    while time.monotonic() < deadline and alive:
        alive = [pid for pid in slow if os.path.exists(f"/proc/{pid}")]
        time.sleep(0.05)
    assert not alive, "make and its children must not outlive a SIGKILLed bringup"
    assert (recdir / "build.json").read_bytes() == before


def test_vmlinux_that_is_not_elf_fails_in_one_line(env):
    board, _, _ = setup_board(env, "6.1.0", fragment="CONFIG_FAKE_NOTELF=y\n")
    with pytest.raises(BuildFailed) as e:
        do_build(env, board)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("build of fake/k1: ") and "vmlinux: not a readable ELF file: " in msg
    failed = records.read(env["logs"] / "fake" / "k1" / "build-failed.json", records.BuildFailure)
    assert failed.status == "fail" and failed.error == msg
    assert not (env["logs"] / "fake" / "k1" / "build.json").exists()


def test_a_board_booting_an_uncompressed_image_gets_the_compressed_one_too(env):
    # e.g. QEMU bamboo boots the ELF vmlinux; the record's compressed image is still made
    board, _, _ = setup_board(env, "6.1.0")
    f = env["tmp"] / "boards" / "fake.toml"
    f.write_text(f.read_text().replace('target = "zImage"', 'target = "Image"'))
    board = load_board("fake", boards=env["tmp"] / "boards")
    rec = do_build(env, board).record.model_dump(mode="json")
    assert [s["name"] for s in rec["time"]["steps"]] == [
        "make tinyconfig",
        "make olddefconfig",
        "make Image",
        "make zImage",
    ]
    assert rec["sizes"]["boot_image"]["file"] == "Image" and rec["sizes"]["compressed_image"]["file"] == "zImage"
