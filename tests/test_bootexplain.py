"""Boot time explained (report/bootexplain.py) on canned per-run values: the rows add up
to the measured difference with the rest unexplained, significance after the
Benjamini-Hochberg correction, no claim when nothing is significant; the profiles
(model/profiles.py); the record's initcalls block; the report section and its chart."""

import pytest

import recordfactory as rf
from bringup import records, stats
from bringup.model.base import DataError
from bringup.model.board import load_board
from bringup.model.profiles import known_profiles, load_profile, study_profiles
from bringup.report import bootexplain
from bringup.report import page as report
from test_report import logs  # noqa: F401  (the canned records of test_report, as a fixture)


def call(fn, us, start, level="device", module=None):
    return {"fn": fn, "module": module, "object": None, "level": level, "us": us, "start_s": start, "rc": None}


def block(n, calls, end, before=None, total=None):
    return {
        "runs": [f"r{i}" for i in range(n)],
        "rounds": list(range(1, n + 1)),
        "count": [len(calls)] * n,
        "total_us": total or [sum(c["us"][i] or 0 for c in calls) for i in range(n)],
        "end_s": end,
        "before_clock_s": before or [0.5] * n,
        "unresolved": 0,
        "format": "usecs",
        "end_milestone": "freeing_init",
        "calls": calls,
    }


# 5 runs a side: kernel b's `virtio_net` grew by 20 ms, `pl011` vanished, `new_init` appeared
A5 = block(
    5,
    [
        call("virtio_net_driver_init", [10000, 10100, 9900, 10050, 9950], [0.3] * 5),
        call("pl011_init", [2000, 2100, 1900, 2050, 1950], [0.2] * 5, module=None),
        call("tiny_init", [10, 12, 11, 9, 10], [0.1] * 5, level="core"),
    ],
    end=[1.000, 1.002, 0.998, 1.001, 0.999],
)
B5 = block(
    5,
    [
        call("virtio_net_driver_init", [30000, 30100, 29900, 30050, 29950], [0.3] * 5),
        call("tiny_init", [11, 10, 12, 10, 9], [0.1] * 5, level="core"),
        call("new_init", [5000, 5100, 4900, 5050, 4950], [0.4] * 5, level="late"),
    ],
    end=[1.035, 1.037, 1.033, 1.036, 1.034],
)


def test_rows_add_up_to_the_difference_and_the_rest_is_unexplained():
    att = bootexplain.attribute(A5, B5, "5.10", "6.12")
    assert att["delta_us"] == pytest.approx(35000)
    rows = {r["key"]: r for r in att["rows"]}
    assert rows["virtio_net_driver_init"]["status"] == "grew"
    assert rows["virtio_net_driver_init"]["delta_us"] == pytest.approx(20000)
    assert rows["pl011_init"]["status"] == "vanished" and rows["pl011_init"]["delta_us"] == pytest.approx(-2000)
    assert rows["new_init"]["status"] == "appeared" and rows["new_init"]["delta_us"] == pytest.approx(5000)
    assert rows["time before the kernel clock"]["delta_us"] == 0
    # explained: 20 - 2 + 5 ms (+ tiny_init's 0); unexplained: the rest of 35 ms
    assert att["unexplained_us"] == pytest.approx(35000 - 23000, abs=2)
    assert sum(r["delta_us"] for r in att["rows"]) + att["unexplained_us"] == pytest.approx(att["delta_us"])
    # tiny_init (about 10 us) is shown but not tested; the clock row is tested and does not differ
    assert rows["tiny_init"]["tested"] is False and rows["tiny_init"]["q"] is None
    assert att["tested"] == 4
    assert {r["key"] for r in att["significant"]} == {"virtio_net_driver_init", "pl011_init", "new_init"}
    assert [r["key"] for r in bootexplain.top_changes(att, 2)] == ["virtio_net_driver_init", "new_init"]
    # the study's test, paired by round: 35 ms later in every round
    assert att["delta_p"] < 1e-4
    assert att["delta_p"] == stats.study_test(A5["end_s"], B5["end_s"], A5["rounds"], B5["rounds"]).p
    assert bootexplain.claim(att).startswith("with initcall_debug, 6.12 reaches freeing_init 35.0 ms later than 5.10")
    text = bootexplain.claim(att, '"Freeing unused kernel memory"')
    assert text == (
        'with initcall_debug, 6.12 reaches "Freeing unused kernel memory" 35.0 ms later than 5.10; in initcalls: '
        "`virtio_net_driver_init` +20.0 ms, `new_init` +5.0 ms, `pl011_init` -2.0 ms "
        "(significant after Benjamini-Hochberg over 4 tests)"
    )
    # the same initcalls with times to the milestone that overlap: the initcalls are claimed, the total is not
    noisy_end = {**B5, "end_s": [0.999, 1.002, 1.0, 1.003, 0.998]}
    text = bootexplain.claim(bootexplain.attribute(A5, noisy_end, "5.10", "6.12"), "X")
    assert text.startswith(
        "with initcall_debug, 6.12's initcalls differ from 5.10's: `virtio_net_driver_init` +20.0 ms"
    )
    assert text.endswith("the time to X differs by +0.0 ms, not significantly")


