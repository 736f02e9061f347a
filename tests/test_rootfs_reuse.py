"""An unchanged ramdisk is reused without compressing it again; a changed archive, or a
.cpio.gz that is no longer the one its record describes, is built again."""

import gzip

from bringup import records
from bringup.builder import rootfs
from bringup.model.board import load_board
from bringup.util import cpio


def build(tmp_path, monkeypatch, extra=()):
    bb = tmp_path / "busybox"
    bb.write_bytes(b"\x7fELF fake busybox")
    monkeypatch.setattr(rootfs, "busybox_for", lambda *a, **kw: (bb, "1.35.0-4"))
    calls = []
    real = cpio.gzipped

    def counted(data: bytes) -> bytes:
        calls.append(len(data))
        return real(data)

    monkeypatch.setattr(rootfs.cpio, "gzipped", counted)
    rec = rootfs.build(load_board("qemu-arm"), tmp_path / "logs", tmp_path / "cache", extra=extra, say=lambda m: None)
    return rec, calls


def test_an_unchanged_ramdisk_is_not_compressed_again(tmp_path, monkeypatch):
    first, calls = build(tmp_path, monkeypatch)
    assert len(calls) == 1 and first.archive_sha256 is not None
    out = tmp_path / "logs" / "qemu-arm" / "rootfs" / "initramfs.cpio.gz"
    assert records.read(out.with_suffix("").with_suffix(".json"), records.Rootfs).archive_sha256 == first.archive_sha256
    mtime = out.stat().st_mtime_ns
    again, calls = build(tmp_path, monkeypatch)
    assert calls == [] and again.sha256 == first.sha256 and out.stat().st_mtime_ns == mtime

    # another archive: built and compressed
    changed, calls = build(tmp_path, monkeypatch, extra=[cpio.file("etc/extra", b"x\n")])
    assert len(calls) == 1 and changed.archive_sha256 != first.archive_sha256
    assert b"etc/extra" in gzip.decompress(out.read_bytes())


def test_a_ramdisk_file_changed_behind_its_record_is_built_again(tmp_path, monkeypatch):
    first, _ = build(tmp_path, monkeypatch)
    out = tmp_path / "logs" / "qemu-arm" / "rootfs" / "initramfs.cpio.gz"
    data = bytearray(out.read_bytes())
    data[-9] ^= 0xFF  # same size, other bytes
    out.write_bytes(bytes(data))
    again, calls = build(tmp_path, monkeypatch)
    assert len(calls) == 1 and again.sha256 == first.sha256
    assert out.read_bytes() != bytes(data)
