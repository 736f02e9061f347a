import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


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
    p = bringup(shared_env, "build-all", "--board", "qemu-arm")
    assert p.returncode == 0, p.stderr[-3000:]
    return shared_env