def test_three_runs_of_a_consistent_difference_are_claimed():
    """The study's t-test has no smallest p: three rounds of +20 ms in every run pass the
    correction (Mann-Whitney, used here before, could not: 2 / C(6, 3) = 0.1)."""

    def first3(b):
        out = {k: (v[:3] if isinstance(v, list) and k != "calls" else v) for k, v in b.items()}
        out["calls"] = [{**c, "us": c["us"][:3], "start_s": c["start_s"][:3]} for c in b["calls"]]
        return out

    att = bootexplain.attribute(first3(A5), first3(B5), "5.10", "6.12")
    assert {r["key"] for r in att["significant"]} == {"virtio_net_driver_init", "pl011_init", "new_init"}
    assert "smallest_p" not in att and bootexplain.claim(att) is not None
    assert att["delta_us"] == pytest.approx(35000)


def test_no_claim_when_the_differences_are_noise():
    noisy = [10000, 12000, 9000, 11000, 10500]
    a = block(5, [call("x_init", noisy, [0.3] * 5)], end=[1.0, 1.01, 0.99, 1.02, 0.98])
    b = block(5, [call("x_init", list(reversed(noisy)), [0.3] * 5)], end=[1.01, 0.99, 1.0, 0.98, 1.02])
    att = bootexplain.attribute(a, b, "5.10", "6.12")
    assert att["tested"] == 2 and att["significant"] == [] and bootexplain.claim(att) is None


def test_kernel_view_top_and_levels():
    v = bootexplain.kernel_view(A5, top=2)
    assert [t["key"] for t in v["top"]] == ["virtio_net_driver_init", "pl011_init"]
    assert v["top"][0]["median_us"] == 10000 and v["total_us"] == pytest.approx(
        12010
    )  # run totals 12010 12212 11811 12109 11910
    assert [lv["level"] for lv in v["by_level"]] == ["core", "device"]
    assert v["by_level"][1]["mean_us"] == pytest.approx(12000)
    assert bootexplain.attribute(A5, {**B5, "end_s": [None] * 5}, "a", "b") is None


def test_profiles_are_data():
    assert {"timing", "initcalls", "quiet"} <= set(known_profiles())
    ic = load_profile("initcalls")
    assert ic.record_initcalls and ic.cmdline("6.12.95") == "initcall_debug loglevel=8 printk.time=1"
    assert ic.cmdline("2.6.26") == "initcall_debug time" and ic.cmdline("2.4.20") == ""
    assert load_profile("timing").cmdline("6.12") == ""
    assert "freeing_init" in load_profile("quiet").spec.optional_milestones
    assert [p.name for p in study_profiles()] == ["initcalls"]
    with pytest.raises(DataError, match=r"profile 'nope': no such profile \(known: initcalls, quiet, timing\)"):
        load_profile("nope")


