"""Is the kernel that boots the one we built?  The banner parser on real console
lines, the banner of an image, and the boot session failing a run whose board
boots another build ("booted kernel X, expected Y")."""

from pathlib import Path

import pytest

from bringup.boot import session as bs
from bringup.boot.identity import KernelCheck, built_banner
from bringup.model.board import load_board
from bringup.model.milestones import load_rules
from bringup.parse import banner
from fakeboard import KERNEL, FakeBoard
from recordfactory import build as build_record

REAL = Path(__file__).parent / "data" / "real" / "bootlogs"


def real_line(name: str) -> str:
    return next(line for line in (REAL / name).read_text(errors="replace").splitlines() if "Linux version" in line)


@pytest.mark.parametrize(
    "log, release, by, compiler, version",
    [
        (
            "dmesg-6.8.6-armv7-imx6-riotboard.log",
            "6.8.6-riotboard",
            "yjdwbj@gmail.com",
            "arm-linux-gnueabi-gcc (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40",
            "#4 SMP Sun Apr 14 19:24:26 CST 2024",
        ),
        (
            "uboot-2010.06-dirty-3.0.8-arm926-hi3518-ipcam.log",
            "3.0.8",
            "root@skyi",
            "gcc version 4.4.1 (Hisilicon_v100(gcc4.4-290+uclibc_0.9.32.1+eabi+linuxpthread)) ",
            "#163 Tue Nov 18 10:43:40 CST 2014",
        ),
        (
            "redboot-2.4.34-mips-ar2315-openwrt.log",
            "2.4.34",
            "samul_hwang@samLnxG2",
            "gcc version 3.4.6 (OpenWrt-2.0)",
            "#2 Tue Jul 3 14:16:21 CST 2007",
        ),
    ],
)
def test_real_banners_parse_into_release_builder_compiler_version(log, release, by, compiler, version):
    b = banner.parse(real_line(log))
    assert b == banner.Banner(release, by, compiler, version)


def test_lines_that_are_not_a_banner():
    assert banner.parse("[    0.1] printk: console [ttyAMA0] enabled") is None
    assert banner.parse("%s version %s (bringup@bringup) (gcc) %s") is None  # linux_proc_banner's format
    assert banner.parse("Linux version 6.1") is None  # no builder: cut off, not a banner


OURS = (
    "Linux version 6.12.95 (bringup@bringup) (arm-linux-gnueabihf-gcc (Debian 12.2.0-14) 12.2.0) "
    "#1 Thu Jan  1 00:00:00 UTC 2026"
)


def image_with(*strings: str) -> bytes:
    return b"\x7fELF" + b"\0" * 100 + b"".join(s.encode() + b"\0" for s in strings) + b"\xff" * 50


def test_the_banner_with_a_build_number_wins():
    """6.1+ images hold init/version.o's banner without the build number before the
    one the kernel prints (seen with `strings vmlinux` of a 6.12 build)."""
    unnumbered = OURS.replace("#1 Thu", "# Thu")
    b = banner.from_image(image_with(unnumbered + "\n", OURS + "\n"))
    assert b is not None and b.version == "#1 Thu Jan  1 00:00:00 UTC 2026"
    only = banner.from_image(image_with(unnumbered + "\n"))
    assert only is not None and only.version == "# Thu Jan  1 00:00:00 UTC 2026"


def test_banner_of_an_image_skips_the_proc_format_and_keeps_the_spacing():
    img = image_with("%s version %s (bringup@bringup) (gcc) %s\n", "Linux version ", OURS + "\n")
    b = banner.from_image(img)
    assert b is not None
    assert b.release == "6.12.95" and b.version == "#1 Thu Jan  1 00:00:00 UTC 2026"
    assert banner.from_image(image_with("nothing here")) is None


