"""Linux 2.4 as an era of its own: the ext2 initrd, the musl userspace, the era's
ramdisk and command line, 2.4's /proc/meminfo wording (issue 28).  The real tree is
built and booted by tests/integration/test_era24.py."""

from __future__ import annotations

import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from bringup.boot.session import ramdisk_for
from bringup.builder import musl, rootfs
from bringup.errors import BringupError
from bringup.model.board import load_board, load_era
from bringup.parse import meminfo
from bringup.util import cpio, ext2image

REAL = Path(__file__).parent / "data" / "real"


# --- the era as data -------------------------------------------------------------


def test_the_2_4_era_boots_an_ext2_initrd_without_printk_times():
    era = load_era("2.4")
    assert era.ramdisk == "ext2" and era.ramdisk_cmdline == "root=/dev/ram0" and not era.printk_times
    assert not era.out_of_tree and era.steps == ["dep", "{image}"]
    later = load_era("2.6+")
    assert later.ramdisk == "initramfs" and later.ramdisk_cmdline == "" and later.printk_times


def test_the_i386_eras_board_has_four_eras_under_one_musl_userspace():
    b = load_board("qemu-i386-eras")
    assert [k.id for k in b.kernels] == ["2.4.37.11", "2.6.32", "5.10", "6.12"]
    assert b.libc == "musl"
    k24 = b.kernel("2.4.37.11")
    assert k24.era.name == "2.4" and k24.arch.srcarch == "i386" and k24.cross_compile == "i686-linux-gnu-"
    assert rootfs.ext2_kernels(b) == ["2.4.37.11"]
    assert load_board("qemu-i386").libc == "glibc" and not rootfs.needs_ext2(load_board("qemu-i386"))


def test_ramdisk_for_gives_the_ext2_image_beside_the_cpio_to_a_2_4_kernel(tmp_path):
    cpio_gz = tmp_path / "footprint.cpio.gz"
    cpio_gz.write_bytes(b"x")
    assert ramdisk_for(load_era("2.6+"), cpio_gz) == cpio_gz
    with pytest.raises(BringupError, match=r"footprint\.ext2: missing: the 2\.4 era boots an ext2 initrd"):
        ramdisk_for(load_era("2.4"), cpio_gz)
    (tmp_path / "footprint.ext2").write_bytes(b"y")
    assert ramdisk_for(load_era("2.4"), cpio_gz) == tmp_path / "footprint.ext2"


# --- the ext2 initrd ---------------------------------------------------------------

ENTRIES = [
    cpio.directory("bin"),
    cpio.directory("dev"),
    cpio.directory("etc/init.d"),
    cpio.file("bin/busybox", b"\x7fELF" + b"\0" * 5000, 0o755),
    cpio.symlink("bin/sh", "/bin/busybox"),
    cpio.file("etc/init.d/rcS", b"#!/bin/sh\necho hi\n", 0o700),
    cpio.chardev("dev/console", 5, 1),
    cpio.chardev("dev/null", 1, 3, 0o666),
]


def test_debugfs_script_makes_the_nodes_and_gives_everything_to_root():
    script = ext2image.debugfs_script(ENTRIES).splitlines()
    assert "mknod console c 5 1" in script and "mknod null c 1 3" in script
    assert "sif /dev/null mode 020666" in script and "sif /etc/init.d/rcS mode 0100700" in script
    assert "sif /bin/sh uid 0" in script and not any(s.startswith("sif /bin/sh mode") for s in script)
    assert "sif /dev/console ctime @946684800" in script and "sif /bin/sh mtime @946684800" in script
    assert script.index("sif / gid 0") < script.index("sif /bin/sh atime @946684800")  # times last
    assert script[-3:] == [f"sif / {f} @946684800" for f in ("atime", "ctime", "mtime")]


def test_a_name_debugfs_cannot_take_is_refused_before_any_work(tmp_path):
    with pytest.raises(BringupError, match=r"entry 'etc/a b': a name debugfs cannot take"):
        ext2image.write([cpio.file("etc/a b", b"")], tmp_path / "x.ext2")
    assert not (tmp_path / "x.ext2").exists()


def test_size_grows_with_the_data():
    small = ext2image.size_kib(ENTRIES)
    big = ext2image.size_kib(ENTRIES + [cpio.file("bin/big", b"\0" * 4096 * 1024)])
    assert small >= 1024 and big - small >= 4096


@pytest.mark.skipif(shutil.which("debugfs") is None and not Path("/usr/sbin/debugfs").exists(), reason="e2fsprogs")
def test_the_image_is_ext2_as_2_4_reads_it_and_holds_the_entries(tmp_path):
    out = tmp_path / "rd.ext2"
    size = ext2image.write(ENTRIES, out)
    assert size == out.stat().st_size and size % 1024 == 0
    dbg = shutil.which("debugfs") or "/usr/sbin/debugfs"
    stats = subprocess.run([dbg, "-R", "stats", str(out)], capture_output=True, text=True).stdout
    assert "Inode size:\t          128" in stats and "Block size:               1024" in stats
    features = next(line for line in stats.splitlines() if line.startswith("Filesystem features:"))
    for later in ("dir_index", "ext_attr", "resize_inode", "large_file", "extent", "huge_file"):
        assert later not in features.split(), features
    listing = subprocess.run([dbg, "-R", "stat /dev/console", str(out)], capture_output=True, text=True).stdout
    assert "Type: character special" in listing and "Mode:  0600" in listing and "User:     0" in listing
    assert "Device major/minor number: 05:01" in listing
    rcs = subprocess.run([dbg, "-R", "cat /etc/init.d/rcS", str(out)], capture_output=True, text=True).stdout
    assert rcs == "#!/bin/sh\necho hi\n"
    again = tmp_path / "again.ext2"
    ext2image.write(ENTRIES, again)
    assert again.read_bytes() == out.read_bytes()  # the same entries, the same image


