"""The records of one board the report reads (logs/<board>/): the builds, the boot-timing
summaries with imported kernels' boots beside the live ones, footprint, lmbench and
workloads records, and the kernels to show.  Absent records leave a kernel out of a
table; records that do not read are left out in one line (report/reading.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from bringup import records
from bringup.model.board import Board
from bringup.records import BootTiming, Build, Footprint, Lmbench, Workloads
from bringup.report.model import Inputs
from bringup.report.reading import Reader, is_dir

# the records of each kernel directory, in the order they are read (a build: the board's own kernels only)
PER_KERNEL = (("build", Build), ("footprint", Footprint), ("lmbench", Lmbench), ("workloads", Workloads))


@dataclass(frozen=True)
class Gathered:
    """What the sections are made from: the records read, the kernels shown, the NFS
    root's boot timing, and the reader (for the records the sections read themselves)."""

    bdir: Path
    inputs: Inputs
    kernels: list[str]
    nfs: BootTiming | None
    live_nfs: BootTiming | None
    reader: Reader


def gather(board: Board, logs: Path) -> Gathered:
    bdir = Path(logs) / board.name
    live_ids = [k.id for k in board.kernels]
    ids = live_ids + imported_dirs(bdir, live_ids)
    rd = Reader()
    recs: dict[str, Any] = {
        name: {k: r for k in (live_ids if name == "build" else ids) if (r := rd.read(bdir / k / f"{name}.json", m, k))}
        for name, m in PER_KERNEL
    }
    build, fp, lm = recs["build"], recs["footprint"], recs["lmbench"]
    live_boot = rd.read(bdir / records.boot_timing_name(), BootTiming)
    boot, imported_boot = _with_imported_boots(live_boot, bdir, ids, rd, records.boot_timing_name())
    live_nfs = rd.read(bdir / records.boot_timing_name("nfs"), BootTiming)
    nfs, imported_nfs = _with_imported_boots(live_nfs, bdir, ids, rd, records.boot_timing_name("nfs"))
    imported = _imported(fp, lm, imported_boot, imported_nfs)
    ids = [k for k in ids if k in live_ids or k in imported]  # a directory of a removed kernel is not shown
    kernels = [k for k in ids if k in build or k in fp or k in imported or (boot and k in boot.kernels)]
    missing = {
        "build": [k for k in kernels if k not in build and k not in imported],
        "boot": [k for k in kernels if not boot or k not in boot.kernels],
        "footprint": [k for k in kernels if k not in fp],
    }
    inputs = Inputs(
        **recs,
        boot=boot,
        live_boot=live_boot,
        imported=imported,
        # kernels built outside what their authors supported (2.4 with gcc 12): marked beside every number
        unsupported={k: [f.overrides for f in r.fixes if f.overrides] for k, r in build.items() if r.overrides()},
        left_out=rd.left_out,
        sets=_sets(bdir),
        missing=missing,
    )
    return Gathered(bdir=bdir, inputs=inputs, kernels=kernels, nfs=nfs, live_nfs=live_nfs, reader=rd)


def _sets(bdir: Path) -> list[dict]:
    """Which set of each step the records come from (records/sets.py); a .sets/ directory that
    cannot be listed is Unreadable, not "no sets"."""
    is_dir(bdir / records.sets.SETS)
    return records.sets.read_all(bdir)


IMPORT_DIRS = ("imported-bootlog", "imported-lmbench")  # bringup.importer.RUN_DIRS


def imported_dirs(bdir: Path, live: list[str]) -> list[str]:
    """Kernel directories of logs/<board>/ that are not the board's kernels but hold
    an import (bringup import: docs/import.md), by name."""
    if not is_dir(bdir):
        return []
    return sorted(
        d.name for d in bdir.iterdir() if d.name not in live and is_dir(d) and any(is_dir(d / x) for x in IMPORT_DIRS)
    )


def _with_imported_boots(
    live: BootTiming | None, bdir: Path, ids: list[str], rd: Reader, name: str
) -> tuple[BootTiming | None, dict[str, BootTiming]]:
    """The boot-timing summary with the imported kernels' runs beside the live ones
    (an imported boot log of a kernel the live summary has is not used)."""
    imported: dict[str, BootTiming] = {}
    for k in ids:
        if live and k in live.kernels:
            continue
        r = rd.read(bdir / k / name, BootTiming)
        if r is not None and r.imported is not None and k in r.kernels:
            imported[k] = r
    if not imported:
        return live, {}
    extra = {k: r.kernels[k] for k, r in imported.items()}
    base = live or next(iter(imported.values()))
    return base.model_copy(update={"kernels": {**(live.kernels if live else {}), **extra}}), imported


def _imported(
    fp: dict[str, Footprint], lm: dict[str, Lmbench], boot: dict[str, BootTiming], nfs: dict[str, BootTiming]
) -> dict[str, list]:
    """kernel -> where its imported records came from: one entry per imported file."""
    out: dict[str, list] = {}
    recs: dict[str, Any]
    for what, recs in (
        (records.boot_timing_name(), boot),
        (records.boot_timing_name("nfs"), nfs),
        ("footprint.json", fp),
        ("lmbench.json", lm),
    ):
        for k, r in recs.items():
            i = r.imported
            if i is None:
                continue
            entry = {
                "kind": i.kind,
                "source": i.source,
                "name": PurePosixPath(i.source).name,
                "sha256": i.sha256,
                "format": i.format,
                "assumed": i.assumed,
                "label": i.label,
                "at": i.at,
                "copy": f"../{k}/{r.run}/{i.kept}" if r.run else None,
                "records": [what],
            }
            same = next((e for e in out.get(k, []) if e["sha256"] == i.sha256 and e["kind"] == i.kind), None)
            if same:
                same["records"].append(what)
            else:
                out.setdefault(k, []).append(entry)
    for entries in out.values():
        for e in entries:
            e["mark"] = f"imported from {e['name']} (sha256 {e['sha256'][:12]}…, {e['format']})"
    return out
