"""Milestone parsing on canned logs of each era, faults, and broken input."""

import json
from pathlib import Path

import pytest

from bringup.model.base import DataError
from bringup.model.milestones import load_rules
from bringup.parse import milestones as ms
from conftest import run_cli

DATA = Path(__file__).parent / "data"


def parse(name):
    return ms.parse_bootlog((DATA / name).read_bytes(), load_rules())


def test_2_4_wording_without_printk_times():
    r = parse("boot-2.4-tqm860l.log")
    assert r["format"] == "raw"
    m = r["milestones"]
    assert list(m) == [
        "bootloader",
        "kernel_load",
        "starting_kernel",
        "linux_version",
        "nfs_root",
        "freeing_init",
        "userspace",
        "login",
    ]
    assert m["starting_kernel"]["text"].strip() == "Uncompressing Kernel Image ... OK" or m["starting_kernel"][
        "text"
    ].startswith("   Uncompressing")
    assert m["freeing_init"]["text"] == "Freeing unused kernel memory: 52k init"
    assert m["login"]["text"] == "tqm860l login: "
    assert all(v["printk_s"] is None and v["host_s"] is None for v in m.values())
    assert r["missing"] == [] and r["fault"] is None and r["complete"]


def test_2_6_wording_with_printk_times():
    r = parse("boot-2.6-sandpoint.log")
    assert r["format"] == "printk"
    m = r["milestones"]
    assert m["console_enabled"]["printk_s"] == 0.91
    assert m["nfs_root"]["printk_s"] == 14.9
    assert m["freeing_init"]["printk_s"] == 14.91
    assert "bootloader" not in m and r["complete"]


def test_modern_stamped_log_times_and_intervals():
    r = parse("boot-6.12-arm.stamped.log")
    assert r["format"] == "stamped"
    m = r["milestones"]
    assert m["linux_version"]["host_s"] == 0.6489
    assert m["freeing_init"]["host_s"] == 1.049191 and m["freeing_init"]["printk_s"] == 0.281542
    assert m["freeing_init"]["text"].endswith("Freeing unused kernel image (initmem) memory: 1024K")
    # the earlycon 'bootconsole' line is not the console milestone
    assert m["console_enabled"]["text"].endswith("legacy console [ttyAMA0] enabled")
    iv = {(i["from"], i["to"]): i for i in r["intervals"]}
    assert iv[("freeing_init", "run_init")]["host_s"] == pytest.approx(0.001433)
    assert iv[("freeing_init", "run_init")]["printk_s"] == pytest.approx(0.000691)
    # first line with a running clock: host 0.76 at printk 0.000011 -> clock zero at 0.759989,
    # first printk line at host 0.648746: 0.111243 s hidden at [0.000000]
    assert r["clock_zero_host_s"] == pytest.approx(0.759989)
    assert r["hidden_at_zero_s"] == pytest.approx(0.111243)


def test_bare_time_of_day_stamps_are_host_times():
    """`ts '%.T'` / `ts '%F %.T'` stamps without brackets: host times relative to the first
    line; the printk time after them stays the printk time (a "[ 0.1] psci:" line is no syslog)."""
    log = (
        b"2024-03-05 10:11:12.000000 U-Boot 2021.01 (Jan 01 2021 - 00:00:00)\n"
        b"2024-03-05 10:11:13.250000 Starting kernel ...\n"
        b"2024-03-05 10:11:13.500000 [    0.000000] Linux version 5.10.0 (a@b) #1\n"
        b"2024-03-05 10:11:13.600000 [    0.100000] psci: probing for conduit method from DT.\n"
        b"2024-03-05 10:11:14.000000 [    0.500000] cpuidle: using governor menu\n"
        b"2024-03-05 10:11:15.000000 [    1.500000] Freeing unused kernel memory: 1024K\n"
    )
    r = ms.parse_bootlog(log, load_rules())
    assert r["format"] == "host-clock-bare"
    m = r["milestones"]
    assert (m["bootloader"]["host_s"], m["starting_kernel"]["host_s"]) == (0.0, 1.25)
    assert (m["linux_version"]["host_s"], m["linux_version"]["printk_s"]) == (1.5, 0.0)
    assert (m["freeing_init"]["host_s"], m["freeing_init"]["printk_s"]) == (3.0, 1.5)
    # LAVA's lines: a UTC offset and two spaces before the text
    lava = (
        b"2021-02-02 16:17:29.081000+00:00  coreboot-7d042db9 Mon Oct 22 20:40:09 UTC 2018 bootblock starting...\n"
        b"2021-02-02 16:17:31.581000+00:00  [    0.000000] Linux version 4.14.218 (a@b) #1\n"
    )
    m = ms.parse_bootlog(lava, load_rules())["milestones"]
    assert (m["first_stage"]["host_s"], m["linux_version"]["host_s"], m["linux_version"]["printk_s"]) == (0.0, 2.5, 0.0)
    # `dmesg --time-format iso`: every line stamped, whether or not its text looks like "prog: ..."
    iso = (
        b"2025-01-01T10:15:30,123456+00:00 Linux version 6.1.0 (a@b) #1 SMP\n"
        b"2025-01-01T10:15:30,123460+00:00 psci: probing for conduit method from DT.\n"
        b"2025-01-01T10:15:30,223456+00:00 Serial: AMBA PL011 UART driver\n"
        b"2025-01-01T10:15:31,623456+00:00 Freeing unused kernel memory: 1024K\n"
        b"2025-01-01T10:15:31,700000+00:00 Run /sbin/init as init process\n"
    )
    r = ms.parse_bootlog(iso, load_rules())
    assert r["format"] == "host-clock-bare"
    assert (r["milestones"]["linux_version"]["host_s"], r["milestones"]["freeing_init"]["host_s"]) == (0.0, 1.5)
    # moreutils' `ts` by default: a syslog date without host or "prog:", on every line
    ts = (
        b"Mar 05 10:11:12 U-Boot 2021.01 (Jan 01 2021 - 00:00:00 +0000)\n"
        b"Mar 05 10:11:12 DRAM:  512 MiB\n"
        b"Mar 05 10:11:14 Starting kernel ...\n"
        b"Mar 05 10:11:15 [    0.000000] Linux version 5.10.0 (a@b) #1\n"
        b"Mar 05 10:11:15 [    0.100000] psci: probing for conduit method from DT.\n"
        b"Mar 05 10:11:17 [    1.900000] Freeing unused kernel memory: 1024K\n"
    )
    r = ms.parse_bootlog(ts, load_rules())
    m = r["milestones"]
    assert r["format"] == "ts" and r["bootloader"]["name"] == "U-Boot"
    assert (m["bootloader"]["host_s"], m["starting_kernel"]["host_s"], m["linux_version"]["host_s"]) == (0, 2, 3)
    assert (m["freeing_init"]["host_s"], m["freeing_init"]["printk_s"]) == (5, 1.9)
    # without a fraction of a second a time of day may be the log's own words: not a stamp
    r = ms.parse_bootlog(b"12:00:00 Linux version 5.10.0 (a@b) #1\n12:00:01 Freeing init memory: 8K\n", load_rules())
    assert r["format"] == "raw"


