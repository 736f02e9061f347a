"""Deferred probes (parse/deferred.py): real lines of 5.x-6.x kernels, and every era's
wording; values read from the text by hand."""

from pathlib import Path

import pytest

from bringup.parse import deferred
from test_report import logs  # noqa: F401  (the live-run fixture)

REAL = Path(__file__).parent / "data" / "real" / "deferred"


def parse(name):
    return deferred.parse_deferred((REAL / name).read_bytes(), name)


def test_6_8_grep_n_paste_with_reason_unknown():
    r = parse("ipu6-6.8-grep-n-deferred-pending-reason-unknown.txt")
    assert [(e["bus"], e["device"], e["kind"], e["printk_s"], e["line"]) for e in r["events"]] == [
        ("mei", "intel_vsc-92335fcf-3203-4472-af93-7b4453ac29da", "pending", 25.870337, 2),
        ("mei", "intel_vsc-5db76cf6-0a68-4ed6-9b78-0361635e2447", "pending", 25.870341, 3),
    ]
    assert all(e["reason"] is None for e in r["events"])  # "(reason unknown)" is no reason
    assert len(r["devices"]) == 2 and r["lines"] == 3


def test_caller_id_and_no_printk_time():
    (e,) = parse("rvck-th1520-wdt-caller-id-deferred-pending.txt")["events"]
    assert (e["bus"], e["device"], e["printk_s"]) == ("platform", "th1520-wdt", 13.79085)
    (e,) = parse("msm8916-6.2-usb-deferred-pending-no-times.txt")["events"]
    assert (e["bus"], e["device"], e["printk_s"]) == ("platform", "78d9000.usb", None)


@pytest.mark.parametrize(
    ("line", "kind", "device", "bus", "driver", "reason", "us"),
    [
        (
            "[    1.234567] platform 1c2ac00.i2c: Driver mv64xxx_i2c requests probe deferral",
            "requested",
            "1c2ac00.i2c",
            "platform",
            "mv64xxx_i2c",
            None,
            None,
        ),
        (
            "[    0.912000] probe of 3f902000.hdmi returned -517 after 912 usecs",
            "returned",
            "3f902000.hdmi",
            None,
            None,
            None,
            912,
        ),
        (
            "[    0.912000] bus: 'platform': really_probe: probe of 3f902000.hdmi returned -517 after 12 usecs",
            "returned",
            "3f902000.hdmi",
            "platform",
            None,
            None,
            12,
        ),
        (
            "[   10.01] panel-simple panel: deferred probe pending: panel-simple: Failed to get backlight",
            "pending",
            "panel",
            "panel-simple",
            None,
            "panel-simple: Failed to get backlight",
            None,
        ),
        (
            "[    2.5] sdhci-esdhc-imx 30b50000.mmc: error -EPROBE_DEFER: failed to get vmmc regulator",
            "reason",
            "30b50000.mmc",
            "sdhci-esdhc-imx",
            None,
            "failed to get vmmc regulator",
            None,
        ),
        (
            "[   30.0] platform soc:gpio-keys: deferred probe timeout, ignoring dependency",
            "timeout",
            "soc:gpio-keys",
            "platform",
            None,
            None,
            None,
        ),
    ],
)
def test_each_wording(line, kind, device, bus, driver, reason, us):
    (e,) = deferred.parse_deferred(line.encode() + b"\n")["events"]
    assert (e["kind"], e["device"], e["bus"], e["driver"], e["reason"], e["us"]) == (
        kind,
        device,
        bus,
        driver,
        reason,
        us,
    )


def test_a_bringup_console_log_line_with_host_stamps():
    """qemu-arm 5.10 with initcall_debug, as bringup's console.log keeps it (host time and
    delta in front): the pl011 UART's probe waits for its clock in every boot."""
    line = b"[   0.689077  0.014334] [    0.079351] probe of 9000000.pl011 returned -517 after 0 usecs\n"
    (e,) = deferred.parse_deferred(line)["events"]
    assert (e["device"], e["kind"], e["us"], e["printk_s"]) == ("9000000.pl011", "returned", 0, 0.079351)


def test_a_console_s_garbage_before_the_printk_time_keeps_it():
    text = b"[    1.0] x\n\xff\xff[    2.5] platform 78d9000.usb: deferred probe pending\n"
    (e,) = deferred.parse_deferred(text)["events"]
    assert (e["device"], e["kind"], e["printk_s"], e["line"]) == ("78d9000.usb", "pending", 2.5, 2)


def test_probe_results_other_than_517_and_prose_are_not_deferrals():
    text = (
        b"[    0.5] probe of 9000000.pl011 returned 0 after 812 usecs\n"
        b"[    0.6] We defer this to later\n"
        b"[    0.7] probe of foo returned -5170 after 1 usecs\n"
    )
    assert deferred.parse_deferred(text)["events"] == []


def test_one_device_many_lines_is_one_device():
    text = (
        b"".join(f"[    {i}.0] platform a.b: Driver drv requests probe deferral\n".encode() for i in range(1, 4))
        + b"[   10.0] platform a.b: deferred probe pending: wait for clock\n"
    )
    (d,) = deferred.parse_deferred(text)["devices"]
    assert d == {
        "device": "a.b",
        "bus": "platform",
        "driver": "drv",
        "reason": "wait for clock",
        "events": 4,
        "kinds": ["requested", "pending"],
    }


def test_a_kernels_deferred_probes_over_its_good_runs(tmp_path):
    from bringup.boot.timing import deferred_summary

    recs = []
    for i, (status, text) in enumerate(
        [
            ("ok", "[    0.9] platform a.b: Driver drv requests probe deferral\n" * 2),
            ("ok", "[    0.9] platform a.b: Driver drv requests probe deferral\n"),
            ("ok", "[    0.5] nothing deferred here\n"),
            ("failed", "[    0.9] platform c.d: deferred probe pending\n"),  # a failed run is not counted
        ]
    ):
        d = tmp_path / "boot" / f"r{i}"
        d.mkdir(parents=True)
        (d / "console.log").write_text(text)
        recs.append({"run_id": f"r{i}", "log": "console.log", "status": status})
    assert deferred_summary(recs, tmp_path) == [
        {
            "device": "a.b",
            "bus": "platform",
            "driver": "drv",
            "reason": None,
            "kinds": ["requested"],
            "runs": 2,
            "events": 3,
        }
    ]


def test_the_report_lists_deferred_probes_or_says_none(logs):  # noqa: F811
    from bringup import records
    from bringup.model.board import load_board
    from bringup.report import page as report

    f = logs / "qemu-arm" / "boot-timing.json"
    rec = records.read(f, records.BootTiming)
    dev = records.boot.DeferredProbe(
        device="3f902000.hdmi",
        bus="platform",
        driver=None,
        reason="wait for clock",
        kinds=["pending"],
        runs=5,
        events=5,
    )
    ks = {
        "5.10": rec.kernels["5.10"].model_copy(update={"deferred": []}),
        "6.12": rec.kernels["6.12"].model_copy(update={"deferred": [dev]}),
    }
    records.write(f, rec.model_copy(update={"kernels": ks}))
    rep = report.write(load_board("qemu-arm"), logs, say=lambda *_: None)
    assert rep.model["deferred"]["rows"][0]["device"] == "3f902000.hdmi"
    md = rep.markdown.read_text()
    assert "- 6.12 (timing): platform 3f902000.hdmi in 5 of 5 runs (pending): wait for clock" in md
    assert '<h4 id="deferred">Deferred probes</h4>' in rep.index.read_text()