# --- the musl toolchain --------------------------------------------------------------


def test_the_spec_points_gcc_at_musl_and_the_kernel_headers_only(tmp_path):
    text = musl.spec_text(tmp_path, tmp_path / "lib", tmp_path / "inc", tmp_path / "kh")
    assert f"-nostdinc -isystem {tmp_path}/inc -isystem {tmp_path}/kh" in text
    assert f"*startfile:\n{tmp_path}/lib/crt1.o {tmp_path}/lib/crti.o crtbegin.o%s" in text
    assert f"*endfile:\ncrtend.o%s {tmp_path}/lib/crtn.o" in text
    assert "*link:\n-nostdlib -static" in text and "dynamic-linker" not in text


def test_a_board_without_the_gnu_cross_compiler_is_told_which_one(tmp_path):
    with pytest.raises(BringupError, match=r"a musl userspace for i386 needs no-such-prefix-gcc"):
        musl.toolchain("i386", "no-such-prefix-", tmp_path)


def test_busybox_for_musl_turns_off_what_needs_glibc():
    assert {"FEATURE_VI_REGEX_SEARCH", "EXTRA_COMPAT", "FEATURE_MOUNT_NFS"} <= set(rootfs.MUSL_OFF)


# --- 2.4's /proc/meminfo (real sample, values read by hand) ---------------------------


def test_2_4_meminfo_keeps_the_kb_lines_and_ignores_the_byte_table():
    text = (REAL / "meminfo" / "2.4-i686-rhel-linuxweblog.txt").read_text()
    got = meminfo.parse_meminfo(text)
    assert got["MemTotal"] == 1025392 and got["MemFree"] == 36232 and got["MemShared"] == 0
    assert got["Buffers"] == 111008 and got["Cached"] == 279304 and got["SwapFree"] == 1835400
    assert "Mem" not in got and "Swap" not in got and "MemAvailable" not in got
    assert len(got) == 20


def test_the_overlay_rcs_works_without_kmsg_sysfs_or_a_writable_root():
    rcs = (Path(__file__).parents[1] / "rootfs-overlay" / "etc" / "init.d" / "rcS").read_text()
    assert "mount -o remount,rw /" in rcs
    assert "grep -q sysfs /proc/filesystems && mount -t sysfs sysfs /sys" in rcs
    assert 'if [ -c /dev/kmsg ]; then echo "bringup: userspace up" > /dev/kmsg; else' in rcs
    assert (
        stat.S_IMODE((Path(__file__).parents[1] / "rootfs-overlay" / "etc" / "init.d" / "rcS").stat().st_mode) & 0o100
    )


def test_a_2_4_kernel_is_never_put_on_the_instruction_clock(tmp_path):
    """The instruction clock times milestones by their printk times; 2.4 prints none."""
    from bringup.model.base import DataError
    from bringup.model.clocks import with_clock

    b = load_board("qemu-i386-eras")
    with pytest.raises(DataError, match=r"--clock instructions: board qemu-i386-eras's kernel 2\.4\.37\.11 prints"):
        with_clock(b, "instructions")
    assert with_clock(b, "host") is b
    text = (Path(__file__).parents[1] / "boards" / "qemu-i386-eras.toml").read_text()
    bad = tmp_path / "eras.toml"
    bad.write_text(
        text.replace('name = "qemu-i386-eras"', 'name = "eras"').replace(
            'machine = "pc"', 'machine = "pc"\nclock = "instructions"'
        )
    )
    with pytest.raises(DataError, match=r"field 'kernels\[0\]\.era': '2\.4' prints no printk times"):
        load_board(str(bad))


def test_an_lmbench_block_that_reported_a_failed_call_gives_no_number():
    """Seen on 2.4 before its initrd had /dev/zero: the setup's test file was never
    made, lat_syscall stat failed on every call and still printed a time."""
    from bringup.parse import lmbench as lp

    text = (
        "@@@ BEGIN lat_syscall_stat @@@\n"
        + "/tmp/lmb.file: No such file or directory\n" * 3
        + "Simple stat: 13424.0000 microseconds\n@@@ END lat_syscall_stat rc=0 @@@\n"
        "@@@ BEGIN lat_syscall_null @@@\nSimple syscall: 2.2633 microseconds\n@@@ END lat_syscall_null rc=0 @@@\n"
    )
    got = lp.parse_runner(text)
    assert got["lat_syscall_stat"]["metrics"] == [] and got["lat_syscall_stat"]["rc"] == 0
    assert [m["value"] for m in got["lat_syscall_null"]["metrics"]] == [2.2633]


def test_the_ramdisk_has_every_parent_directory_the_kernel_needs():
    """The initramfs unpacker makes no parents: lmbench built from source adds
    usr/lib/lmbench/bin, and usr/lib must be in the archive before it."""
    got = rootfs._dedupe([cpio.directory("usr"), cpio.file("usr/lib/lmbench/bin/lat_ctx", b"x", 0o755)])
    paths = [e.path for e in got]
    assert paths == ["usr", "usr/lib", "usr/lib/lmbench", "usr/lib/lmbench/bin", "usr/lib/lmbench/bin/lat_ctx"]
    assert all(stat.S_ISDIR(e.mode) for e in got[:4])
    late = rootfs._dedupe([cpio.file("etc/x", b""), cpio.directory("etc", 0o700)])
    assert [(e.path, stat.S_IMODE(e.mode)) for e in late] == [("etc", 0o700), ("etc/x", 0o644)]