def test_mismatch_names_both_kernels():
    built = banner.parse(OURS)
    assert built is not None
    # the same build as the console shows it (printk time before it, \r after it)
    same = banner.parse("[    0.000000] " + OURS + "\r")
    assert same is not None and banner.mismatch(same, "6.12.95", built) is None
    other = banner.parse(
        "[    0.000000] Linux version 5.10.262 (bringup@bringup) (gcc 12) #1 Thu Jan  1 00:00:00 UTC 2026"
    )
    assert other is not None
    assert banner.mismatch(other, "6.12.95", built) == (
        "booted kernel 5.10.262 (bringup@bringup) #1 Thu Jan  1 00:00:00 UTC 2026, "
        "expected 6.12.95 (bringup@bringup) #1 Thu Jan  1 00:00:00 UTC 2026"
    )
    # same release, someone else's build of it (the vendor kernel in the flash)
    vendor = banner.parse("Linux version 6.12.95 (jenkins@ci) (gcc 9) #42 SMP PREEMPT Mon Mar 3 10:00:00 CET 2025")
    assert vendor is not None
    assert banner.mismatch(vendor, "6.12.95", built) == (
        "booted kernel 6.12.95 (jenkins@ci) #42 SMP PREEMPT Mon Mar 3 10:00:00 CET 2025, "
        "expected 6.12.95 (bringup@bringup) #1 Thu Jan  1 00:00:00 UTC 2026"
    )
    # without the build's banner, the release alone decides
    assert banner.mismatch(vendor, "6.12.95", None) is None
    assert banner.mismatch(other, "6.12.95", None) == "booted kernel 5.10.262, expected 6.12.95"


def test_only_the_first_banner_is_checked():
    check = KernelCheck("6.12.95", None)
    assert check.feed("U-Boot 2023.01") is None
    assert check.feed("[    0.0] Linux version 6.12.95 (a@b) #1") is None
    assert check.feed("[    0.0] Linux version 5.10.1 (a@b) #1") is None  # a reset: the milestones' business
    assert check.seen is not None and check.seen.release == "6.12.95"


@pytest.fixture
def fake_build(tmp_path):
    recdir = tmp_path / "rec"
    (recdir / "images").mkdir(parents=True)
    (recdir / "images" / "uImage").write_bytes(b"\0" * 128)
    (recdir / "images" / "vmlinux").write_bytes(image_with(OURS + "\n"))
    initrd = tmp_path / "initramfs.cpio.gz"
    initrd.write_bytes(b"\x1f\x8b" + b"\0" * 64)
    rec = build_record(
        "6.12", kernelrelease="6.12.95", artifacts={"uImage": "images/uImage", "vmlinux": "images/vmlinux"}
    )
    return rec, recdir, initrd


def kernel_printing(line: bytes):
    return [(d, line if b"Linux version" in data else data) for d, data in KERNEL]


def boot(fake_build, tmp_path, fb):
    rec, recdir, initrd = fake_build
    fb.tftp_dir = tmp_path / "tftp"
    return bs.boot_once(
        load_board("qemu-arm"),
        "6.12",
        rec,
        recdir,
        initrd,
        tmp_path / "run",
        fb,
        load_rules(),
        bs.BootOptions(path="u-boot"),
    )


def test_the_build_banner_is_read_from_the_records_vmlinux(fake_build):
    rec, recdir, _ = fake_build
    assert built_banner(rec, recdir) == banner.parse(OURS)
    assert built_banner(rec.model_copy(update={"artifacts": {}}), recdir) is None


def test_a_board_that_boots_another_build_fails_the_run_naming_both(fake_build, tmp_path):
    """The board's flash holds 5.10: U-Boot's bootm starts it instead of what we loaded."""
    flash = b"[    0.000000] Linux version 5.10.262 (bringup@bringup) (gcc 12) #3 Thu Jan  1 00:00:00 UTC 2026\r\n"
    r = boot(fake_build, tmp_path, FakeBoard(kernel=kernel_printing(flash)))
    assert r["status"] == "fail"
    assert r["error"] == (
        "booted kernel 5.10.262 (bringup@bringup) #3 Thu Jan  1 00:00:00 UTC 2026, "
        "expected 6.12.95 (bringup@bringup) #1 Thu Jan  1 00:00:00 UTC 2026"
    )
    assert r["booted_kernel"].startswith("5.10.262 (bringup@bringup) (gcc 12) #3")
    assert "login" not in r["milestones"]  # it stopped at the banner


def test_the_build_we_made_boots_and_is_recorded(fake_build, tmp_path):
    r = boot(fake_build, tmp_path, FakeBoard(kernel=kernel_printing(b"[    0.000000] " + OURS.encode() + b"\r\n")))
    assert r["status"] == "ok", r["error"]
    assert r["booted_kernel"] == OURS.removeprefix("Linux version ")
