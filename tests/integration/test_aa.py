"""The A/A check on real kernels: qemu-arm's 6.12 build booted as two arms, in rounds,
with the host-load guard on; the management summary must claim no difference."""

import json

import pytest

from .conftest import bringup

pytestmark = pytest.mark.integration


def test_a_kernel_compared_with_itself_shows_no_difference(arm_built):
    env = dict(arm_built["env"], BRINGUP_HOST_GUARD="1")
    p = bringup(
        {**arm_built, "env": env},
        "aa",
        "--board",
        "qemu-arm",
        "--kernel",
        "6.12",
        "--runs",
        "4",
        "--path",
        "direct",
        "--lmbench",
        "none",
        "--lmbench-runs",
        "3",
        timeout=1800,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    assert "differences the summary claims: 0 (must be 0)" in p.stdout
    result = json.loads((arm_built["logs"] / "qemu-arm-aa" / "aa.json").read_text())
    assert result["claims"] == [] and result["corrected_false_positives"] == 0
    assert result["tested"] >= 3  # boot to user space, boot to login, memory for malloc()
    timing = json.loads((arm_built["logs"] / "qemu-arm-aa" / "boot-timing.json").read_text())
    assert timing["order"][:2] == [["a", "b"], ["b", "a"]]  # balanced rounds
    assert all(k["ok"] == 4 for k in timing["kernels"].values())
    fp = json.loads((arm_built["logs"] / "qemu-arm-aa" / "a" / "footprint.json").read_text())
    assert fp["rounds"] == [1, 2, 3] and len(fp["malloc_kb_values"]) == 3 and len(fp["host"]) == 3