def test_garbled_bytes_before_a_printk_time_keep_it():
    """A console's garbage as the kernel takes the UART over ("\xff\xfe[    0.000000] ..."): the
    line still has its printk time (read by hand: 0.000000, then 1.5)."""
    log = (
        b"Starting kernel ...\n\xff\xfe[    0.000000] Linux version 5.10.0 (a@b) #1\n"
        b"[    1.500000] Freeing unused kernel memory: 1024K\n"
    )
    r = ms.parse_bootlog(log, load_rules())
    assert r["milestones"]["linux_version"]["printk_s"] == 0.0
    assert r["milestones"]["linux_version"]["text"].endswith("Linux version 5.10.0 (a@b) #1")
    assert r["milestones"]["freeing_init"]["printk_s"] == 1.5


def test_panic_is_a_fault_quoting_the_line():
    r = parse("boot-panic.log")
    assert r["fault"]["kind"] == "panic" and r["fault"]["line"] == 4
    assert "Unable to mount root fs" in r["fault"]["text"]
    assert "freeing_init" in r["missing"] and not r["complete"]


def test_second_bootloader_banner_is_an_unexpected_reset():
    r = parse("boot-reset.log")
    assert r["fault"]["kind"] == "reset" and r["fault"]["line"] == 5


def test_truncated_log_reports_what_is_missing():
    r = parse("boot-truncated.log")
    assert list(r["milestones"]) == ["linux_version"]
    assert r["missing"] == ["freeing_init", "userspace", "login"] and r["fault"] is None


def test_garbage_bytes_break_nothing():
    r = parse("boot-garbage.log")
    assert r["complete"] and r["fault"] is None
    assert r["milestones"]["linux_version"]["printk_s"] == 0.0
    assert "\ufffd" in r["milestones"]["linux_version"]["text"]


@pytest.mark.parametrize(
    "line,name",
    [
        ("Freeing unused kernel memory: 52k init", "freeing_init"),
        ("[    0.280955] Freeing unused kernel memory: 1024K", "freeing_init"),
        ("[    0.281542] Freeing unused kernel image (initmem) memory: 1024K", "freeing_init"),
        ("Freeing init memory: 132K", "freeing_init"),
        ("[   14.9] VFS: Mounted root (nfs4 filesystem) on device 0:14.", "nfs_root"),
        ("[    0.91] console [ttyS0] enabled", "console_enabled"),
        ("[    0.91] printk: console [ttyAMA0] enabled", "console_enabled"),
        ("bringup login: ", "login"),
        # a late kernel message can land on the prompt's line
        ("bringup login: [    0.921860] input: ImExPS/2 Generic Explorer Mouse as /devices/input2", "login"),
    ],
)
def test_wordings(line, name):
    s = ms.Scan(load_rules())
    s.feed(1, None, line)
    assert name in s.found


def test_board_override_and_bad_override():
    rules = load_rules({"login": r"^# $"})
    assert {m.name: m for m in rules.milestones}["login"].regex.pattern == "^# $"
    with pytest.raises(DataError, match=r"field 'milestones.nope': no such milestone"):
        load_rules({"nope": "x"})
    with pytest.raises(DataError, match=r"field 'milestones.login': '\(unclosed': not a valid regular expression"):
        load_rules({"login": "(unclosed"})


def test_cli_parse_bootlog_prints_json():
    p = run_cli("parse", "bootlog", str(DATA / "boot-2.6-sandpoint.log"), check=True)
    r = json.loads(p.stdout)
    assert r["milestones"]["freeing_init"]["printk_s"] == 14.91


def test_login_word_in_a_kernel_message_is_not_the_prompt():
    s = ms.Scan(load_rules())
    s.feed(1, None, "[    1.0] audit: type=1006 old-auid=4294967295 auid=0 tty=(none) res=1 login:")
    assert "login" not in s.found


def test_stream_reading_cuts_overlong_lines_and_counts_every_line():
    import io

    log = b"x" * (ms.MAX_LINE * 3) + b"\nLinux version 2.6.32 (gcc)\n\xff\xfe broken bytes\r\nlast"
    fmt, lines = ms.read_log_stream(io.BytesIO(log))
    got = list(lines)
    assert fmt == "raw" and [n for n, _, _ in got] == [1, 2, 3, 4]
    assert len(got[0][2]) == ms.MAX_LINE and got[1][2] == "Linux version 2.6.32 (gcc)"
    assert got[2][2] == "\ufffd\ufffd broken bytes" and got[3][2] == "last"
    res = ms.parse_bootlog(io.BytesIO(log), load_rules())
    assert res["lines"] == 4 and res["milestones"]["linux_version"]["line"] == 2


@pytest.mark.parametrize("kind", ["missing", "directory", "fifo"])
def test_parse_refuses_what_is_not_a_regular_file_in_one_line(tmp_path, kind):
    import os

    p = tmp_path / "log"
    if kind == "directory":
        p.mkdir()
    elif kind == "fifo":
        os.mkfifo(p)
    r = run_cli("parse", "bootlog", str(p))
    words = {"missing": "no such file", "directory": "is a directory", "fifo": "not a regular file"}[kind]
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and words in r.stderr and "Traceback" not in r.stderr


def scan_lines(*lines):
    s = ms.Scan(load_rules())
    for n, line in enumerate(lines, 1):
        s.feed(n, None, line)
    return s


