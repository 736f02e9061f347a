"""Real initcall_debug boots: qemu-arm's 5.10 and 6.12 booted with the initcalls profile
(configs/profiles/initcalls.toml), their initcalls read from the console, named and
levelled from each kernel's System.map (tinyconfig has no CONFIG_KALLSYMS, so the kernel
prints addresses), then "Boot time explained" on the real record."""

import json

import pytest

from bringup.records import BootTiming, read
from bringup.report import bootexplain

from .conftest import ARM_KERNELS, bringup

pytestmark = pytest.mark.integration
RUNS = 3


@pytest.fixture(scope="module")
def initcall_boot(arm_built):
    p = bringup(
        arm_built, "boot-timing", "--board", "qemu-arm", "--runs", str(RUNS), "--profile", "initcalls", timeout=1200
    )
    assert p.returncode == 0, p.stderr[-3000:]
    f = arm_built["logs"] / "qemu-arm" / "boot-timing-initcalls.json"
    return {"proc": p, "file": f, "summary": json.loads(f.read_text())}


@pytest.mark.parametrize("kernel_id", ARM_KERNELS)
def test_initcalls_found_and_below_freeing_time(initcall_boot, kernel_id):
    s = initcall_boot["summary"]
    read(initcall_boot["file"], BootTiming)  # the record reads back under its model
    assert s["profile"] == "initcalls"
    assert "initcall_debug" in s["cmdline_args"][kernel_id] and "loglevel=8" in s["cmdline_args"][kernel_id]
    k = s["kernels"][kernel_id]
    assert k["ok"] == RUNS
    initcalls = k["initcalls"]
    assert len(initcalls["runs"]) == RUNS and initcalls["format"] == "usecs"
    assert min(initcalls["count"]) >= 20, initcalls["count"]  # a tinyconfig kernel still runs dozens of initcalls
    # the System.map named every initcall printed as an address, and gave levels
    assert initcalls["unresolved"] == 0
    assert not any(c["fn"].startswith("0x") for c in initcalls["calls"])
    levels = {c["level"] for c in initcalls["calls"]}
    assert {"core", "device"} <= levels, levels
    # every run's initcalls add up to less than the time to "Freeing unused kernel memory"
    for total_us, end_s in zip(initcalls["total_us"], initcalls["end_s"], strict=True):
        assert end_s is not None and 0 < total_us < end_s * 1e6
    # what the console printed before user space, and its cost at qemu-arm's 115200 baud
    c = k["console"]
    assert c["baud"] == 115200 and c["bytes"]["median"] > c["kernel_bytes"]["median"] > 1000
    assert c["cost_s"] == pytest.approx(c["bytes"]["median"] * 10 / 115200, rel=1e-3)
    # the console log of a run has the command line with the profile's arguments
    run = arm_built_log(initcall_boot, kernel_id, initcalls["runs"][0])
    assert "initcall_debug" in run


def arm_built_log(initcall_boot, kernel_id, run_id):
    return (initcall_boot["file"].parent / kernel_id / "boot" / run_id / "console.log").read_text(errors="replace")


def test_boot_time_explained_between_the_kernels(initcall_boot):
    s = initcall_boot["summary"]
    a, b = (s["kernels"][k]["initcalls"] for k in ARM_KERNELS)
    att = bootexplain.attribute(a, b, *ARM_KERNELS)
    assert att is not None
    # the rows and the unexplained rest add up to the measured difference
    assert sum(r["delta_us"] for r in att["rows"]) + att["unexplained_us"] == pytest.approx(att["delta_us"])
    views = {k: bootexplain.kernel_view(s["kernels"][k]["initcalls"], top=5) for k in ARM_KERNELS}
    for kernel_id, v in views.items():
        assert len(v["top"]) == 5 and v["top"][0]["median_us"] >= v["top"][-1]["median_us"]
        print(kernel_id, "total", v["total_us"], "top", [(t["key"], t["level"], t["median_us"]) for t in v["top"]])
    print("delta", att["delta_us"], "unexplained", att["unexplained_us"])
    for r in bootexplain.top_changes(att, 8):
        print(r["key"], r["status"], r["a_us"], r["b_us"], r["p"], r["q"])
