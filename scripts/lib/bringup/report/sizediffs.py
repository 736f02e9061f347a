"""The symbol and .config diffs of two builds, made once per pair of build keys:
the first report that compares two keys parses both vmlinux and .config files
(report/compare.py) and stores the result as logs/<board>/size-diffs/<key A>-<key B>.json
(records.SizeDiff); every later report reads that record instead.  Builds without
a key (a local tree outside git) are diffed each time."""

from __future__ import annotations

import contextlib
from pathlib import Path

from bringup import records
from bringup.errors import BringupError
from bringup.records import Build, SizeDiff
from bringup.report import compare
from bringup.report.reading import optional
from bringup.util import clock

DIRECTORY = "size-diffs"


def path(bdir: Path, a: Build, b: Build) -> Path | None:
    """Where the diff of a and b is stored; None when a build has no key."""
    if a.key is None or b.key is None:
        return None
    return bdir / DIRECTORY / f"{a.key}-{b.key}.json"


def stored(f: Path) -> dict | None:
    """The diffs of a stored record, as compare.artifact_diffs() returns them; None when
    there is none or it does not read (then it is made again and replaced)."""
    rec = optional(f, SizeDiff)
    if rec is None:
        return None
    out: dict = {"left_out": []}
    if rec.symbols is not None:
        out["symbols"] = rec.symbols.model_dump()
    if rec.config is not None:
        out["config"] = rec.config.model_dump()
    return out


def diffs(bdir: Path, a_id: str, a: Build, b_id: str, b: Build) -> dict:
    """The diffs of two builds of logs/<board>/ (bdir): stored ones when these keys have
    them, else made from the artifacts and stored when nothing was left out."""
    f = path(bdir, a, b)
    cached = stored(f) if f else None
    if cached is not None:
        return cached
    made = compare.artifact_diffs(a, bdir / a_id / "build.json", b, bdir / b_id / "build.json")
    if "config" in made:  # as the record holds them: lists, not tuples
        made["config"] = {k: [list(x) for x in v] for k, v in made["config"].items()}
    if f is None or made["left_out"]:
        return made
    rec = {
        "board": a.board,
        "a": a_id,
        "b": b_id,
        "a_key": a.key,
        "b_key": b.key,
        "created": clock.now(),
        "symbols": made.get("symbols"),
        "config": made.get("config"),
    }
    with contextlib.suppress(OSError, BringupError):  # a read-only copy of logs/: go on with the diff made
        records.write(f, rec, SizeDiff)
    return made