@pytest.mark.parametrize(
    "line,name,who",
    [
        ("U-Boot 2017.05-jumpnow (Jun 22 2017 - 19:16:50 +0200)", "bootloader", "U-Boot"),
        ("U-Boot 2010.12-rc2-svn3205-Dji (Nov 02 2015 - 19:07:26)", "bootloader", "U-Boot"),
        ("U-Boot 1.1.4 (Oct 10 2007 - 10:00:00)", "bootloader", "U-Boot"),
        ("PHYTEC U-Boot 2021.04 (Jan 01 2022)", "bootloader", "U-Boot"),  # a vendor word before it
        ("U-Boot SPL 2017.05-jumpnow (Jun 22 2017 - 19:16:50)", "first_stage", "U-Boot"),
        ("U-Boot TPL 2019.07 (Aug 01 2019)", "first_stage", "U-Boot"),
        ("Dji UBL Version: 1.51(Nov  2 2015 - 15:45:39)", "first_stage", "TI UBL"),
        ("PPCBoot 2.0.0 (Apr 10 2003 - 10:41:19)", "bootloader", "PPCBoot"),
        ("YAMON ROM Monitor, Revision 02.15DB1500.", "bootloader", "YAMON"),
        ("RedBoot(tm) bootstrap and debug environment [ROMRAM]", "bootloader", "RedBoot"),
        ("CFE version 1.0.37 for BCM947XX (32bit,SP,LE)", "bootloader", "CFE"),
        ("barebox 2022.02.0-phy1 #1 Thu Mar 3 2022", "bootloader", "barebox"),
        ("                             GNU GRUB  version 2.06", "bootloader", "GRUB"),
        ("                                 GRUB version 2.06", "bootloader", "GRUB"),  # RHEL 9's build
        ("[0] welcome to lk", "bootloader", "LK"),
        ("[760] fastboot: download:00f3f800", "kernel_load", "LK"),
        (
            "[1300] booting linux @ 0x8000, ramdisk @ 0x2000000 (9533134), tags/device tree @ 0x1e00000",
            "starting_kernel",
            "LK",
        ),
        ("OpenSBI v1.0", "first_stage", "OpenSBI"),
        ("  Welcome to Open Firmware", "bootloader", "Open Firmware"),
        ("Welcome to yaboot version 1.3.16", "bootloader", "yaboot"),
        ("Please wait, loading kernel...", "kernel_load", "yaboot"),
        ("PMON2000 MIPS Initializing. Standby...", "bootloader", "PMON"),
        ("PMON> load /dev/fs/ext2@wd0/boot/vmlinux", "kernel_load", "PMON"),
        ("coreboot-4.12 Tue Jun 30 10:00:00 UTC 2020 bootblock starting (log level: 7)...", "first_stage", "coreboot"),
        ("UEFI firmware (version  built at 22:13:20 on Apr 23 2020)", "first_stage", "UEFI"),
        ("Shell> fs0:\\Image root=/dev/vda2 rootwait console=ttyS0", "kernel_load", "UEFI"),
        ("  Booting `Debian GNU/Linux'", "kernel_load", "GRUB"),
        ("  Booting 'Fedora (2.6.35.6-45.fc14.i686)'", "kernel_load", "GRUB"),  # GRUB legacy
        ("kernel (hd0,1)/boot/calgary/bzImage root=/dev/sda2 console=ttyS1,19200", "kernel_load", "GRUB"),
        ("   [Linux-bzImage, setup=0x1c00, size=0x2e3ad8]", "kernel_load", "GRUB"),
        ("SILO Version 1.4.14", "bootloader", "SILO"),
        ("ELILO boot: Uncompressing Linux... done", "kernel_load", "ELILO"),
        ("blob version 2.0.5-pre3 for Intel HCDDBBVA0 (Mainstone)", "bootloader", "blob"),
        ("OpenBoot 3.2.30, 3840 MB memory installed, Serial #9039287.", "bootloader", "Open Firmware"),
        ("{6} ok boot net:dhcp -p root=/dev/nfs", "kernel_load", "Open Firmware"),
        ("Loading kernel from flash ......... done", "kernel_load", "blob"),
        ("ELILO boot: Uncompressing Linux... done", "starting_kernel", "ELILO"),
        ("EFI version 1.10 [14.60] Build flags: EFI64 Running on Intel(R) Itanium", "first_stage", "UEFI"),
        ("EFI stub: Booting Linux Kernel...", "starting_kernel", ""),
        ("Uncompressing", "starting_kernel", ""),  # "Uncompressing Linux.......done." wrapped by a mailer
        ("Booting Linux via __start() @ 0x0000000000400000 ...", "starting_kernel", ""),
        ("=> tftpboot 0x42000000 uImage", "kernel_load", "U-Boot"),
        ("reading /zImage", "kernel_load", "U-Boot"),
        ("## Booting kernel from Legacy Image at 82000000 ...", "kernel_load", "U-Boot"),
        ("## Booting image at 21000000 ...", "kernel_load", "U-Boot"),  # U-Boot 1.x bootm
        ("### JFFS2 loading 'uImage' to 0x80800000", "kernel_load", "U-Boot"),  # U-Boot 1.x fsload
        ("### SQUASHFS loading 'image/uImage' to 0x80800000", "kernel_load", "U-Boot"),  # a vendor's fsload
        ("YAMON> load", "kernel_load", "YAMON"),  # the environment's file
        ("TFTP from server 192.168.3.1; our IP address is 192.168.3.80", "kernel_load", "U-Boot"),
        ("RedBoot> fis load -l vmlinux.bin.l7", "kernel_load", "RedBoot"),
        ("YAMON> load -r tftp://10.145.2.248/zImage.srec", "kernel_load", "YAMON"),
        ("CFE> boot -elf 10.0.1.184:vmlinux.47xx", "kernel_load", "CFE"),
        ("barebox@PHYTEC phyCORE-i.MX6 ULL SOM with eMMC:/ bootm", "kernel_load", "barebox"),
        ("  Loading Linux 6.1.0-18-amd64 ...", "kernel_load", "GRUB"),
        ("Starting kernel ...", "starting_kernel", "U-Boot"),
        ("Starting program at 0x80005590", "starting_kernel", "CFE"),
        ("Uncompressing Linux... done, booting the kernel.", "starting_kernel", ""),
    ],
)
def test_bootloader_lines_name_the_bootloader(line, name, who):
    s = scan_lines(line)
    assert name in s.found and s.variants.get(name, "") == who


