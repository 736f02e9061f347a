"""The shipped workloads (quick set, one round) on one of qemu-arm's kernels in real
QEMU: every workload of the default set (make all's) measured, its values in the
record, the disk workloads (fio, PostMark) on the virtio disk the guest mounted, x264's
GStreamer set up in the ramdisk, the report's Workloads section.  One boot, about
2 minutes on a quiet host: the ramdisk and the workloads are the same for every
kernel of a board (one userspace), and the interleaving of kernels in rounds is
tested without QEMU (tests/test_workloads.py)."""

import json

import pytest

from bringup import records
from bringup.model import workload as wm

from .conftest import bringup

KERNEL = "6.12"

pytestmark = pytest.mark.integration


def test_workloads_quick_one_round(arm_built):
    p = bringup(arm_built, "workloads", "--board", "qemu-arm", "--kernel", KERNEL, "--runs", "1", timeout=1800)
    assert p.returncode == 0, (p.stdout + p.stderr)[-3000:]
    logs = arm_built["logs"] / "qemu-arm"
    shipped = wm.load_all()  # the default set
    kernel_id = KERNEL
    assert not (logs / "5.10" / "workloads.json").exists(), "only the kernel asked for was booted"
    rec = records.read(logs / kernel_id / "workloads.json", records.Workloads)
    assert rec.runs == 1 and rec.mode == "quick"
    assert set(rec.workloads) == set(shipped)
    for name, w in rec.workloads.items():
        assert w.measured, f"{kernel_id} {name}: {w.reason}"
        assert not w.failures, f"{kernel_id} {name}: {w.failures}"
        assert [m.name for m in w.metrics] == [m.name for m in shipped[name].metric]
        assert all(m.value > 0 and m.rounds == [1] for m in w.metrics)
    raw = (logs / kernel_id / rec.run_dirs[0] / "workloads.txt").read_text()
    assert "=== openssl speed rc=0" in raw
    assert rec.packages["openssl"].startswith("3.")
    assert "=== x264 encode rc=0" in raw and "Execution ended after 0:" in raw
    assert "libx264-164" in rec.packages and "iso-codes" not in rec.packages  # left out (`without`)
    assert_the_disk_was_used(rec, raw, logs / kernel_id / rec.run_dirs[0])
    p = bringup(arm_built, "report", "--board", "qemu-arm", timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    model = json.loads((logs / "report" / "model.json").read_text())
    names = [w["name"] for w in model["workload_tables"]["workloads"]]
    assert sorted(names) == sorted(shipped)
    assert "## Workloads" in (logs / "report" / "report.md").read_text()


def assert_the_disk_was_used(rec, raw: str, run_dir):
    """The guest mounted the image QEMU attached, and fio's I/O went to that disk: each
    job moved data (fio's KiB) and the disk's own counters (vda;...) show requests."""
    assert rec.disk is not None and rec.disk.device == "/dev/vda" and rec.disk.image_mb == 256
    assert "=== disk mount /dev/vda at /mnt/bringup-disk: mounted" in raw
    assert "/dev/vda /mnt/bringup-disk ext4 rw" in raw
    jobs = {}
    for line in raw.splitlines():
        if line.startswith("3;fio-"):
            f = line.split(";")
            jobs[f[2]] = {"read_kb": int(f[5]), "write_kb": int(f[46]), "disk": f[-9], "ios": f[-8:-6]}
    assert set(jobs) == {"seq_write", "seq_read", "rand_write", "rand_read"}
    for name, j in jobs.items():
        moved = j["write_kb"] if "write" in name else j["read_kb"]
        assert moved > 0 and j["disk"] == "vda" and sum(int(x) for x in j["ios"]) > 0, (name, j)
    assert "=== postmark run rc=0" in raw and "seconds of transactions" in raw
    assert not (run_dir / "disk.img").exists()  # made for the boot, deleted after it
