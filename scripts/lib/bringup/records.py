"""Records: JSON files with a versioned schema (docs/records.md).

Writes are atomic (temporary file + rename in the same directory), so a
reader never sees half a record and an interrupted run never replaces a good
one.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from bringup.errors import BringupError

BUILD_SCHEMA = "bringup.build/1"
# every record kind and the schema versions this bringup reads (docs/records.md)
READABLE = {
    "bringup.build": {1},
    "bringup.rootfs": {1},
    "bringup.boot": {1},
    "bringup.boot-timing": {1},
    "bringup.footprint": {1},
    "bringup.lmbench": {1},
}


def boot_timing_name(root: str = "ramdisk", failed: bool = False) -> str:
    """The boot-timing summary's file name under logs/<board>/: ramdisk and NFS-root
    timings are kept apart, and a failed invocation's summary never replaces a good one."""
    stem = "boot-timing" if root == "ramdisk" else f"boot-timing-{root}"
    return f"{stem}-failed.json" if failed else f"{stem}.json"


def _umask() -> int:
    old = os.umask(0)
    os.umask(old)
    return old


def write_json(path: Path, data) -> None:
    write_text(path, json.dumps(data, indent=2, sort_keys=False) + "\n")


def write_text(path: Path, text: str) -> None:
    """Atomic write: a temporary file in the same directory, fsync, rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o644 & ~_umask())
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read_json(path: Path, kind: str | None = None) -> dict:
    """Read a record; with kind ('bringup.build'), check its schema version."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise BringupError(f"{path}: no such record")
    except json.JSONDecodeError as e:
        raise BringupError(f"{path}: not valid JSON: {e}")
    if kind:
        schema = data.get("schema", "")
        name, _, ver = schema.partition("/")
        if name != kind:
            raise BringupError(f"{path}: field 'schema': {schema!r} is not a {kind} record")
        if not ver.isdigit() or int(ver) not in READABLE.get(kind, set()):
            raise BringupError(
                f"{path}: field 'schema': version {ver!r} of {kind} is not readable by "
                f"this bringup (reads {sorted(READABLE.get(kind, set()))})"
            )
    return data