def test_prom_init_words_are_not_the_linux_version_line():
    s = scan_lines("Preparing to boot Linux version 3.8.0-9-powerpc-smp (buildd@sagari) #15-Ubuntu SMP")
    assert "linux_version" not in s.found


def test_reading_the_device_tree_is_not_the_kernel_load():
    assert "kernel_load" not in scan_lines("reading /zImage-bbb-nohdmi.dtb").found


@pytest.mark.parametrize(
    "first,who",
    [("CFE> setenv LINUX_CMDLINE x", "CFE"), ("barebox@board:/ bootm", "barebox"), ("=> printenv", "U-Boot")],
)
def test_a_prompt_names_the_bootloader_of_a_capture_without_banner(first, who):
    s = scan_lines(first, "Linux version 2.6.28 (x@y) #1")
    assert s.bootloader()["name"] == who and s.bootloader()["from"] == "prompt"


@pytest.mark.parametrize(
    "first,who",
    [
        (">>Start PXE over IPv4.", "UEFI"),
        ('BdsDxe: loading Boot0001 "UEFI QEMU DVD-ROM QM00003 " from PciRoot(0x0)/Pci(0x1,0x1)', "UEFI"),
        ("SeaBIOS (version rel-1.16.0-0-gd239552ce722-prebuilt.qemu.org)", "SeaBIOS"),
    ],
)
def test_firmware_lines_name_it_when_no_bootloader_follows(first, who):
    s = scan_lines(first, "EFI stub: Booting Linux Kernel...", "Linux version 5.15.0 (a@b) #1")
    assert s.bootloader()["name"] == who and s.fault is None


def test_a_chain_of_firmware_and_bootloaders_is_one_boot():
    """Firmware, then a bootloader (or two bootloaders) before the kernel: no reset; the
    bootloader is the one with a banner, the firmware the first stage."""
    s = scan_lines(
        "coreboot-4.18 Sun Jan 15 2023 12:00:00 UTC bootblock starting (log level: 7)...",
        "SeaBIOS (version rel-1.16.1)",
        "SeaBIOS (version rel-1.16.1)",  # printed again after the VGA option ROM
        "Welcome to GRUB!",
        "  Booting `Debian GNU/Linux'",
        "Linux version 6.1.0 (a@b) #1",
    )
    assert s.fault is None and s.reset is None
    assert s.bootloader()["name"] == "GRUB" and s.variants["first_stage"] == "coreboot"
    assert s.found["kernel_load"].line == 5
    s = scan_lines("U-Boot 2021.01 (Jan 1 2021)", "Welcome to GRUB!", "Linux version 5.10.0 (a@b) #1")
    assert s.fault is None and s.bootloader()["name"] == "U-Boot"
    # the same bootloader's banner twice is still a reset
    s = scan_lines("U-Boot 2021.01 (Jan 1 2021)", "Welcome to GRUB!", "U-Boot 2021.01 (Jan 1 2021)")
    assert s.fault["kind"] == "reset" and s.fault["line"] == 3


def test_a_first_stage_that_prints_the_same_banner_then_loads_the_next_is_one_boot():
    """barebox's OMAP MLO prints barebox's banner, says where it boots the main image
    from, then the main barebox prints the banner again: one boot.  Without those
    words, or once the main one has run, the banner again is a reset."""
    mlo = "barebox 2017.03.0 #1 Thu Jun 15 11:44:05 CEST 2017"
    main = "barebox 2017.03.0 #1 Thu Jun 15 11:44:33 CEST 2017"
    s = scan_lines(mlo, "booting from MMC", main, "barebox@TI AM335x BeagleBone black:/ bootm")
    assert s.fault is None and s.reset is None and s.found["kernel_load"].line == 4
    assert s.bootloader()["line"] == 1
    s = scan_lines(mlo, "mmc0: registered mmc0", main)
    assert s.fault["kind"] == "reset" and s.fault["line"] == 3
    s = scan_lines(mlo, "booting from MMC", main, "barebox@b:/ reset", main)
    assert s.fault["kind"] == "reset" and s.fault["line"] == 5


def test_a_banner_names_it_before_the_prompt():
    s = scan_lines("=> reset", "U-Boot 2017.05 (Jun 22 2017)")
    assert s.bootloader() == {"name": "U-Boot", "from": "banner", "line": 2, "text": "U-Boot 2017.05 (Jun 22 2017)"}


def test_milestones_are_order_aware():
    # a module loading after the kernel started is not the bootloader's load command
    s = scan_lines("Linux version 2.6.32 (a@b) #1", "load module stos_core", "tftp 0x1000 x", "Starting kernel ...")
    assert "kernel_load" not in s.found and "starting_kernel" not in s.found and s.fault is None
    # a printk time starts the kernel too (a log that begins after "Linux version")
    s = scan_lines("[    0.1] CPU: ARMv7", "=> tftpboot 0x1000 uImage")
    assert "kernel_load" not in s.found


def test_spl_then_uboot_is_one_boot_but_a_banner_after_the_kernel_is_a_reset():
    s = scan_lines("U-Boot SPL 2017.05 (x)", "U-Boot 2017.05 (x)", "Linux version 4.9.33 (a@b) #1")
    assert s.fault is None and {"first_stage", "bootloader", "linux_version"} <= set(s.found)
    s = scan_lines("Linux version 4.9.33 (a@b) #1", "[    9.1] random: crng init", "U-Boot 2017.05 (x)")
    assert s.fault["kind"] == "reset" and s.fault["line"] == 3
    assert s.fault["message"] == "unexpected reset: bootloader banner after the kernel started"


@pytest.mark.parametrize(
    "line,found",
    [
        ("beaglebone login:", True),  # the last bytes of a capture: no trailing space
        ("WILIBOX login: [17179585.588000] ip_tables: (C) 2000-2006 Netfilter Core Team", True),
        ("IPCAM login: ==> rtl8188e_iol_efuse_patch ", True),
        ("(none) login: ", True),
        ("my-board.example.org login: ", True),
        ("login: ", True),
        ("Last login: Tue Mar  5 10:11:12 on ttyS0", False),
        ("login[453]: root login on 'ttyS0'", False),
        ("sulogin: no password entry for root", False),
    ],
)
def test_login_prompts_of_any_shape(line, found):
    assert ("login" in scan_lines(line).found) is found


