"""The disk of the disk workloads on a QEMU board: an ext4 image made without root.

`mke2fs -d <dir>` writes a filesystem into a plain file and fills it from a
directory; no loop device, no mount, no root.  bringup makes a fresh image for
every boot (runs are independent: no file, fragmentation or journal state of an
earlier round), attaches it through the board's qemu.disk_device, and deletes
it after the boot.

The filesystem's features are fixed here (our own mke2fs.conf through
MKE2FS_CONFIG, the features of Debian bookworm's), not taken from the host's
/etc/mke2fs.conf: newer configurations turn on orphan_file (upstream's default
since e2fsprogs 1.47.0), which kernels before 5.15 refuse to mount read-write,
and the image must be the same on every host.
Inode tables and the journal are written at once (lazy_itable_init=0,
lazy_journal_init=0), so that no ext4lazyinit thread writes in the guest
while the workloads measure.  UUID and hash seed are fixed: the same image
for every kernel and round.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from bringup.errors import BringupError

DEFAULT_MB = 256
UUID = "6b7f1e2a-0d1c-4b5e-9a3f-62726e677570"  # fixed: the same image every time
# features every kernel from 3.x on mounts read-write (no orphan_file, no metadata_csum_seed)
MKE2FS_CONF = """[defaults]
\tbase_features = sparse_super,large_file,filetype,resize_inode,dir_index,ext_attr
\tblocksize = 4096
\tinode_size = 256
\tinode_ratio = 16384

[fs_types]
\text2 = {
\t\tinode_size = 256
\t}
\text3 = {
\t\tfeatures = has_journal
\t}
\text4 = {
\t\tfeatures = has_journal,extent,huge_file,flex_bg,metadata_csum,64bit,dir_nlink,extra_isize
\t}
"""
README = (
    "bringup's disk for the disk workloads (docs/workloads.md): made by mke2fs -d for one boot, deleted after it.\n"
)


def mke2fs() -> str:
    """The mke2fs program (in /sbin for users whose PATH has no sbin)."""
    found = shutil.which("mke2fs") or next(
        (p for p in ("/usr/sbin/mke2fs", "/sbin/mke2fs") if os.access(p, os.X_OK)), None
    )
    if found is None:
        raise BringupError("mke2fs not found: install Debian package e2fsprogs (make deps does)")
    return found


def make(image: Path, size_mb: int = DEFAULT_MB, fs: str = "ext4") -> dict:
    """Write a fresh filesystem image of size_mb MiB to `image` (sparse where the
    host's filesystem allows); returns what was made, for the record."""
    if fs not in ("ext2", "ext3", "ext4"):
        raise BringupError(f"disk image filesystem {fs!r}: bringup makes ext2, ext3 or ext4")
    if not 16 <= size_mb <= 65536:
        raise BringupError(f"disk image size {size_mb} MiB: give 16 to 65536")
    image = Path(image)
    image.parent.mkdir(parents=True, exist_ok=True)
    work = image.with_name(image.name + ".d")
    shutil.rmtree(work, ignore_errors=True)
    (work / "root").mkdir(parents=True)
    (work / "root" / "README").write_text(README)
    (work / "mke2fs.conf").write_text(MKE2FS_CONF)
    image.unlink(missing_ok=True)
    argv = [
        mke2fs(),
        "-q",
        "-F",
        "-t",
        fs,
        "-L",
        "bringup",
        "-U",
        UUID,
        "-E",
        f"lazy_itable_init=0,lazy_journal_init=0,root_owner=0:0,hash_seed={UUID}",
        "-d",
        str(work / "root"),
        str(image),
        f"{size_mb}M",
    ]
    env = {**os.environ, "MKE2FS_CONFIG": str(work / "mke2fs.conf"), "E2FSPROGS_FAKE_TIME": "1700000000"}
    try:
        p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if p.returncode != 0:
        image.unlink(missing_ok=True)
        tail = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["no output"]
        raise BringupError(f"mke2fs {image} failed (exit {p.returncode}): {tail[0]}")
    return {"fs": fs, "image_mb": size_mb}
