"""Shared set-up of the integration tests.

Every test gets what it needs from the session fixtures below, never from a
test that happened to run before it, so any one of them runs alone
(`pytest tests/integration/test_qemu_arm.py::test_footprint_quick`) or in any
order.  Each fixture does its work once per session, the first time a test
asks for it, and later tests share the result."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# The host-load guard (util/hostload.py) redoes runs while the host is busy; integration tests
# count runs and run directories, and may share the machine with other jobs, so they run
# without it.  tests/integration/test_aa.py turns it on: the A/A check is its real test.
os.environ.setdefault("BRINGUP_HOST_GUARD", "0")

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    """Every test in this directory is an integration test, marked or not: a file that
    forgets its `pytestmark` must not slip into `make check`'s unit tests."""
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.integration)


ARM_KERNELS = ["5.10", "6.12"]  # the kernels of boards/qemu-arm.toml


@pytest.fixture(scope="session")
def shared_env(tmp_path_factory):
    """Results in a temporary logs dir; downloads, sources, build trees and ccache in the
    shared cache (BRINGUP_CACHE or ~/.cache/bringup), so reruns and later tests reuse them."""
    logs = tmp_path_factory.mktemp("logs")
    env = dict(os.environ)
    env["BRINGUP_LOGS"] = str(logs)
    return {"logs": logs, "env": env}


def bringup(shared_env, *args, timeout=3600):
    return subprocess.run(
        [sys.executable, "-m", "bringup", *args],
        capture_output=True,
        text=True,
        env=shared_env["env"],
        timeout=timeout,
    )


@pytest.fixture(scope="session")
def arm_built(shared_env):
    """qemu-arm's kernels built: logs/qemu-arm/<kernel>/build.json and images/."""
    p = bringup(shared_env, "build-all", "--board", "qemu-arm")
    assert p.returncode == 0, p.stderr[-3000:]
    return shared_env


@pytest.fixture(scope="session")
def arm_boot(arm_built):
    """`arm_boot(path)`: qemu-arm's kernels booted to login once each ("--runs 1") on the host clock over
    `path` ("u-boot", the board's own, or "direct"), the first time a test asks for that
    path.  Returns what that boot made:

      proc     the finished `bringup boot-timing` (returncode, stdout, stderr)
      summary  boot-timing.json as that boot wrote it (None when it failed); a later
               boot over the other path rewrites the file, so read this copy
      runs     {kernel: [its run directories]}, the ones this boot made

    Either boot leaves a good logs/qemu-arm/boot-timing.json for the report."""
    done = {}
    logs = arm_built["logs"] / "qemu-arm"

    def run_dirs(kernel_id):
        return set((logs / kernel_id / "boot").glob("*"))

    def boot(path="u-boot"):
        if path not in done:
            before = {kernel_id: run_dirs(kernel_id) for kernel_id in ARM_KERNELS}
            # the host clock: these boots check its machinery (host times from the bootloader's load, the
            # printk lag, the login prompt's time); the instruction clock's boots are test_parallel's and test_aa's
            p = bringup(
                arm_built,
                "boot-timing",
                "--board",
                "qemu-arm",
                "--clock",
                "host",
                "--runs",
                "1",
                "--path",
                path,
                timeout=600,
            )
            done[path] = {
                "proc": p,
                "summary": json.loads((logs / "boot-timing.json").read_text()) if p.returncode == 0 else None,
                "runs": {kernel_id: sorted(run_dirs(kernel_id) - before[kernel_id]) for kernel_id in ARM_KERNELS},
            }
        return done[path]

    return boot


@pytest.fixture(scope="session")
def arm_footprint(arm_built):
    """`bringup footprint-report` of qemu-arm (ramdisk, quick lmbench set), run once: the
    finished process.  Its records, logs/qemu-arm/<kernel>/footprint.json and lmbench.json,
    are written by nothing else, so tests read them in place."""
    return bringup(arm_built, "footprint-report", "--board", "qemu-arm", timeout=1200)