@pytest.mark.parametrize(
    "line", ["root@Dji-Pro:~#", "root@(none):/# ", "/ # ", "~ # ", "# ", "$ ", "sh-4.4# ", "[root@host ~]# "]
)
def test_a_shell_prompt_after_the_kernel(line):
    assert "shell" in scan_lines("Linux version 6.1.0 (a@b) #1", line).found
    assert "shell" not in scan_lines(line).found, "before the kernel it is a bootloader's"


def test_busybox_console_prompt():
    s = scan_lines("Linux version 2.4.19 (a@b) #1", "Please press Enter to activate this console. ")
    assert "console_prompt" in s.found and s.found["console_prompt"].line == 2


@pytest.mark.parametrize(
    "line,kind",
    [
        ("Kernel panic: VFS: Unable to mount root fs on 03:41", "panic"),  # 2.4
        ("Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0)", "panic"),
        ("[    1.2] Kernel panic - not syncing: Attempted to kill init! exitcode=0x0000000b", "panic"),
        ("Attempted to kill init!", "panic"),
        ("Oops[#1]:", "oops"),
        ("[   12.3] Internal error: Oops: 17 [#1] PREEMPT ARM", "oops"),
        ("Unable to handle kernel paging request at virtual address c8830000", "oops"),
        ("[    3.0] Unable to handle kernel NULL pointer dereference at virtual address 00000000", "oops"),
        ("[    4.0] BUG: scheduling while atomic: init/1/0x10000002", "bug"),
        ("kernel BUG at mm/slab.c:1234!", "bug"),
        ("[    0.000000] Kernel bug detected[#1]:", "bug"),  # MIPS
        ("general protection fault: 0000 [#1] SMP", "oops"),
        ("[ 1579.0] Unable to handle kernel write to read-only memory at virtual address ffffff8004d76ffe", "oops"),
        ("[  260.1] Unable to handle kernel read from unreadable memory at virtual address 0000005000000118", "oops"),
        ("[    0.0][    T1] BUG: Unable to handle kernel instruction fetch", "bug"),  # PowerPC
        (
            "[    5.9] general protection fault, probably for non-canonical address 0xf555515555555557: 0000 [#1]",
            "oops",
        ),
    ],
)
def test_faults_of_every_era(line, kind):
    s = scan_lines(line)
    assert s.fault["kind"] == kind and s.fault["line"] == 1 and s.fault["text"] == line


@pytest.mark.parametrize(
    "line",
    [
        "Kernel command line: root=/dev/nfs panic=1 console=ttyS0",
        "All bugs added by David S. Miller <davem@redhat.com>",
        "[    1.8] WARNING: at drivers/media/video/saa7134/saa7134-cards.c:5659 saa7134_tuner_setup+0xc3/0x17a()",
        "stm-nand-bch stm-nand-bch.0: WARNING: bit-flips threshold not specified.",
    ],
)
def test_not_faults(line):
    assert scan_lines(line).fault is None


def test_printk_caller_ids_are_part_of_the_time():
    """CONFIG_PRINTK_CALLER: "[   36.7][    T1] text"; anchored wordings still match."""
    s = scan_lines(
        "[   36.0][    T1] Linux version 6.0.0 (a@b) #1", "[   46.0][  T268] BUG: unable to handle page fault"
    )
    assert s.found["linux_version"].printk == 36.0 and s.fault["kind"] == "bug"


def test_a_bootloader_prelude_longer_than_the_head_is_still_a_printk_log():
    log = "\n".join(["U-Boot 2017.05 (x)", *["Loading: ####"] * 400, "[    0.000000] Linux version 4.9.33 (a@b) #1"])
    r = ms.parse_bootlog(log.encode(), load_rules())
    assert r["format"] == "printk" and r["text"]["assumed"].endswith("on 1 of its 402 lines")
    assert r["milestones"]["linux_version"]["printk_s"] == 0.0


def test_a_log_copied_from_a_web_page():
    log = b"&lt;6&gt;[    0.0] Linux version 5.10.0 (a@b) #1\n&lt;0&gt;[    1.0] Kernel panic - not syncing: VFS\n"
    r = ms.parse_bootlog(log, load_rules())
    assert r["kernel_version"] == "5.10.0" and r["fault"]["kind"] == "panic" and r["fault"]["line"] == 2
    assert "2 lines with HTML entities or tags (decoded" in r["text"]["assumed"]


def test_a_mail_with_a_little_quoted_log_in_much_prose():
    prose = [f"Some prose line {i} of the mail, without any log in it." for i in range(20)]
    quoted = ["> [    0.0] Linux version 2.6.28 (a@b) #1", ">> [    1.5] Oops[#1]:", "> Kernel panic - not syncing: x"]
    r = ms.parse_bootlog("\n".join(prose + quoted).encode(), load_rules())
    assert r["kernel_version"] == "2.6.28" and r["fault"]["kind"] == "oops" and r["fault"]["line"] == 22
    assert r["later_faults"][0]["line"] == 23 and "3 mail-quoted lines" in r["text"]["assumed"]


def test_a_boot_that_goes_on_after_a_bug_is_read_to_its_end():
    log = "\n".join(
        [
            "[    0.0] Linux version 5.10.0 (a@b) #1",
            "[    0.5] BUG: sleeping function called from invalid context at mm/slab.h:497",
            "[    0.6] Memory: 1001620K/1048576K available (10240K kernel code, 1240K rwdata, 2948K rodata, "
            "1024K init, 245K bss, 46956K reserved, 0K cma-reserved)",
            "[    1.0] Freeing unused kernel memory: 1024K",
            "[    1.1] Unable to handle kernel NULL pointer dereference at virtual address 00000000",
            "[    2.0] Linux version 5.10.0 (a@b) #1",
            "[    2.5] Kernel panic - not syncing: second boot",
        ]
    )
    r = ms.parse_bootlog(log.encode(), load_rules())
    assert r["fault"]["kind"] == "bug" and r["fault"]["line"] == 2
    assert r["memory"]["kernel_code_kb"] == 10240 and r["init_freed_kb"] == 1024
    assert [(f["kind"], f["line"]) for f in r["later_faults"]] == [("oops", 5), ("reset", 6), ("panic", 7)]


