"""Stopping autoboot on a real board: the board's interrupt string, sent again
until the prompt answers.  The fake board's countdown flushes the keys typed in
its first moments (as U-Boot's does) and may want a whole stop string
(CONFIG_AUTOBOOT_STOP_STR); a board nobody stops boots its flash."""

import pytest
from pydantic import ValidationError

from bringup.boot import session as bs
from bringup.model.board import board_file_model, load_board
from bringup.model.milestones import load_rules
from fakeboard import KERNEL, FakeBoard
from recordfactory import build as build_record


@pytest.fixture
def fake_build(tmp_path):
    recdir = tmp_path / "rec"
    (recdir / "images").mkdir(parents=True)
    (recdir / "images" / "uImage").write_bytes(b"\0" * 128)
    initrd = tmp_path / "initramfs.cpio.gz"
    initrd.write_bytes(b"\x1f\x8b" + b"\0" * 64)
    rec = build_record("6.12", kernelrelease="6.12.95", artifacts={"uImage": "images/uImage"}).model_dump()
    return rec, recdir, initrd


def boot(tmp_path, fake_build, fb, **uboot):
    board = load_board("qemu-arm")
    assert board.uboot is not None
    board.uboot = board.uboot.model_copy(update=uboot)
    rec, recdir, initrd = fake_build
    fb.tftp_dir = tmp_path / "tftp"
    try:
        return bs.boot_once(
            board, "6.12", rec, recdir, initrd, tmp_path / "run", fb, load_rules(), bs.BootOptions(path="u-boot")
        )
    finally:
        fb.stop()


def test_keys_lost_in_the_countdowns_flush_are_sent_again(tmp_path, fake_build):
    fb = FakeBoard(deaf_for=0.35, bootdelay=2)
    r = boot(tmp_path, fake_build, fb)
    assert r["status"] == "ok", r["error"]
    assert not fb.autobooted
    assert fb.received[0] == "setenv autoload no"  # the repeated keys did not reach the first command
    assert r["milestones"]["bootloader"]["text"].startswith("U-Boot 2023.01")


def test_a_stop_string_is_sent_whole_until_the_prompt_answers(tmp_path, fake_build):
    fb = FakeBoard(stop_str=b"\x03stop", deaf_for=0.25, bootdelay=2)
    r = boot(tmp_path, fake_build, fb, interrupt="\x03stop", interrupt_interval=0.05)
    assert r["status"] == "ok", r["error"]
    assert not fb.autobooted and fb.interrupts >= len("\x03stop")
    assert "tftpboot 0x42000000 uImage" in fb.received


def test_a_board_not_stopped_boots_its_flash_and_the_run_says_which_kernel(tmp_path, fake_build):
    """The interrupt the board wants is not the one the board file gives: autoboot
    runs the kernel in the flash, and the dialogue says so at once."""
    flash = [
        (d, b"[    0.0] Linux version 4.19.1 (vendor@build) #7\r\n" if b"Linux version" in x else x) for d, x in KERNEL
    ]
    fb = FakeBoard(stop_str=b"stop", bootdelay=0.5, flash=flash)
    r = boot(tmp_path, fake_build, fb, interrupt="x", interrupt_interval=0.05)
    assert r["status"] == "fail"
    assert fb.autobooted
    assert r["error"] == (
        "U-Boot: autoboot not stopped by the interrupt 'x': the board booted on its own ('Starting kernel ...')"
    )


def test_interrupt_fields_are_validated():
    with pytest.raises(ValidationError, match="interrupt"):
        board_file_model().model_validate(
            {
                "name": "x",
                "arch": "arm",
                "image": {"target": "zImage"},
                "serial": {"port": "/dev/ttyUSB0"},
                "uboot": {"binary": "-", "kernel_addr": "0x1", "initrd_addr": "0x2", "interrupt": ""},
                "kernels": [{"id": "k", "source": {"url": "https://example.org/linux.tar.xz"}, "defconfig": "x"}],
            }
        )


def test_a_bench_board_that_prints_at_power_on_is_heard_and_stopped(tmp_path, fake_build):
    """The bench sequence end to end: the board prints its banner and countdown the
    moment its power command runs, whether anyone listens or not, and flushes the
    first keys; the serial-board target listens first, hears the banner and the
    autoboot prompt, and stops autoboot by repeating the interrupt."""
    from bringup import targets
    from test_boot_engine import bench_board

    on = tmp_path / "powered-on"
    fb = FakeBoard(power_file=on, deaf_for=0.3, bootdelay=1)
    board, _, _ = bench_board(tmp_path, fb.console_url, on)
    rec, recdir, initrd = fake_build
    run_dir = tmp_path / "run"
    try:
        r = bs.boot_once(
            board,
            "k",
            rec,
            recdir,
            initrd,
            run_dir,
            targets.for_board(board, run_dir),
            load_rules(),
            bs.BootOptions(path="u-boot"),
        )
    finally:
        fb.stop()
    assert r["status"] == "ok", r["error"]
    assert fb.lost == b"" and not fb.autobooted
    log = (run_dir / "console.log").read_text()
    assert "U-Boot 2023.01 (fake)" in log and "Hit any key to stop autoboot" in log
    assert fb.received[-1] == "bootm 0x200000 0x400000"