def test_a_bad_profile_is_one_line(tmp_path):
    import shutil

    from bringup.util import paths

    (tmp_path / "profiles").mkdir()
    shutil.copy(paths.CONFIGS / "milestones.toml", tmp_path / "milestones.toml")
    (tmp_path / "profiles" / "x.toml").write_text('description = "x"\n[[args]]\ncmdline = "a; reset"\n')
    with pytest.raises(DataError, match=r"field 'args\[0\]\.cmdline'.*U-Boot's shell"):
        load_profile("x", tmp_path)
    (tmp_path / "profiles" / "x.toml").write_text('description = "x"\noptional_milestones = ["nosuch"]\n')
    with pytest.raises(DataError, match=r"field 'optional_milestones\[0\]': 'nosuch': no such milestone"):
        load_profile("x", tmp_path)


def test_boot_command_line_gets_the_profile_args():
    from bringup.boot.session import kernel_cmdline

    board = load_board("qemu-arm")
    line = kernel_cmdline(board, "", load_profile("initcalls").cmdline("6.12.95"))
    assert line == "console=ttyAMA0,115200 earlycon=pl011,0x9000000 initcall_debug loglevel=8 printk.time=1"


def initcalls_record(a, b):
    def kt(k, blk):
        t = rf.kernel_timing({}, blk["runs"])
        t["initcalls"] = blk
        return t

    return rf.boot_timing(
        kernels={"5.10": kt("5.10", a), "6.12": kt("6.12", b)},
        profile="initcalls",
        cmdline_args={"5.10": "initcall_debug loglevel=8", "6.12": "initcall_debug loglevel=8"},
    )


def test_record_reads_back_and_old_records_still_read(tmp_path):
    f = tmp_path / "boot-timing-initcalls.json"
    records.write(f, initcalls_record(A5, B5))
    back = records.read(f, records.BootTiming)
    assert back.profile == "initcalls" and back.kernels["6.12"].initcalls.calls[0].us[0] == 30000
    old = rf.boot_timing(kernels={}).model_dump(by_alias=True)
    old["schema"] = "bringup.boot-timing/3"
    del old["profile"], old["cmdline_args"]
    import json

    (tmp_path / "old.json").write_text(json.dumps(old))
    assert records.read(tmp_path / "old.json", records.BootTiming).profile == "timing"
    assert records.boot_timing_name(profile="initcalls") == "boot-timing-initcalls.json"
    assert records.boot_timing_name("nfs", failed=True, profile="quiet") == "boot-timing-nfs-quiet-failed.json"


def test_report_section_chart_and_bullet_only_when_significant(logs):  # noqa: F811
    d = logs / "qemu-arm"
    records.write(d / "boot-timing-initcalls.json", initcalls_record(A5, B5))
    rep = report.write(load_board("qemu-arm"), logs, say=lambda m: None)
    html = rep.index.read_text()
    assert 'id="boot-explained"' in html and "virtio_net_driver_init" in html
    assert 'data-chart="chart-initcalls-5_10"' in html and 'data-chart="chart-initcalls-6_12"' in html
    assert (d / "report" / "charts" / "initcalls-6.12.svg").exists()
    bullets = [
        it["claim"]
        for f in rep.model["findings"]
        for t, items in f["sections"]
        if t == "Boot time explained"
        for it in items
    ]
    assert len(bullets) == 1 and "virtio_net_driver_init" in bullets[0]
    assert "Boot time explained" in rep.markdown.read_text()
    # the same record with runs that differ only by noise: the section, no bullet
    noisy = [10000, 12000, 9000, 11000, 10500]
    a = block(5, [call("x_init", noisy, [0.3] * 5)], end=[1.0, 1.01, 0.99, 1.02, 0.98])
    b = block(5, [call("x_init", list(reversed(noisy)), [0.3] * 5)], end=[1.01, 0.99, 1.0, 0.98, 1.02])
    records.write(d / "boot-timing-initcalls.json", initcalls_record(a, b))
    rep = report.write(load_board("qemu-arm"), logs, say=lambda m: None)
    assert not [t for f in rep.model["findings"] for t, _ in f["sections"] if t == "Boot time explained"]
    assert "none significant" in rep.index.read_text()