def test_cr_only_lines_with_an_overlong_one():
    import io

    log = b"U-Boot 2017.05 (x)\r" + b"y" * (ms.MAX_LINE * 3) + b"\rLinux version 2.6.32 (a@b) #1\rlast"
    fmt, lines = ms.read_log_stream(io.BytesIO(log))
    got = list(lines)
    assert [n for n, _, _ in got] == [1, 2, 3, 4] and len(got[1][2]) == ms.MAX_LINE
    assert got[2][2] == "Linux version 2.6.32 (a@b) #1" and got[3][2] == "last"


def test_kernel_version_without_a_linux_version_line():
    rules = load_rules()
    r = ms.parse_bootlog(b"U-Boot 2010.06 (x)\n   Image Name:   Linux-3.0.8\nStarting kernel ...\n", rules)
    assert (r["kernel_version"], r["kernel_version_from"], r["kernel_version_line"]) == (
        "3.0.8",
        "U-Boot image name",
        2,
    )
    r = ms.parse_bootlog(b"[    1.8] Pid: 1, comm: swapper Not tainted 2.6.26-rc9 #89\n", rules)
    assert (r["kernel_version"], r["kernel_version_from"]) == ("2.6.26-rc9", "Oops/WARNING header")


def test_a_register_dumps_release_in_parentheses():
    """The release a register dump prints after its taint flags: i386 show_regs (2.6.12,
    "Not tainted  (2.6.12)"), PowerPC's "TRAP: 0300   Tainted: G      D  (2.6.21-rc7-mm1)"."""
    rules = load_rules()
    for line, want in [
        (b"REGS: c0000000080f70c0 TRAP: 0300   Tainted: G      D  (2.6.21-rc7-mm1)\n", "2.6.21-rc7-mm1"),
        (b" ESP: 007b:bfd6bab4 EFLAGS: 00000287    Not tainted  (2.6.12)\n", "2.6.12"),
        (b"EFLAGS: 00010246 CPU: 0 Not tainted (2.6.24-rc3 #1)\n", "2.6.24-rc3"),
    ]:
        r = ms.parse_bootlog(b"Oops: Kernel access of bad area, sig: 11 [#1]\n" + line, rules)
        assert (r["kernel_version"], r["kernel_version_from"]) == (want, "Oops/WARNING header"), line


def test_a_terminals_padding_is_not_the_milestones_text():
    """A capture of a 118-column screen pads every line with spaces (barebox 2012.09 on an
    OLinuXino): the banner is quoted without them; a prompt keeps its one space."""
    log = (
        b"barebox 2012.09.0-00140-g361d5bd-dirty #8 Sat Sep 8 02:33:34 EDT 2012" + b" " * 47 + b"\n"
        b"Uncompressing Linux... done, booting the kernel." + b" " * 70 + b"\n"
        b"[    0.000000] Linux version 3.6.0-rc1 (devel@laptop) #16\n"
        b"[    2.000000] Freeing init memory: 160K\n"
        b"olinuxino login: " + b" " * 50 + b"\n"
    )
    r = ms.parse_bootlog(log, load_rules())
    assert r["bootloader"]["text"] == "barebox 2012.09.0-00140-g361d5bd-dirty #8 Sat Sep 8 02:33:34 EDT 2012"
    assert r["milestones"]["bootloader"]["text"] == r["bootloader"]["text"]
    assert r["milestones"]["starting_kernel"]["text"] == "Uncompressing Linux... done, booting the kernel."
    assert r["milestones"]["login"]["text"] == "olinuxino login: "


def test_barebox_elf_boot_and_devicetree_handoff():
    """barebox's words: MIPS's ELF boot (2019.01: "Loading ELF '...'", "Starting application
    at 0x...") and ARM's hand-off with a device tree (2012.09)."""
    log = (
        b"barebox 2019.01.0-00526-gdd4b47ab1b #346 Mon Feb 18 08:42:48 CET 2019\n"
        b"Booting entry 'net'\n"
        b"Loading ELF '/mnt/tftp/ore-linux-dpt-module'\n"
        b"Loading devicetree from '/mnt/tftp/ore-oftree-dpt-module'\n"
        b"Starting application at 0x806e0000, dts 0x83bd6120...\n"
        b"[    0.000000] Linux version 5.0.0-rc1+ (ptxdist@ptxdist) #644\n"
    )
    m = ms.parse_bootlog(log, load_rules())["milestones"]
    assert (m["kernel_load"]["line"], m["starting_kernel"]["line"]) == (3, 5)
    log = b"barebox 2012.09.0 #8\nbooting Linux kernel with devicetree\nUncompressing Linux... done\n"
    assert ms.parse_bootlog(log, load_rules())["milestones"]["starting_kernel"]["line"] == 2


def test_quoted_printable_mail_pasted_indented_loses_the_indent_of_its_cut_lines_too():
    """A whole quoted-printable mail indented (a Markdown block): the rest of a line a soft
    break cut carries the indent too, and is joined without it."""
    lines = ["> [=C2=A0=C2=A0=C2=A0 0.000000] Linux version 5.0.0-rc1+ (ptxdist@ptxdist=", ") #644"]
    lines += ["> [=C2=A0=C2=A0=C2=A0 0.000000] Readback ErrCtl register=3D00000000"]
    for i in range(6):
        lines += [f"> [=C2=A0=C2=A0=C2=A0 0.00000{i}] Dentry cache hash table entries: 8192 (or=", "der: 3)"]
    lines += [
        "> [=C2=A0=C2=A0=C2=A0 0.000000] Memory: 56624K/65536K available (4883K ke=",
        "rnel code, 398K rwdata, 960K rodata, 1432K init, 213K bss, 8912K reserved)",
    ]
    indented = "\n".join("    " + x for x in lines).encode()
    r = ms.parse_bootlog(indented, load_rules())
    assert (r["memory"]["kernel_code_kb"], r["memory"]["line_no"]) == (4883, 16)
    # every line indented, the quoted ones before their '>': the whole text's indent
    assert "indented by '    ' (taken off)" in r["text"]["assumed"]
    rests = [x if x.startswith(">") else "    " + x for x in lines]  # only the rests of cut lines indented
    r = ms.parse_bootlog("\n".join(rests).encode(), load_rules())
    assert r["memory"]["kernel_code_kb"] == 4883
    assert "the rests of its cut lines indented by '    '" in r["text"]["assumed"]
    r = ms.parse_bootlog("\n".join(lines).encode(), load_rules())
    assert r["memory"]["kernel_code_kb"] == 4883 and "rests" not in r["text"]["assumed"]


