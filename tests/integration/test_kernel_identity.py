"""Integration: the kernel that boots must be the kernel built.  Real QEMU boots
a board whose "flash" holds another build: the 6.12 build record's images are
swapped for the 5.10 build's (as a board whose TFTP server or flash still
serves an old kernel), and the run fails naming both kernels."""

import json
import shutil

import pytest

from .conftest import ROOT, bringup

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("path", ["direct", "u-boot"])
def test_a_board_that_boots_another_build_fails_the_run(arm_built, tmp_path, path):
    logs = arm_built["logs"]
    name = "swap-arm"
    if (logs / name).exists():
        shutil.rmtree(logs / name)
    shutil.copytree(logs / "qemu-arm" / "6.12", logs / name / "6.12", ignore=shutil.ignore_patterns("boot", "foot*"))
    old = json.loads((logs / "qemu-arm" / "5.10" / "build.json").read_text())["artifacts"]
    new = json.loads((logs / name / "6.12" / "build.json").read_text())["artifacts"]
    for img in ("zImage", "uImage"):  # what the board loads is 5.10's
        shutil.copyfile(logs / "qemu-arm" / "5.10" / old[img], logs / name / "6.12" / new[img])
    board = tmp_path / f"{name}.toml"
    text = (ROOT / "boards" / "qemu-arm.toml").read_text().replace('name = "qemu-arm"', f'name = "{name}"')
    board.write_text(
        text.split('[[kernels]]\nid = "5.10"')[0] + '[[kernels]]\nid = "6.12"' + text.split('id = "6.12"')[1]
    )
    p = bringup(arm_built, "boot-timing", "--board", str(board), "--runs", "1", "--path", path, timeout=600)
    assert p.returncode == 4, p.stderr[-2000:]
    run = sorted((logs / name / "6.12" / "boot").glob("*-r01"))[-1]
    rec = json.loads((run / "boot.json").read_text())
    built = json.loads((logs / "qemu-arm" / "5.10" / "build.json").read_text())
    assert rec["status"] == "fail"
    assert rec["error"].startswith(f"booted kernel {built['kernelrelease']} (bringup@bringup) #")
    assert f", expected {rec['kernelrelease']} (bringup@bringup) #" in rec["error"]
    assert rec["booted_kernel"].startswith(built["kernelrelease"] + " (bringup@bringup) (")
    assert "login" not in rec["milestones"]  # stopped at the banner