def test_report_with_initcall_charts_renders_in_a_real_browser(logs, tmp_path):  # noqa: F811
    import re

    from browser import open_page

    records.write(logs / "qemu-arm" / "boot-timing-initcalls.json", initcalls_record(A5, B5))
    index = report.write(load_board("qemu-arm"), logs, say=lambda m: None).index
    res = open_page(index, tmp_path)
    assert res["console"] == [], res["console"]
    assert 'data-charts-rendered="5/5"' in res["dom"], re.findall(r'data-charts-rendered="[^"]*"', res["dom"])
    for chart in ("chart-initcalls-5_10", "chart-initcalls-6_12"):
        m = re.search(rf'data-chart="{chart}"[^>]*data-rendered="(\d+)x(\d+)"', res["dom"])
        assert m and int(m.group(1)) > 200 and int(m.group(2)) > 80, chart


def test_console_bytes_and_their_cost_at_the_baud_rate(tmp_path):
    from bringup.boot import timing
    from bringup.model.milestones import load_rules

    run = tmp_path / "boot" / "r1"
    run.mkdir(parents=True)
    lines = [
        "U-Boot 2023.01",  # 14 + 2
        "[    0.000000] Booting Linux on physical CPU 0x0",  # 48 + 2
        "[    0.500000] Freeing unused kernel memory: 1024K",  # 50 + 2
        "[    0.600000] Run /init as init process",  # not counted: after the milestone
    ]
    (run / "console.log").write_text("".join(f"[{i:11.6f} {0.1:9.6f}] {x}\n" for i, x in enumerate(lines)))
    assert timing.console_bytes(run / "console.log", 3) == (16 + 50 + 52, 50 + 52)
    assert timing.baud_of("ttyAMA0,115200") == 115200 and timing.baud_of("ttyS0,9600n8") == 9600
    assert timing.baud_of("tty0") is None
    hit = {"host_s": 1.0, "printk_s": 0.5, "line": 3, "text": lines[2]}
    rec = {"status": "ok", "run_id": "r1", "log": "console.log", "milestones": {"freeing_init": hit}}
    c = timing.console_summary([rec, {**rec, "status": "fail"}], tmp_path, load_rules(), "ttyAMA0,115200")
    assert c["until"] == "freeing_init" and c["bytes"]["median"] == 118 and c["kernel_bytes"]["median"] == 102
    assert c["cost_s"] == pytest.approx(118 * 10 / 115200, abs=1e-6)


def test_report_console_cost_says_qemu_is_not_rate_limited(logs):  # noqa: F811
    d = logs / "qemu-arm"
    rec = records.read(d / "boot-timing.json", records.BootTiming).model_dump(by_alias=True)
    cost = {
        "until": "freeing_init",
        "bytes": rf.stats.summarize([20000, 20100, 19900]),
        "kernel_bytes": rf.stats.summarize([15000, 15000, 15000]),
        "baud": 115200,
        "cost_s": 20000 * 10 / 115200,
    }
    for k in rec["kernels"].values():
        k["console"] = cost
    records.write(d / "boot-timing.json", records.validate(rec, records.BootTiming, "test"))
    quiet = records.read(d / "boot-timing.json", records.BootTiming).model_dump(by_alias=True)
    quiet["profile"] = "quiet"
    for k in quiet["kernels"].values():
        lo = k["milestones"]["login"]
        lo["values"] = [v - 0.2 for v in lo["values"]]
        lo["host"] = rf.stats.summarize(lo["values"])
    records.write(d / "boot-timing-quiet.json", records.validate(quiet, records.BootTiming, "test"))
    rep = report.write(load_board("qemu-arm"), logs, say=lambda m: None)
    cc = rep.model["console_cost"]
    assert cc["qemu"] is True and [r["kernel"] for r in cc["rows"]] == ["5.10", "6.12"]
    row = cc["rows"][0]
    assert row["bytes"] == 20000 and row["cost_s"] == pytest.approx(1.7361, abs=1e-4)  # 87 us a character
    assert row["timing_s"] - row["quiet_s"] == pytest.approx(0.2) and row["p"] < 0.05
    html = rep.index.read_text()
    assert "its emulated serial line is not rate-limited" in html and ">1736<" in html