def test_colour_escapes_that_lost_their_esc_byte_are_taken_off():
    """A mail archive keeps "[0;32m" of an escape without its ESC byte (a LAVA console quoted
    on dri-devel: "[[0;32m  OK  [0m] Reached target ..."); a coloured shell prompt so
    mangled is still the shell.  A lone "[5m" in a kernel's words stays."""
    log = (
        b"[    0.000000] Linux version 6.18.0 (a@b) #1 SMP\n"
        b"[    2.000000] Freeing unused kernel memory: 1024K\n"
        b"[    2.100000] fsck: done [5m]\n"
        b"[[0;32m  OK  [0m] Reached target [0;1;39mmulti-user.target[0m - Multi-User System.\n"
        b"[01;32mroot@rock5b[00m:[01;34m~[00m# "
    )
    r = ms.parse_bootlog(log, load_rules())
    assert r["milestones"]["shell"]["text"] == "root@rock5b:~# " and r["complete"]
    assert r["text"]["bare_ansi_lines"] == 2
    assert "2 lines with colour escapes that lost their ESC byte (removed)" in r["text"]["assumed"]
    r = ms.parse_bootlog(log.replace(b"[01;32mroot@rock5b[00m:[01;34m~[00m# ", b"ok"), load_rules())
    assert r["text"]["bare_ansi_lines"] == 1


def test_a_systemd_console_as_html_source_with_the_release_in_etc_issue():
    """systemd alone (a container's console: no kernel line) pasted as a web page's source
    (systemd.io: `<span style="color:green">OK</span>`): a boot log all the same, its tags
    taken off, the release read from /etc/issue's "Kernel \\r on an \\m"."""
    log = (
        b'<pre style="color:white; background-color:black">\n'
        b'Welcome to <span style="color:blue">Fedora 20 (Heisenbug)</span>!\n'
        b'[  <span style="color:green">OK</span>  ] Reached target Remote File Systems.\n'
        b'[  <span style="color:green">OK</span>  ] Listening on Journal Socket.\n'
        b'[  <span style="color:green">OK</span>  ] Started Journal Service.\n'
        b"Kernel 3.9.2-200.fc18.x86_64 on an x86_64 (console)\n"
        b"fedora login:\n</pre>\n"
    )
    r = ms.parse_bootlog(log, load_rules())
    assert (r["kernel_version"], r["kernel_version_from"], r["kernel_version_line"]) == (
        "3.9.2-200.fc18.x86_64",
        "/etc/issue",
        6,
    )
    assert r["milestones"]["login"]["line"] == 7 and r["complete"]
    assert r["text"]["html_lines"] == 6
    r = ms.parse_bootlog(log.split(b"Kernel 3.9")[0], load_rules())  # three status lines: still a boot
    assert r["kernel_version"] is None and r["lines"] == 5
    log = b"[    0.5] Kernel command line: console=ttyS0\n[    0.9] Kernel panic - not syncing: VFS\n"
    assert ms.parse_bootlog(log, load_rules())["kernel_version"] is None


def test_a_panics_end_trailer_is_the_same_panic_not_a_later_fault():
    """3.x+ kernels close a panic with "---[ end Kernel panic - not syncing: <why> ]---":
    one panic, one fault; a second, different panic later is still listed."""
    log = "\n".join(
        [
            "[    0.5] Linux version 5.11.22 (a@b) #1",
            "[    0.9] Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0)",
            "[    0.9] CPU: 0 PID: 1 Comm: swapper/0 Not tainted 5.11.22 #1",
            "[    0.9] ---[ end Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0) ]---",
        ]
    )
    r = ms.parse_bootlog(log.encode(), load_rules())
    assert r["fault"]["kind"] == "panic" and r["fault"]["line"] == 2
    assert r["later_faults"] == []
    oops_first = log.replace(
        "Kernel panic - not syncing: VFS", "Unable to handle kernel NULL pointer dereference; VFS", 1
    )
    r = ms.parse_bootlog(oops_first.encode(), load_rules())
    assert r["fault"]["kind"] == "oops" and [f["line"] for f in r["later_faults"]] == [4]  # no panic line before it


# Renode's log of nRF52840 firmware, as a README publishes it (lines copied verbatim from a
# public Zephyr workshop repository, apps/10-renode/README.md, "Expected outcome")
RENODE_ZEPHYR = b"""Starting emulation...
[INFO] nrf52840: Machine started.
[WARNING] sysbus: [cpu: 0x4E8E] (tag: 'FICR') ReadDoubleWord from non existing peripheral at 0x10000130, \
returning 0x00000000.
[WARNING] uart0: Unhandled write to offset 0x50C. Unhandled bits: [0, 3-31] when writing value 0x6. Tags: \
PIN (0x6), PORT (0x0), RESERVED (0x0), CONNECT (0x0).
[INFO] uart0: [host: 0.38s (+0.38s)|virt: 0.5ms (+0.5ms)] *** Booting Zephyr OS build v4.4.0 ***
[INFO] uart0: [host: 0.38s (+1.64ms)|virt:    0.5ms (+0s)] Hello from the Zephyr testing workshop!
[INFO] uart0: [host:   1.3s (+0.91s)|virt:       1s (+1s)] uart:~$ tick 1, led0 on
[INFO] uart0: [host:      2.3s (+1s)|virt:       2s (+1s)] tick 2, led0 off
"""


def test_renode_uart_lines_are_the_console_with_the_analyzers_host_time():
    import io

    from bringup.parse.logtext import LogText

    t = LogText(io.BytesIO(RENODE_ZEPHYR))
    lines = list(t.lines())
    assert t.stamps == "renode"
    assert lines[4] == (5, 0.0, "*** Booting Zephyr OS build v4.4.0 ***")
    assert lines[6] == (7, 0.92, "uart:~$ tick 1, led0 on")  # 1.3 s - 0.38 s
    assert lines[7] == (8, 1.92, "tick 2, led0 off")
    assert lines[1] == (2, None, "nrf52840: Machine started.")  # the emulator's own line keeps its name
    assert lines[0] == (1, None, "Starting emulation...")


