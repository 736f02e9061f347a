"""bringup aa without QEMU: the A/A board, the links to the one build, and what the
check hands to boot timing (the integration test boots it for real)."""

import types

import pytest

import recordfactory as rf
from bringup import aa, records
from bringup.builder import rootfs
from bringup.errors import BringupError
from bringup.model.board import load_board


@pytest.fixture
def canned_aa(tmp_path, monkeypatch):
    """aa.run() on qemu-arm/6.12 with the measurements replaced: what boot timing is
    asked is kept in `seen`."""
    board = load_board("qemu-arm")
    logs = tmp_path / "logs"
    src = logs / "qemu-arm" / "6.12"
    records.write(src / "build.json", rf.build("6.12"))
    for rel in ("images/vmlinux", "images/config", "images/zImage"):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_bytes(b"image " + rel.encode())
    seen: dict = {}
    rd = types.SimpleNamespace(file="initramfs.cpio.gz", ref=lambda: None)
    monkeypatch.setattr(rootfs, "build", lambda *a, **kw: rd)

    def boot_timing(board, logs, initrd, target_for, **kw):
        seen.update(kw, board=board.name, kernels=[k.id for k in board.kernels])

    monkeypatch.setattr(aa.boottiming, "boot_timing", boot_timing)
    monkeypatch.setattr(aa.footprint, "footprint", lambda *a, **kw: seen.update(footprint=kw))
    monkeypatch.setattr(aa.report, "collect", lambda board, logs, own_floors=True: {"findings": []})
    return board, logs, tmp_path / "cache", seen


@pytest.mark.parametrize("root", ["ramdisk", "nfs"])
def test_aa_boots_with_the_root_it_is_given(canned_aa, root):
    board, logs, cache, seen = canned_aa
    stale = logs / "qemu-arm-aa" / "boot-timing.json"  # an earlier check's ramdisk timing
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")
    result = aa.run(
        board, "6.12", logs, cache, aa.CheckPlan(runs=3, lmbench="none", lmbench_runs=2, root=root), say=lambda m: None
    )
    assert seen["root"] == root and seen["runs"] == 3 and seen["board"] == "qemu-arm-aa"
    assert seen["kernels"] == ["a", "b"] and seen["footprint"]["lmbench_runs"] == 2
    assert not stale.exists(), "a boot timing left from an earlier check would be judged again"
    assert result["root"] == root and result["claims"] == []
    assert f"(root {root})" in aa.render(result)
    for arm in ("a", "b"):  # both arms are the one build, linked
        assert (logs / "qemu-arm-aa" / arm / "images" / "zImage").read_bytes() == b"image images/zImage"


def test_aa_refuses_a_root_it_cannot_boot_before_any_work(canned_aa):
    board, logs, cache, seen = canned_aa
    with pytest.raises(BringupError, match="root 'usb': use 'ramdisk' or 'nfs'"):
        aa.run(board, "6.12", logs, cache, aa.CheckPlan(root="usb"), say=lambda m: None)
    assert seen == {} and not (logs / "qemu-arm-aa").exists()
