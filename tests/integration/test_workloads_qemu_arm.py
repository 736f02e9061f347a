"""The shipped workloads (quick set, one round) on qemu-arm's two kernels in real QEMU:
every workload measured on both, its values in the record, the report's Workloads section.
About 5 minutes on a quiet host (two boots, ~1.5 min of workloads each)."""

import json

import pytest

from bringup import records
from bringup.model import workload as wm

from .conftest import ARM_KERNELS, bringup

pytestmark = pytest.mark.integration


def test_workloads_quick_one_round(arm_built):
    p = bringup(arm_built, "workloads", "--board", "qemu-arm", "--runs", "1", timeout=1800)
    assert p.returncode == 0, (p.stdout + p.stderr)[-3000:]
    logs = arm_built["logs"] / "qemu-arm"
    shipped = wm.load_all()
    for kid in ARM_KERNELS:
        rec = records.read(logs / kid / "workloads.json", records.Workloads)
        assert rec.runs == 1 and rec.mode == "quick"
        assert set(rec.workloads) == set(shipped)
        for name, w in rec.workloads.items():
            assert w.measured, f"{kid} {name}: {w.reason}"
            assert not w.failures, f"{kid} {name}: {w.failures}"
            assert [m.name for m in w.metrics] == [m.name for m in shipped[name].metric]
            assert all(m.value > 0 and m.rounds == [1] for m in w.metrics)
        raw = (logs / kid / rec.run_dirs[0] / "workloads.txt").read_text()
        assert "=== openssl speed rc=0" in raw
        assert rec.packages["openssl"].startswith("3.")
    p = bringup(arm_built, "report", "--board", "qemu-arm", timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    model = json.loads((logs / "report" / "model.json").read_text())
    names = [w["name"] for w in model["workload_tables"]["workloads"]]
    assert sorted(names) == sorted(shipped)
    assert "## Workloads" in (logs / "report" / "report.md").read_text()
