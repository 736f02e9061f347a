"""Where good builds are kept: logs/<board>/<kernel>/'s last good build (its record
written and its images swapped in atomically; up to date while its key holds) and
the result store, every good build in the cache under its content key
(<cache>/results/<board>/<kernel>/<key>/), so that another logs directory asking
for the same build gets a copy of its record, log and images instead of running
make again; the last STORE_KEEP builds of a board's kernel are kept."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from bringup import records
from bringup.errors import BringupError


def _write_good(recdir: Path, rec: records.Build) -> None:
    """The good record, last (its images and log are in place), and no stale failure beside it."""
    records.write(recdir / "build.json", rec)
    for stale in ("build-failed.json", "build-failed.log"):
        (recdir / stale).unlink(missing_ok=True)


def _swap_images(recdir: Path) -> None:
    """images.new/ becomes images/; the old images are gone only once the new are in place."""
    new, old, trash = recdir / "images.new", recdir / "images", recdir / "images.old"
    if trash.exists():
        shutil.rmtree(trash)
    if old.exists():
        old.rename(trash)
    new.rename(old)
    if trash.exists():
        shutil.rmtree(trash)


def _up_to_date(good: Path, key: str) -> records.Build | None:
    """The good build's record when it was made from this key and its images are there."""
    if not good.exists():
        return None
    try:
        rec = records.read(good, records.Build)
    except BringupError:
        return None
    if rec.key != key or not all((good.parent / p).exists() for p in rec.artifacts.values()):
        return None
    return rec


STORE_KEEP = 3  # builds kept per board and kernel in the cache's result store


def _store_dir(cache: Path, board: str, kernel: str) -> Path:
    return Path(cache) / "results" / board / kernel


def _stored(cache: Path, board: str, kernel: str, key: str) -> Path | None:
    """The stored good build of this key, when it is whole (record, log and images)."""
    d = _store_dir(cache, board, kernel) / key
    rec = _up_to_date(d / "build.json", key)
    if rec is None or not (d / "build.log").exists():
        return None
    return d


def _copy_tree(src: Path, dest: Path) -> None:
    """Files hard-linked where the file system allows it (images are never written in
    place: a new build publishes new files), copied otherwise."""

    def link_or_copy(a: str, b: str) -> None:
        try:
            os.link(a, b)
        except OSError:
            shutil.copy2(a, b)

    shutil.copytree(src, dest, copy_function=link_or_copy)


def _store(cache: Path, board: str, kernel: str, key: str, recdir: Path) -> None:
    """Keep this good build under its key: written beside, renamed into place, so a
    reader sees a whole build or none; the oldest beyond STORE_KEEP are dropped."""
    base = _store_dir(cache, board, kernel)
    base.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".new-", dir=base))
    try:
        _copy_tree(recdir / "images", tmp / "images")
        shutil.copy2(recdir / "build.log", tmp / "build.log")
        shutil.copy2(recdir / "build.json", tmp / "build.json")
        final = base / key
        if final.exists():
            shutil.rmtree(final)
        tmp.rename(final)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)  # the store is a convenience: the build itself is published
        return
    kept = sorted(
        (d for d in base.iterdir() if d.is_dir() and not d.name.startswith(".")), key=lambda d: d.stat().st_mtime
    )
    for old in kept[:-STORE_KEEP]:
        shutil.rmtree(old, ignore_errors=True)


def _restore(stored: Path, recdir: Path) -> records.Build:
    """The stored build copied into recdir, images first and the record last (as _publish)."""
    recdir.mkdir(parents=True, exist_ok=True)
    new = recdir / "images.new"
    if new.exists():
        shutil.rmtree(new)
    _copy_tree(stored / "images", new)
    _swap_images(recdir)
    shutil.copy2(stored / "build.log", recdir / "build.log.new")
    os.replace(recdir / "build.log.new", recdir / "build.log")
    rec = records.read(stored / "build.json", records.Build)
    _write_good(recdir, rec)
    return rec
