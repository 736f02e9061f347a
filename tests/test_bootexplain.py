"""Boot time explained (report/bootexplain.py) on canned per-run values: the rows add up
to the measured difference with the rest unexplained, significance after the
Benjamini-Hochberg correction, no claim when nothing is significant; the profiles
(model/profiles.py); the record's initcalls block; the report section and its chart."""

import pytest

import recordfactory as rf
from bringup import records
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
    text = bootexplain.claim(att)
    assert text.startswith('6.12 reaches "Freeing unused kernel memory" 35.0 ms slower than 5.10')
    assert "25.0 ms of it is in `virtio_net_driver_init`, `new_init`" in text


def test_three_runs_can_claim_nothing():
    def first3(b):
        out = {k: (v[:3] if isinstance(v, list) and k != "calls" else v) for k, v in b.items()}
        out["calls"] = [{**c, "us": c["us"][:3], "start_s": c["start_s"][:3]} for c in b["calls"]]
        return out

    att = bootexplain.attribute(first3(A5), first3(B5), "5.10", "6.12")
    assert att["smallest_p"] == pytest.approx(0.1)  # 2 / C(6, 3): nothing can pass 0.05
    assert att["significant"] == [] and bootexplain.claim(att) is None
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
