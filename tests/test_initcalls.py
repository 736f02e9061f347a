"""parse/initcalls.py: initcall_debug lines of every era, on real samples (values read by
hand: tests/data/real/INITCALLS.toml) and on the same samples as they reach people
(quoted, CRLF, ANSI, syslog/kmsg/grabserial prefixes: test_real_samples' variants), and
synthetic lines for what no sample shows (2.6.0-2.6.24 without times, error codes,
addresses named from a System.map, levels)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from bringup.parse.errors import ParseError
from bringup.parse.initcalls import InitcallScan, parse_initcalls, resolve, system_map
from conftest import run_cli
from test_real_samples import BOOT_VARIANTS, PRINTK_VARIANTS, per_line

REAL = Path(__file__).parent / "data" / "real"
EXPECTED = tomllib.loads((REAL / "INITCALLS.toml").read_text())
SAMPLES = sorted(EXPECTED)


def check(res: dict, e: dict, mapl=lambda n: n) -> None:
    assert res["format"] == e["format"]
    assert res["count"] == e["count"]
    assert res["total_us"] == e["total_us"]
    assert len(res["unfinished"]) == e["unfinished"]
    if "problems" in e:  # initcalls that left preemption or interrupts wrong
        got = [(p["line"], p["symbol"], p["why"]) for p in res["problems"]]
        assert got == [(mapl(x["line"]), x["symbol"], x["why"]) for x in e["problems"]]
    by_line = {x["line"]: x for x in res["initcalls"]}
    for ex in e["examples"]:
        got = by_line[mapl(ex["line"])]
        for k, v in ex.items():
            if k == "line":
                continue
            assert got[k] == (pytest.approx(v) if isinstance(v, float) else v), f"{ex['fn']}: {k}"


def test_every_initcall_sample_has_values_and_a_source():
    files = sorted(str(p.relative_to(REAL)) for p in (REAL / "initcalls").iterdir())
    assert files == [s for s in SAMPLES if s.startswith("initcalls/")]
    sources = (REAL / "SOURCES.md").read_text()
    assert all(f"`{s}`" in sources for s in SAMPLES)
    assert {EXPECTED[s]["format"] for s in SAMPLES} == {"old", "ran_for", "msecs", "usecs"}


@pytest.mark.parametrize("name", SAMPLES)
def test_real_sample(name):
    check(parse_initcalls((REAL / name).read_bytes(), name), EXPECTED[name])


# wrapping cuts lines anywhere (a mailer's wrap of a result line is in a real sample)
VARIANTS = [v for v in BOOT_VARIANTS if not v.startswith(("wrapped", "mail"))]
PREFIXING = {"level-prefixes", "syslog", "journalctl-iso", "openwrt-logread", "grabserial", "dmesg-x", "tio-clock"}


@pytest.mark.parametrize("variant", VARIANTS + list(PRINTK_VARIANTS))
@pytest.mark.parametrize("name", SAMPLES)
def test_variant_gives_the_same_values(name, variant):
    data = (REAL / name).read_bytes()
    e = EXPECTED[name]
    if data.startswith(b">") and (variant in PREFIXING or variant in PRINTK_VARIANTS):
        pytest.skip("a mail-quoted sample: a line prefix outside the quote is no log's form")
    if variant in PRINTK_VARIANTS:
        if b"[" not in data:
            pytest.skip("no printk times to rewrite")
        out, mapl = per_line(PRINTK_VARIANTS[variant])(data)
        if variant == "dmesg-T":  # whole seconds of the wall clock: no printk times left
            e = {**e, "examples": [{k: v for k, v in x.items() if not k.endswith("_s")} for x in e["examples"]]}
    else:
        out, mapl = BOOT_VARIANTS[variant](e)(data)
    check(parse_initcalls(out, variant), e, mapl)


def feed(lines: list[str]) -> dict:
    scan = InitcallScan()
    for n, line in enumerate(lines, 1):
        scan.feed(n, None, line)
    return scan.result()


def test_before_2_6_25_results_have_no_duration_and_error_codes_are_kept():
    res = feed(
        [
            "Calling initcall 0xc0345678: ipc_init+0x0/0x28()",
            "initcall 0xc0345678: ipc_init+0x0/0x28() returned 0.",
            "Calling initcall 0xc0345700: foo_probe+0x0/0x40()",
            "initcall 0xc0345700: foo_probe+0x0/0x40() returned -19.",
            "initcall at 0xc0345700: foo_probe+0x0/0x40(): returned with error code -19",
        ]
    )
    assert res["format"] == "old" and res["count"] == 2 and res["timed"] == 0 and res["total_us"] == 0
    assert [(e["fn"], e["us"], e["rc"]) for e in res["initcalls"]] == [("ipc_init", None, 0), ("foo_probe", None, -19)]


def test_2_6_12_printed_only_calling_lines_each_ends_the_one_before():
    """2.6.12 printed "Calling initcall ..." and no result (unless one failed): the initcalls
    ran one after another, so only the last one called may still be running."""
    res = feed(
        [
            "Calling initcall 0xc03fe890: reboot_init+0x0/0x10()",
            "Calling initcall 0xc0405d00: helper_init+0x0/0x30()",
            "NET: Registered protocol family 16",
            "Calling initcall 0xc0405ea0: audit_init+0x0/0x90()",
        ]
    )
    assert res["format"] == "old" and res["calling"] == 3 and res["count"] == 0
    assert [(u["fn"], u["line"]) for u in res["unfinished"]] == [("audit_init", 4)]


def test_ppc64_dot_symbols_name_the_function():
    """64-bit PowerPC (ELFv1) prints an entry point's dot symbol: the function is the name
    without the dot; the symbol stays as printed."""
    res = feed(
        [
            "Calling initcall 0xc0000000006ea1d0: .tcp_congestion_default+0x0/0x18()",
            "initcall 0xc0000000006ea1d0: .tcp_congestion_default+0x0/0x18() returned 0.",
            "initcall 0xc0000000006ea1d0 ran for 2 msecs: .tcp_congestion_default+0x0/0x18()",
        ]
    )
    (e,) = res["initcalls"]
    assert (e["fn"], e["symbol"], e["us"], e["call_line"]) == (
        "tcp_congestion_default",
        ".tcp_congestion_default+0x0/0x18",
        2000,
        1,
    )


def test_printk_caller_ids_and_failed_initcalls():
    res = feed(
        [
            "[    0.120000][    T1] calling  pl011_init+0x0/0x40 @ 1",
            "[    0.123456][    T1] initcall pl011_init+0x0/0x40 returned -19 after 3456 usecs",
        ]
    )
    (e,) = res["initcalls"]
    assert (e["fn"], e["us"], e["rc"], e["start_s"], e["end_s"], e["pid"]) == (
        "pl011_init",
        3456,
        -19,
        0.12,
        0.123456,
        1,
    )


# an excerpt in the shape of a tinyconfig ARM kernel's System.map (CONFIG_KALLSYMS off):
# text symbols, and the initcall table's entries whose names carry the level
SYSTEM_MAP = """\
c0100000 T _text
c0a00400 t ipc_ns_init
c0a00500 T vfp_init
c0a00600 t pl011_init
c0a00700 t allocate_overflow_stacks
c0a00800 t init_zero_pfn
c0522b48 d __initcall__kmod_traps__254_926_allocate_overflow_stacksearly
c0522b48 D __initcall_start
c0522b7c D __initcall0_start
c0522b7c d __initcall__kmod_shm__349_154_ipc_ns_init0
c0522b88 d __initcall__kmod_vfpmodule__281_1027_vfp_init1
c0522c00 d __initcall__kmod_amba_pl011__300_3000_pl011_init6s
c0420564 d __initcall_init_zero_pfnearly
"""


def test_addresses_are_named_and_levels_given_from_system_map():
    res = feed(
        [
            "[    0.010000] calling  0xc0a00700 @ 1",
            "[    0.010100] initcall 0xc0a00700 returned 0 after 100 usecs",
            "[    0.020000] calling  0xc0a00400 @ 1",
            "[    0.020010] initcall 0xc0a00400 returned 0 after 10 usecs",
            "[    0.030000] calling  0xc0a00601 @ 1",  # a Thumb-2 address: bit 0 set
            "[    0.031000] initcall 0xc0a00601 returned 0 after 1000 usecs",
            "[    0.040000] calling  0xc0ffff00 @ 1",
            "[    0.040001] initcall 0xc0ffff00 returned 0 after 1 usecs",
            "[    0.050000] calling  init_zero_pfn+0x0/0x20 @ 1",
            "[    0.050001] initcall init_zero_pfn+0x0/0x20 returned 0 after 1 usecs",
        ]
    )
    left = resolve(res["initcalls"], system_map(SYSTEM_MAP))
    assert left == 1
    got = [(e["fn"], e["level"], e["object"]) for e in res["initcalls"]]
    assert got == [
        ("allocate_overflow_stacks", "early", "traps"),
        ("ipc_ns_init", "pure", "shm"),
        ("pl011_init", "device", "amba_pl011"),
        ("0xc0ffff00", None, None),
        ("init_zero_pfn", "early", None),
    ]


def test_a_line_that_only_names_an_initcall_is_not_one():
    res = feed(
        [
            "calling foo to say hello",
            "Kernel command line: console=ttyAMA0 initcall_debug loglevel=8",
            "initcall_blacklist: blacklisting initcall foo_init",
            "ucsi_acpi_platform_driver_init() take around 60 seconds.",
            "probe of 0000:01:05.0 returned 0 after 902266 usecs",
            "PM: calling pci_pm_suspend @ 10711, parent: 0000:00:00.0",
            "calling upnp_main",  # a vendor's userspace (WRT160N firmware)
        ]
    )
    assert res["count"] == 0 and res["calling"] == 0


def test_not_a_log_is_one_line_error(tmp_path):
    with pytest.raises(ParseError, match="no initcall_debug lines in its 2 lines"):
        parse_initcalls(b"[    0.000000] Booting Linux\n[    0.1] Linux version 6.12\n", "boot.log")
    with pytest.raises(ParseError, match="binary data"):
        parse_initcalls(bytes(range(256)) * 8, "x.bin")


def test_cli_table_json_and_map(tmp_path):
    name = "initcalls/initcall-6.8-x86_64-modules-mail-wrapped-qp.log"
    p = run_cli("parse", "initcalls", str(REAL / name))
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("4 initcalls (4 with a duration), 903.1 ms in all")
    assert "radeon_module_init [radeon]" in lines[3]  # the slowest first
    p = run_cli("parse", "initcalls", str(REAL / name), "--json")
    assert p.returncode == 0 and '"total_us": 903061' in p.stdout
    log = tmp_path / "log"
    log.write_text("[    0.1] calling  0xc0a00400 @ 1\n[    0.2] initcall 0xc0a00400 returned 0 after 7 usecs\n")
    smap = tmp_path / "System.map"
    smap.write_text(SYSTEM_MAP)
    p = run_cli("parse", "initcalls", str(log), "--map", str(smap))
    assert p.returncode == 0, p.stderr
    assert "pure      ipc_ns_init" in p.stdout
    p = run_cli("parse", "bootlog", str(log), "--map", str(smap))
    assert p.returncode == 2 and p.stderr.strip() == "bringup: error: --map: only for 'parse initcalls'"
    p = run_cli("parse", "initcalls", str(tmp_path / "missing.log"))
    assert p.returncode != 0 and len(p.stderr.strip().splitlines()) == 1 and "missing.log" in p.stderr


def test_mm_trees_print_an_address_and_a_name_with_the_time():
    """-mm and vendor 2.6.2x trees: "initcall 0x...: fn() returned N after N msecs", the
    'Calling initcall 0x...' line before it; keyed by the address, named by the function."""
    res = feed(
        [
            "[    0.210000] Calling initcall 0xc0123456: ipc_init+0x0/0x28()",
            "[    0.213000] initcall 0xc0123456: ipc_init+0x0/0x28() returned 0 after 3 msecs",
            "[    0.213100] Calling initcall 0xc0123500: foo_init+0x0/0x40()",
            "[    0.225200] initcall 0xc0123500: foo_init+0x0/0x40() returned -19 after 12 msecs",
        ]
    )
    assert res["format"] == "addr_after" and res["count"] == 2 and res["total_us"] == 15000
    got = [(e["fn"], e["address"], e["us"], e["rc"], e["start_s"], e["call_line"]) for e in res["initcalls"]]
    assert got == [("ipc_init", "0xc0123456", 3000, 0, 0.21, 1), ("foo_init", "0xc0123500", 12000, -19, 0.2131, 3)]
    assert res["unfinished"] == []


def test_without_kallsyms_the_ran_for_line_has_no_name():
    """2.6.25 without CONFIG_KALLSYMS: "Calling initcall 0x...", "initcall 0x... returned 0.",
    "initcall 0x... ran for 4 msecs: " (the name left out, a space at the end)."""
    res = feed(
        ["Calling initcall 0xc0123456", "initcall 0xc0123456 returned 0.", "initcall 0xc0123456 ran for 4 msecs: "]
    )
    (e,) = res["initcalls"]
    assert (e["fn"], e["us"], e["rc"], res["format"], res["ran_for"]) == ("0xc0123456", 4000, 0, "ran_for", 1)


def test_initcalls_that_left_preemption_or_interrupts_wrong_are_listed():
    res = feed(
        [
            "initcall at 0xc0220000: foo_init+0x0/0x40(): returned with preemption imbalance",
            "[    1.000000] initcall bar_init+0x0/0x10 returned with disabled interrupts",
            "initcall at 0xc0220100: baz_init+0x0/0x40(): returned with error code -12",
            "error in initcall at 0xc0391ad0: returned with preemption imbalance",  # 2.5-2.6.1x, no initcall_debug
            "[    6.0] initcall snd_init+0x0/0x18 [snd] returned with preemption imbalance ",  # WARN's, a module's
        ]
    )
    assert res["error"] == 5
    assert [(p["line"], p["symbol"], p["why"]) for p in res["problems"]] == [
        (1, "foo_init+0x0/0x40", "preemption imbalance"),
        (2, "bar_init+0x0/0x10", "disabled interrupts"),
        (4, "0xc0391ad0", "preemption imbalance"),
        (5, "snd_init+0x0/0x18", "preemption imbalance"),
    ]
    one = parse_initcalls(b"error in initcall at 0xc0391ad0: returned with preemption imbalance\n")
    assert (one["count"], one["error"], one["format"]) == (0, 1, "old")  # a log with only that line is no error
