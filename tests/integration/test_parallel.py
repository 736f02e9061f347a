"""Parallel local runs on the instruction clock: boots run at once do not disturb what
they measure, so a study run with two QEMU instances at a time gives the records a
serial one gives, within the A/A floor (docs/clock.md)."""

import json

import pytest

from .conftest import bringup

pytestmark = pytest.mark.integration


def _timing(env, jobs):
    p = bringup(
        env,
        "boot-timing",
        "--board",
        "qemu-arm",
        "--clock",
        "instructions",
        "--runs",
        "2",
        "--path",
        "direct",
        "--jobs",
        str(jobs),
        timeout=1200,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads((env["logs"] / "qemu-arm" / "boot-timing.json").read_text())


def test_a_parallel_study_measures_what_a_serial_one_does(arm_built):
    serial = _timing(arm_built, 1)
    parallel = _timing(arm_built, 2)
    assert serial["clock"]["kind"] == parallel["clock"]["kind"] == "instructions"
    compared = 0
    for kernel_id, k in serial["kernels"].items():
        for name, st in k["milestones"].items():
            other = parallel["kernels"][kernel_id]["milestones"].get(name)
            if not st["values"] or not other or not st["printk"]["median"]:
                continue
            a, b = st["printk"]["median"], other["printk"]["median"]
            assert abs(b - a) / a <= 0.001, (kernel_id, name, a, b)  # the milestones' A/A floor: 0.1 %
            compared += 1
    assert compared >= 4
