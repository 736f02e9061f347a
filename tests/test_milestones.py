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