def test_initcall_summary_reads_each_runs_console_log(tmp_path):
    from bringup.boot import timing
    from bringup.model.milestones import load_rules
    from test_initcalls import SYSTEM_MAP

    smap = tmp_path / "System.map"
    smap.write_text(SYSTEM_MAP)
    console = {
        "r1": [
            "[    0.010000] calling  0xc0a00400 @ 1",
            "[    0.012000] initcall 0xc0a00400 returned 0 after 2000 usecs",
            "[    0.020000] calling  0xc0a00600 @ 1",
            "[    0.025000] initcall 0xc0a00600 returned -19 after 5000 usecs",
            "[    0.030000] calling  0xc0a00600 @ 1",  # the same function twice: its times add up
            "[    0.031000] initcall 0xc0a00600 returned 0 after 1000 usecs",
            "[    0.500000] Freeing unused kernel memory: 1024K",
        ],
        "r2": [
            "[    0.010000] calling  0xc0a00400 @ 1",
            "[    0.013000] initcall 0xc0a00400 returned 0 after 3000 usecs",
            "[    0.600000] Freeing unused kernel memory: 1024K",
        ],
    }
    recs = []
    for rid, lines in console.items():
        (tmp_path / "boot" / rid).mkdir(parents=True)
        (tmp_path / "boot" / rid / "console.log").write_text("\n".join(lines) + "\n")
        hit = {"host_s": 2.0 if rid == "r1" else 2.1, "printk_s": None, "line": len(lines), "text": lines[-1]}
        recs.append(
            {
                "status": "ok",
                "run_id": rid,
                "log": "console.log",
                "round": int(rid[1]),
                "milestones": {"freeing_init": hit},
                "clock_zero_host_s": 1.5,
            }
        )
    recs.append({**recs[0], "run_id": "r3", "redone": True})  # a redone run is not counted
    ic = timing.initcall_summary(recs, tmp_path, smap, load_rules())
    assert ic["runs"] == ["r1", "r2"] and ic["rounds"] == [1, 2]
    assert ic["count"] == [3, 1] and ic["total_us"] == [8000, 3000]
    assert ic["end_s"] == [2.0, 2.1] and ic["before_clock_s"] == [1.5, 1.5] and ic["end_milestone"] == "freeing_init"
    calls = {c["fn"]: c for c in ic["calls"]}
    assert calls["ipc_ns_init"]["us"] == [2000, 3000] and calls["ipc_ns_init"]["level"] == "pure"
    assert calls["pl011_init"]["us"] == [6000, None] and calls["pl011_init"]["rc"] == -19
    assert calls["pl011_init"]["level"] == "device" and calls["pl011_init"]["start_s"] == [0.02, None]
    assert ic["unresolved"] == 0 and ic["format"] == "usecs"


