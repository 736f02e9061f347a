"""Linux 2.4.37.11 for real (issue 28): built with Debian 12's gcc 12 from a download
directory (../shared/sources, added by tests/conftest.py) with the era fixes of
configs/era/2.4.toml, in a private copy of the tree, then booted by QEMU's `pc` from
the ext2 initrd into the musl userspace, with the footprint measured there (the
`Memory:` line, free, mem_eat ended by 2.4's OOM killer).  About 2 minutes with a cold
cache (the kernel about a minute, busybox against musl about as much)."""

import json
import re

import pytest

from bringup.model.board import load_board

from .conftest import bringup

pytestmark = pytest.mark.integration

BOARD, KERNEL = "qemu-i386-eras", "2.4.37.11"
TREE = "git:e8572ad1908da34657ce08c5a8bce8ded69ea33f"  # linux-2.4.37.11's content


@pytest.fixture(scope="session")
def era24_built(shared_env):
    p = bringup(shared_env, "build-all", "--board", BOARD, "--kernel", KERNEL, "-j", "2", timeout=1800)
    if p.returncode != 0 and re.search(r"download https://\S+/linux-2\.4\.37\.11\.tar\.xz failed", p.stderr):
        pytest.skip("linux-2.4.37.11.tar.xz is in no download directory and cannot be downloaded here")
    return p


def test_2_4_builds_in_a_private_copy_with_its_era_fixes(shared_env, era24_built):
    assert era24_built.returncode == 0, era24_built.stdout[-3000:] + era24_built.stderr[-3000:]
    rec = json.loads((shared_env["logs"] / BOARD / KERNEL / "build.json").read_text())
    assert rec["kernelrelease"] == "2.4.37.11" and rec["era"] == "2.4"
    assert [s["name"] for s in rec["time"]["steps"]] == ["make oldconfig", "make dep", "make bzImage"]
    names = [f["name"] for f in rec["fixes"]]
    assert names[0] == "2.4-gcc-guard-override" and "2.4-no-modversions" in names and len(names) == 8
    assert [f["name"] for f in rec["fixes"] if f.get("overrides")] == ["2.4-gcc-guard-override"]
    src = rec["source"]
    assert src["tree_id"] == TREE and src["verified"] in ("tree", "sha256")
    assert src["private_copy"] and src["private_copy"] != src["tree"], "2.4 builds in a copy, never the source"
    assert rec["sizes"]["compressed_image"]["file"] == "bzImage" and rec["sizes"]["uncompressed_image"] is None
    assert 500_000 < rec["sizes"]["berkeley"]["text"] < 3_000_000
    assert rec["toolchain"]["version"].startswith("i686-linux-gnu-gcc")


def test_2_4_boots_the_ext2_initrd_into_the_musl_userspace_and_its_footprint_is_measured(shared_env, era24_built):
    assert era24_built.returncode == 0
    p = bringup(
        shared_env,
        "footprint-report",
        "--board",
        BOARD,
        "--kernel",
        KERNEL,
        "--lmbench",
        "none",
        "--lmbench-runs",
        "1",
        timeout=1500,
    )
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    rootfs_record = json.loads((shared_env["logs"] / BOARD / "rootfs" / "footprint.json").read_text())
    assert rootfs_record["libc"].startswith("musl ") and "against musl" in rootfs_record["busybox"]["source"]
    assert (
        rootfs_record["ext2"]["file"] == "footprint.ext2"
        and (shared_env["logs"] / BOARD / "rootfs" / "footprint.ext2").is_file()
    )
    footprint_record = json.loads((shared_env["logs"] / BOARD / KERNEL / "footprint.json").read_text())
    ml = footprint_record["memory_line"]  # "Memory: 123572k/130944k available (847k kernel code, ... 253k data, ...)"
    # 2.4 and 2.6 word it alike on i386 (the parser calls that wording "2.6")
    assert ml["kernel_code_kb"] > 300 and ml["total_kb"] > 200_000 and "k kernel code" in ml["text"]
    assert footprint_record["kernel_code_data_kb"] == ml["kernel_code_kb"] + ml["data_kb"]
    board = load_board(BOARD)
    assert 0 < footprint_record["malloc_kb"] < board.memory_mb * 1024 < footprint_record["total_free_kb"] + 64 * 1024
    assert footprint_record["mem_eat"]["completed"] is False, (
        "2.4 never refuses the mapping: the OOM killer ends mem_eat"
    )
    boot_dirs = sorted(d for d in (shared_env["logs"] / BOARD / KERNEL / "footprint-runs").iterdir() if d.is_dir())
    boot = json.loads((boot_dirs[-1] / "boot.json").read_text())
    assert "root=/dev/ram0" in boot["cmdline"].split()
    assert boot["initrd"].endswith("footprint.ext2")
    console = (boot_dirs[-1] / "console.log").read_text()
    assert "VFS: Mounted root (ext2 filesystem)" in console and "Freeing unused kernel memory: " in console
    assert "bringup: userspace up" in console