def test_renode_log_file_of_a_linux_boot():
    """Renode's log file: the time of day before the level (the host time), the machine's name
    before the UART's, the monitor's prompt glued to a line; Renode 1.x's analyzer stamps
    ("[+0.22s host +0s virt 0s virt from start]") are steps of the host time."""
    log = (
        b"12:00:00.1000 [INFO] litex: Machine started.\n"
        b"(litex) 12:00:00.5000 [INFO] litex/uart: [host: 0.38s (+0.38s)|virt: 0.5ms (+0.5ms)] "
        b"U-Boot 2019.10 (Nov 27 2019 - 22:15:13 -0800)\n"
        b"12:00:00.6000 [INFO] litex/uart: [host: 0.48s (+0.1s)|virt: 0.6ms (+0.1ms)] Starting kernel ...\n"
        b"12:00:01.5000 [INFO] litex/uart: [host: 1.38s (+0.9s)|virt: 1ms (+0.4ms)] "
        b"[    0.000000] Linux version 5.0.0 (a@b) (gcc version 8.3.0) #1 Mon\n"
        b"12:00:02.5000 [INFO] litex/uart: [host: 2.38s (+1s)|virt: 2s (+1s)] "
        b"[    1.000000] Freeing unused kernel memory: 104K\n"
        b"12:00:03.5000 [INFO] litex/uart: [host: 3.38s (+1s)|virt: 3s (+1s)] buildroot login:\n"
    )
    r = ms.parse_bootlog(log, load_rules())
    assert r["format"] == "renode" and r["bootloader"]["name"] == "U-Boot"
    m = r["milestones"]
    assert (m["bootloader"]["line"], m["bootloader"]["host_s"]) == (2, 0.4)
    assert (m["linux_version"]["host_s"], m["linux_version"]["printk_s"]) == (1.4, 0.0)
    assert (m["freeing_init"]["host_s"], m["login"]["host_s"], r["complete"]) == (2.4, 3.4, True)
    old = (
        b"[INFO] machine-0: Machine started.\n"
        b"[DEBUG] cpu.uartSemihosting: [+0.22s host +0s virt 0s virt from start] U-Boot 2019.10 (Nov 27 2019)\n"
        b"[DEBUG] cpu.uartSemihosting: [+2.5ms host +0s virt 0.1s] [    0.000000] Linux version 5.0.0 (a@b) #1\n"
        b"[DEBUG] cpu.uartSemihosting: [+1.5s host +1s virt 1.1s] [    1.000000] Freeing unused kernel memory: 104K\n"
    )
    m = ms.parse_bootlog(old, load_rules())["milestones"]
    mixed = ms.parse_bootlog(b"03:27:32.4340 " + old, load_rules())["milestones"]  # a clock on one line only
    assert mixed["linux_version"]["line"] == 3 and mixed["linux_version"]["host_s"] is None
    assert (m["bootloader"]["host_s"], m["linux_version"]["host_s"], m["freeing_init"]["host_s"]) == (
        0.0,
        0.0025,
        1.5025,
    )


def test_a_renode_peripheral_path_before_every_line_is_taken_off():
    log = (
        b"sysbus.uart0: U-Boot 2019.10 (Nov 27 2019 - 22:15:13 -0800)\n"
        b"sysbus.uart0: Starting kernel ...\n"
        b"sysbus.uart0: [    0.000000] Linux version 5.0.9 (a@b) (gcc version 8.3.0) #1\n"
        b"sysbus.uart0: [    2.100000] Freeing unused kernel memory: 104K\n"
    )
    r = ms.parse_bootlog(log, load_rules())
    assert (r["format"], r["bootloader"]["name"], r["kernel_version"]) == ("renode", "U-Boot", "5.0.9")
    assert r["milestones"]["freeing_init"]["printk_s"] == 2.1 and r["milestones"]["starting_kernel"]["line"] == 2


def test_a_simulators_info_prefix_is_taken_off():
    """sbt running a SpinalHDL SoC simulation prints "[info] " before every line of the UART."""
    log = (
        b"[info] *** VexRiscv BIOS ***\n"
        b"[info] U-Boot 2019.10-00004-g7b85f84abb-dirty (Nov 27 2019 - 22:15:13 -0800)\n"
        b"[info] Starting kernel ...\n"
        b"[info] [    0.000000] Linux version 5.0.9 (a@b) (gcc version 8.3.0 (Buildroot 2019.05)) #1\n"
        b"[info] [    2.100000] Freeing unused kernel memory: 104K\n"
    )
    r = ms.parse_bootlog(log, load_rules())
    assert r["format"] == "sim-level" and r["kernel_version"] == "5.0.9"
    assert r["bootloader"]["text"].startswith("U-Boot 2019.10-00004")
    assert r["milestones"]["freeing_init"]["printk_s"] == 2.1


def test_mips_die_header_names_its_source_line_anywhere_in_a_line():
    """MIPS 2.6's die(): "<message> in <file>::<function>, line N[#k]:", glued to the bus
    error's message and an init script's output when they shared the line; a user program's
    bus error alone ("Data bus error, epc == ...") is no kernel fault."""
    log = (
        b"YAMON> load\n"
        b"YAMON> go . ip=dhcp\n"
        b"Linux version 2.6.12-rc1 (a@b) (gcc version 3.4.1) #1 Mon Apr 4 15:21:59 EDT 2005\n"
        b"Data bus error, epc == 2ab0c860, ra == 2ab0cce4\n"
        b"Bringing up loopback interface:  Data bus error, epc == 80228860, ra == 80177ce4"
        b"Oops in arch/mips/kernel/traps.c::do_be, line 336[#1]:\n"
        b"CoreHi interrupt in arch/mips/mips-boards/malta/malta_int.c::corehi_irqdispatch, line 180[#2]:\n"
    )
    r = ms.parse_bootlog(log, load_rules())
    assert (r["fault"]["kind"], r["fault"]["line"]) == ("oops", 5)
    assert r["milestones"]["kernel_load"]["line"] == 1 and r["bootloader"]["name"] == "YAMON"