def test_a_difference_of_one_clock_tick_is_not_tested():
    """Early initcalls timed with the jiffy print 0 or one tick: 5.10's 9765 us, 6.12's 10000 us."""
    early_a = [call(f"e{i}_init", [9765, 0, 9765, 9765, 0], [0.01] * 5, level="core") for i in range(3)]
    early_b = [call(f"e{i}_init", [10000, 10000, 0, 10000, 10000], [0.01] * 5, level="core") for i in range(3)]
    a = block(5, [*early_a, call("vfp_init", [0] * 5, [0.02] * 5, level="core")], end=[1.0] * 5)
    b = block(5, [*early_b, call("vfp_init", [10000] * 5, [0.02] * 5, level="core")], end=[1.01] * 5)
    a["calls"].append(call("kswapd_init", [477, 480, 470, 475, 478], [0.3] * 5))
    b["calls"].append(call("kswapd_init", [26038, 26000, 26100, 25990, 26050], [0.3] * 5))
    assert bootexplain.clock_tick(a) == 9765 and bootexplain.clock_tick(b) == 10000
    att = bootexplain.attribute(a, b, "5.10", "6.12")
    rows = {r["key"]: r for r in att["rows"]}
    assert rows["vfp_init"]["tick"] and not rows["vfp_init"]["tested"]  # 0 -> one tick in every run
    assert rows["e0_init"]["tick"] and rows["e0_init"]["q"] is None
    assert not rows["kswapd_init"]["tick"] and rows["kswapd_init"]["significant"]  # 25 ms, fine-grained
    assert [r["key"] for r in att["significant"]] == ["kswapd_init"]
    assert bootexplain.clock_tick(A5) is None  # no duration stands out: no tick


def test_an_unknown_profile_fails_before_anything_is_booted(tmp_path):
    from conftest import run_cli

    p = run_cli("boot-timing", "--board", "qemu-arm", "--profile", "nope", env_extra={"BRINGUP_LOGS": str(tmp_path)})
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.strip() == "bringup: error: profile 'nope': no such profile (known: initcalls, quiet, timing)"
    assert not any(tmp_path.iterdir())


def test_time_before_the_clock_splits_into_loading_and_hidden_at_zero():
    """boot-timing/6 keeps each run's time hidden at [0.000000]: the clock row becomes
    loading (until the kernel's first line) and hidden; they add up to the old row."""
    a = dict(A5, before_clock_s=[0.50, 0.51, 0.49, 0.50, 0.50], hidden_at_zero_s=[0.10, 0.10, 0.11, 0.09, 0.10])
    b = dict(B5, before_clock_s=[0.53, 0.54, 0.52, 0.53, 0.53], hidden_at_zero_s=[0.13, 0.14, 0.12, 0.13, 0.13])
    rows = {r["key"]: r for r in bootexplain.attribute(a, b, "5.10", "6.12")["rows"]}
    assert bootexplain.BEFORE_CLOCK not in rows
    assert rows[bootexplain.LOADING]["delta_us"] == pytest.approx(0, abs=1)  # 0.40 s in both
    assert rows[bootexplain.HIDDEN]["delta_us"] == pytest.approx(30000)  # 0.10 -> 0.13 s
    assert rows[bootexplain.HIDDEN]["significant"]
    old = dict(b, hidden_at_zero_s=[])  # a record before /6: one row
    rows = {r["key"]: r for r in bootexplain.attribute(a, old, "5.10", "6.12")["rows"]}
    assert rows[bootexplain.BEFORE_CLOCK]["delta_us"] == pytest.approx(30000)
    assert bootexplain.HIDDEN not in rows


def test_a_kernel_that_prints_no_initcalls_is_not_compared():
    """2.4 has no initcall_debug: against it every initcall of 2.6.32 would look new."""
    from bringup.report import bootexplain as be

    silent = {"end_s": [0.99, 1.0], "runs": [{}, {}], "total_us": [0, 0], "end_milestone": "freeing_init"}
    talking = {"end_s": [0.48, 0.49], "runs": [{}, {}], "total_us": [40000, 41000], "end_milestone": "freeing_init"}
    assert be.attribute(silent, talking, "2.4.37.11", "2.6.32") is None
    assert be.attribute(talking, silent, "2.6.32", "2.4.37.11") is None
