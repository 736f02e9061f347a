"""The study as a page: logs/<board>/report/index.html (one self-contained file:
inline CSS and SVG charts, no network needed) and report.md (charts as SVG files
next to it).

Reads records only (build.json, boot-timing.json + boot run records,
footprint.json, lmbench.json, vmlinux/config artifacts), never consoles or
other logs.  Every number links to the record it came from, and to its line in
a console log or lmbench.txt where the record says which line that is.

A record that does not read (not JSON, wrong schema, a field missing or
mistyped, an artifact outside its directory) is left out: the report goes on
with the others and says, in one line per record, what it left out and why.
"""

from __future__ import annotations

import functools
import re
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

import jinja2

from bringup import records, stats
from bringup.errors import BringupError
from bringup.model.board import Board
from bringup.model.clocks import FLOOR_MULTIPLE, floors
from bringup.model.milestones import load_rules
from bringup.parse import sizediff
from bringup.records import Boot, BootTiming, Build, Footprint, Lmbench, Workloads
from bringup.records.boot import KernelTiming, MilestoneStats
from bringup.report import bootexplain, charts, compare, environment, findings, places, sizediffs
from bringup.report import buildtable as buildreport
from bringup.report.tables import fmt_delta, pct
from bringup.report.workloads import left_out as workloads_left_out
from bringup.report.workloads import relative as workload_relative
from bringup.report.workloads import tables as workload_tables
from bringup.util import clock, paths

TEMPLATES = Path(__file__).parent / "templates"
SIZE_RE = re.compile(r"^bw_mem_(rd|wr|bcopy) (\d+)([KMG]?)$")
UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


R = TypeVar("R", bound=records.Record)


class Reader:
    """Reads a board's records for the report; what does not read is left out, in one line."""

    def __init__(self) -> None:
        self.left_out: list[str] = []
        self._seen: dict[Path, records.Record | None] = {}

    def read(self, f: Path, model: type[R], kernel: str | None = None) -> R | None:
        if f not in self._seen:
            self._seen[f] = self._read(f, model, kernel)
        rec = self._seen[f]
        return rec if isinstance(rec, model) else None

    def _read(self, f: Path, model: type[R], kernel: str | None) -> R | None:
        try:
            if not records.present(f):  # absent; a directory that cannot be read is not absent
                return None
            rec = records.read(f, model)
        except BringupError as e:  # named as the user sees it: logs/<board>/... inside the project
            self.left_out.append(paths.rel(f) + str(e).removeprefix(str(f)))
            return None
        found = getattr(rec, "kernel", kernel)
        if kernel is not None and found != kernel:
            self.left_out.append(
                f"{paths.rel(f)}: field 'kernel': {found!r}: the record of another kernel, not {kernel!r}"
            )
            return None
        return rec


INSTRUCTION_CLOCK_NOTE = (
    "Times are on the instruction clock (QEMU icount, {ns} ns per instruction): the guest's time advances by "
    "the instructions it executes, at that fixed rate, and jumps over the idle time it waits for its own "
    "timers, so a busy host does not change them and one boot per kernel is a measurement. It models "
    "executed instructions; not caches, TLBs, memory or bus stalls, nor device latency: it tells which "
    "kernel does less work, not how many milliseconds a real board takes. A difference is stated when it is "
    "at least {mult:g} times the metric's A/A floor and at least 1 % (floors: {source}; docs/clock.md)."
)
HOST_CLOCK_NOTE = (
    "Times are on the host clock: the guest runs as fast as the host lets it, so they are measured in rounds "
    "of boots, judged by the host-load guard, and a difference is stated only when a test over the rounds "
    "finds it (docs/clock.md)."
)


def clock_note(clocks: list, fl: dict) -> dict:
    """Which clock measured the records, and the report's paragraphs about it (one per clock)."""
    kinds = sorted({c.kind for c in clocks})
    ns = next((c.ns_per_instruction for c in clocks if c.kind == "instructions"), None)
    text = []
    if "instructions" in kinds:
        text.append(INSTRUCTION_CLOCK_NOTE.format(ns=ns, mult=FLOOR_MULTIPLE, source=fl.get("source", "-")))
    if "host" in kinds:
        text.append(HOST_CLOCK_NOTE)
    if len(kinds) > 1:
        text.append(
            "The records were measured on different clocks: a kernel measured on one is never tested "
            "against one measured on the other."
        )
    return {"kinds": kinds, "ns_per_instruction": ns, "text": text}


def collect(board: Board, logs: Path, top: int = 12, own_floors: bool = True) -> dict:
    """The report model: the records of one board and the tables made from them.
    own_floors=False: deterministic findings are judged against the shipped A/A floors
    only (the A/A check itself; model/clocks.py floors())."""
    logs = Path(logs)
    bdir = logs / board.name
    live_ids = [k.id for k in board.kernels]
    ids = live_ids + imported_dirs(bdir, live_ids)
    rd = Reader()
    build = {k: b for k in live_ids if (b := rd.read(bdir / k / "build.json", Build, k))}
    fp = {k: f for k in ids if (f := rd.read(bdir / k / "footprint.json", Footprint, k))}
    lm = {k: m for k in ids if (m := rd.read(bdir / k / "lmbench.json", Lmbench, k))}
    wl = {k: w for k in ids if (w := rd.read(bdir / k / "workloads.json", Workloads, k))}
    live_boot = rd.read(bdir / records.boot_timing_name(), BootTiming)
    boot, imported_boot = _with_imported_boots(live_boot, bdir, ids, rd, records.boot_timing_name())
    live_nfs = rd.read(bdir / records.boot_timing_name("nfs"), BootTiming)
    nfs, imported_nfs = _with_imported_boots(live_nfs, bdir, ids, rd, records.boot_timing_name("nfs"))
    imported = _imported(fp, lm, imported_boot, imported_nfs)
    ids = [k for k in ids if k in live_ids or k in imported]  # a directory of a removed kernel is not shown
    kernels = [k for k in ids if k in build or k in fp or k in imported or (boot and k in boot.kernels)]
    model: dict = {
        "board": board.name,
        "description": board.description,
        "kernels": kernels,
        "generated": clock.now(),
        "build": build,
        "footprint": fp,
        "lmbench": lm,
        "workloads": wl,
        "boot": boot,
        "live_boot": live_boot,
        "imported": imported,
        # kernels built outside what their authors supported (2.4 with gcc 12): marked beside every number
        "unsupported": {k: [f.overrides for f in r.fixes if f.overrides] for k, r in build.items() if r.overrides()},
        "left_out": rd.left_out,
        "sets": records.sets.read_all(bdir),  # which set of each step the records come from (records/sets.py)
        "missing": {
            "build": [k for k in kernels if k not in build and k not in imported],
            "boot": [k for k in kernels if not boot or k not in boot.kernels],
            "footprint": [k for k in kernels if k not in fp],
        },
    }
    model["floors"] = floors(board.name, logs, own_floors)
    model["clock"] = clock_note(
        [r.clock for r in [boot, *fp.values(), *lm.values(), *wl.values()] if r is not None], model["floors"]
    )
    model["build_cost"] = _build_cost(rd.read(bdir / "build-cost.json", records.BuildCost), build, rd.left_out)
    model["build_table"] = _build_table(build, kernels, model["build_cost"])
    model["sizes"] = {k: build[k].sizes.groups for k in kernels if k in build}
    model["images"] = {
        k: {
            f"{img.file} ({n.split('_')[0]})": img.bytes
            for n, img in (
                ("compressed_image", build[k].sizes.compressed_image),
                ("uncompressed_image", build[k].sizes.uncompressed_image),
            )
            if img is not None
        }
        for k in kernels
        if k in build
    }
    model["sizediff"] = _sizediffs(bdir, build, kernels, top, rd.left_out)
    rules = load_rules(board.milestones)
    model["boot_milestones"] = _boot_milestones(boot, rules, set(imported)) if boot else []
    at = next((i for i, m in enumerate(rules.milestones) if m.delayed), None)
    model["delayed_milestones"] = [m.name for m in rules.milestones[at:]] if at is not None else []
    model["boot_rows"] = (
        _boot_rows(boot, model["boot_milestones"], kernels, bdir, records.boot_timing_name(), rd, imported)
        if boot
        else []
    )
    model["places"] = places.section(live_boot, kernels, rules)
    model["boot_nfs"] = None
    if nfs:
        mil = _boot_milestones(nfs, rules, set(imported))
        model["boot_nfs"] = {
            "summary": nfs,
            "live": live_nfs,
            "milestones": mil,
            "rows": _boot_rows(nfs, mil, kernels, bdir, records.boot_timing_name("nfs"), rd, imported),
        }
    icname = records.boot_timing_name(profile="initcalls")
    ic = rd.read(bdir / icname, BootTiming)
    labels = {m.name: m.label for m in rules.milestones}
    model["boot_explained"] = _boot_explained(ic, kernels, icname, labels) if ic else None
    quiet = rd.read(bdir / records.boot_timing_name(profile="quiet"), BootTiming)
    model["console_cost"] = _console_cost(board, boot, quiet, kernels, rules)
    model["deferred"] = _deferred({"timing": boot, "initcalls": ic}, kernels)
    model["footprint_rows"] = _footprint_rows(fp, kernels)
    model["lmbench_groups"] = _lmbench_groups(lm, kernels)
    model["bw_mem"] = _bw_mem(lm, kernels)
    model["workload_tables"] = workload_tables(wl, kernels)
    model["workload_tables"]["left_out"] = workloads_left_out(wl, model["workload_tables"])
    model["workload_relative"] = workload_relative(model["workload_tables"])
    measured: list[tuple[str, Any]] = [
        (name, r)
        for name, r in ((records.boot_timing_name(), live_boot), (records.boot_timing_name("nfs"), live_nfs))
        if r is not None
    ]
    for name, recs in (("footprint.json", fp), ("lmbench.json", lm), ("workloads.json", wl)):
        measured += [(f"{k}/{name}", r) for k, r in recs.items()]
    model["env"] = environment.section(build, measured)
    _imported_env(model)
    model["reproduce"] = _reproduce(board, model)
    model["findings"] = findings.summarize(model)
    _explained_findings(model)
    _mark_from_family(model)
    return model


IMPORT_DIRS = ("imported-bootlog", "imported-lmbench")  # bringup.importer.RUN_DIRS


def imported_dirs(bdir: Path, live: list[str]) -> list[str]:
    """Kernel directories of logs/<board>/ that are not the board's kernels but hold
    an import (bringup import: docs/import.md), by name."""
    if not bdir.is_dir():
        return []
    return sorted(
        d.name
        for d in bdir.iterdir()
        if d.name not in live and d.is_dir() and any((d / x).is_dir() for x in IMPORT_DIRS)
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


def _boot_explained(ic: BootTiming, kernels: list[str], fname: str, labels: dict, top: int = 10) -> dict | None:
    """The "Boot time explained" section from the initcalls profile's record
    (report/bootexplain.py): per kernel its initcalls, against the first kernel the
    initcalls that grew, shrank, appeared or vanished."""
    blocks = {}
    for k in kernels:
        block = ic.kernels[k].initcalls if k in ic.kernels else None
        if block is not None and block.runs:
            blocks[k] = block.model_dump()
    if not blocks:
        return None
    ks = list(blocks)
    views = {k: bootexplain.kernel_view(blocks[k], top) for k in ks}
    for v in views.values():
        v["end_label"] = labels.get(v["end_milestone"] or "", v["end_milestone"])
    timeline = {
        k: [
            {
                "key": bootexplain.key(c),
                "level": c["level"],
                "start_s": bootexplain.median_of(c["start_s"]),
                "us": bootexplain.median_of([float(x) for x in c["us"] if x is not None]),
            }
            for c in blocks[k]["calls"]
        ]
        for k in ks
    }
    pairs = []
    for k in ks[1:]:
        att = bootexplain.attribute(blocks[ks[0]], blocks[k], ks[0], k)
        if att is not None:
            label = labels.get(att["end_milestone"] or "")
            pairs.append(
                {
                    **att,
                    "end_label": label or att["end_milestone"],
                    "top": bootexplain.top_changes(att, top),
                    "claim": bootexplain.claim(att, label),
                }
            )
    return {
        "file": fname,
        "cmdline_args": dict(ic.cmdline_args),
        "kernels": views,
        "pairs": pairs,
        "timeline": timeline,
        "levels": list(bootexplain.LEVEL_ORDER) + ["unknown"],
    }


def _deferred(recs: dict[str, BootTiming | None], kernels: list[str]) -> dict | None:
    """The deferred probes each kernel's good runs printed, per profile record that
    keeps them (boot-timing /6); None when no record does (older records)."""
    rows, seen = [], []
    for profile, rec in recs.items():
        for k in kernels:
            t = rec.kernels.get(k) if rec else None
            if t is None or t.deferred is None:
                continue
            seen.append({"kernel": k, "profile": profile, "runs": t.ok})
            rows += [{"kernel": k, "profile": profile, "of": t.ok, **d.model_dump()} for d in t.deferred]
    return {"rows": rows, "seen": seen} if seen else None


def _console_cost(
    board: Board, boot: BootTiming | None, quiet: BootTiming | None, kernels: list[str], rules
) -> dict | None:
    """Console output before user space per kernel (the timing profile's runs), its cost
    at the console's baud rate, and the end milestone's time in quiet runs against the
    timing runs when both records exist (Mann-Whitney U, uncorrected: shown, never claimed)."""
    end = next((m for m in rules.milestones if m.end), None)
    rows = []
    for k in kernels:
        t = boot.kernels.get(k) if boot else None
        q = quiet.kernels.get(k) if quiet else None
        c = t.console if t else None
        if c is None and q is None:
            continue
        row: dict[str, Any] = {
            "kernel": k,
            "bytes": c.bytes.median if c else None,
            "kernel_bytes": c.kernel_bytes.median if c and c.kernel_bytes else None,
            "baud": c.baud if c else None,
            "cost_s": c.cost_s if c else None,
            "timing_s": None,
            "quiet_s": None,
            "p": None,
        }
        if end is not None and t and q and end.name in t.milestones and end.name in q.milestones:
            a, b = t.milestones[end.name], q.milestones[end.name]
            assert boot is not None and quiet is not None
            ha, hb = boot.times(a), quiet.times(b)
            row["timing_s"] = ha.median if ha else None
            row["quiet_s"] = hb.median if hb else None
            test = stats.mann_whitney(a.values or [], b.values or [])
            row["p"] = test["p"] if test else None
        rows.append(row)
    if not rows:
        return None
    return {
        "rows": rows,
        "end": end.label if end else None,
        "qemu": board.qemu is not None,
        "until": next((m.label for m in rules.milestones if m.after_initcalls), None),
    }


def _explained_findings(model: dict) -> None:
    """A summary bullet per kernel pair whose attribution is significant after the correction; none otherwise."""
    be = model.get("boot_explained")
    if not be:
        return
    for p in be["pairs"]:
        if not p["claim"]:
            continue
        for f in model["findings"]:
            if f["kernel"] == p["b"] and f["against"] == p["a"]:
                item = {"kind": "tested", "significant": True, "claim": p["claim"], "link": "#boot-explained"}
                f["sections"].append(("Boot time explained", [item]))


def _mark_from_family(model: dict) -> None:
    """Table marks from the summary's corrected family: a delta is marked * only when
    the summary tested it and its Benjamini-Hochberg q-value < ALPHA; a value the
    summary did not test gets no mark (its p alone would overstate it)."""
    tested = {f["kernel"]: f.get("tested", {}) for f in model["findings"]}

    def mark(deltas: list, ks: list[str], key: str) -> None:
        for k, d in zip(ks[1:], deltas, strict=False):
            if not d:
                continue
            t = tested.get(k, {}).get(key)
            d["q"] = None if t is None else t["q"]
            d["significant"] = None if t is None else t["significant"]

    boot = model.get("boot")
    if boot:
        ks = [k for k in model["kernels"] if k in boot.kernels]
        for row in model["boot_rows"]:
            mark(row["deltas"], ks, f"{records.boot_timing_name()}:{row['name']}")
    nfs = model.get("boot_nfs")
    if nfs:
        ks = [k for k in model["kernels"] if k in nfs["summary"].kernels]
        for row in nfs["rows"]:
            mark(row["deltas"], ks, f"{records.boot_timing_name('nfs')}:{row['name']}")
    lm = model.get("lmbench_groups") or {}
    for g in lm.get("groups", []):
        for row in g["rows"]:
            mark(row["deltas"], lm["kernels"], f"lmbench:{row['name']}")
    wt = model.get("workload_tables") or {}
    for w in wt.get("workloads", []):
        for row in w["rows"]:
            mark(row["deltas"], wt["kernels"], row["key"])


def _delta(a: float | None, b: float | None) -> float | None:
    d = pct(a, b)
    return None if d is None else round(d, 1)


def _build_cost(rec: records.BuildCost | None, build: dict[str, Build], left_out: list[str]) -> Any:
    """build-cost.json when it measured the builds the report shows (the same build keys);
    a kernel measured from another build leaves the record out, in one line."""
    if rec is None:
        return None
    for k, kc in rec.kernels.items():
        if k in build and kc.build_key != build[k].key:
            left_out.append(f"build-cost.json: kernel {k} was measured from another build (make build-cost)")
            return None
    return rec


def _cost_rows(cost: records.BuildCost, ks: list[str]) -> list[dict]:
    """The cold build cost's rows of the build table (buildtable.cost_rows), linked to build-cost.json."""
    rows = []
    for r in buildreport.cost_rows(cost, ks):
        rows.append(
            {
                "label": r["label"],
                "unit": r["unit"],
                "cells": [
                    {
                        "kernel": k,
                        "value": v,
                        "link": "../build-cost.json",
                        "title": f"build-cost.json: median of kernels.{k}.{r['field']}, {cost.rounds} rounds",
                    }
                    for k, v in zip(ks, r["values"], strict=True)
                ],
                "deltas": [None if d is None else round(d, 1) for d in r["deltas"]],
            }
        )
    return rows


def _build_table(build: dict[str, Build], kernels: list[str], cost: records.BuildCost | None = None) -> list[dict]:
    ks = [k for k in kernels if k in build]
    if not ks:
        return []
    t = buildreport.table([build[k] for k in ks])
    rows = _cost_rows(cost, ks) if cost is not None else []
    for r in t["rows"]:
        rows.append(
            {
                "label": r["label"],
                "unit": r["unit"],
                "cells": [
                    {"kernel": k, "value": v, "link": f"../{k}/build.json", "title": f"build.json: {r['field']}"}
                    for k, v in zip(ks, r["values"], strict=True)
                ],
                "deltas": [None if d is None else round(d, 1) for d in r["deltas"]],
            }
        )
    hits = [buildreport.hit_rate(build[k]) for k in ks]
    rows.append(
        {
            "label": "ccache hits",
            "unit": "%",
            "info": True,
            "cells": [
                {
                    "kernel": k,
                    "value": None if h is None else h * 100,
                    "link": f"../{k}/build.json",
                    "title": "build.json: ccache.hit_rate",
                }
                for k, h in zip(ks, hits, strict=True)
            ],
            "deltas": [None] * (len(ks) - 1),
        }
    )
    return rows


def _sizediffs(bdir: Path, build: dict[str, Build], kernels: list[str], top: int, left_out: list[str]) -> list[dict]:
    ks = [k for k in kernels if k in build]
    out = []
    for k in ks[1:]:
        a, b = ks[0], k
        made = sizediffs.diffs(bdir, a, build[a], b, build[b])
        c = compare.compare_records(build[a], bdir / a / "build.json", build[b], bdir / b / "build.json", made)
        left_out += [x for x in c["left_out"] if x not in left_out]
        entry = {"a": a, "b": b, "rows": c["rows"]}
        if "symbols" in c:
            s = c["symbols"]
            entry["symbols"] = {
                **{
                    x: s[x]
                    for x in ("added", "removed", "grown", "shrunk", "up", "down", "total_before", "total_after")
                },
                "grown_rows": [r for r in s["rows"] if r["delta"] > 0][:top],
                "shrunk_rows": [r for r in s["rows"] if r["delta"] < 0][:top],
                "text": sizediff.render(s, top),
            }
        if "config" in c:
            cd = c["config"]
            entry["config"] = {
                "added": cd["added"],
                "removed": cd["removed"],
                "changed": cd["changed"],
                "text": sizediff.render_config_diff(cd, 3 * top),
            }
        out.append(entry)
    return out


def _boot_milestones(boot: BootTiming, rules, imported: set[str] | None = None) -> list[dict]:
    refs = {v.reference for k, v in boot.kernels.items() if v.reference and k not in (imported or ())}
    if not refs:  # imported kernels only
        refs = {v.reference for v in boot.kernels.values() if v.reference}
    return [
        {"name": m.name, "label": m.label, "summary": m.summary}
        for m in rules.shown(refs)
        if any(m.name in v.milestones for v in boot.kernels.values())
    ]


def _line_link(target: str, line: int | None) -> str:
    return f"{target}#L{line}" if line else target


def _median_run(bdir: Path, kernel: str, kinfo: KernelTiming, name: str, value: float, rd: Reader) -> dict | None:
    """The run whose value is the median (or nearest), and its milestone's console line,
    from that run's boot record."""
    values = kinfo.milestones[name].values or []
    ids = kinfo.run_ids
    if not values or len(values) != len(ids):
        return None
    i = min(range(len(values)), key=lambda j: abs(values[j] - value))
    rec = rd.read(bdir / kernel / "boot" / ids[i] / "boot.json", Boot)
    if rec is None:
        return None
    hit = rec.milestones.get(name)
    if hit is None:
        return None
    return {
        "link": _line_link(f"../{kernel}/boot/{ids[i]}/{rec.log}", hit.line),
        "title": f"run {ids[i]}, {rec.log} line {hit.line}: {hit.text}",
    }


def _imported_boot_cell(k: str, st: MilestoneStats, kinfo: KernelTiming, imported: list[dict]) -> dict:
    """A milestone of an imported boot log: its host time when the log has host stamps,
    else its printk time (the kernel's clock), else only that it was reached; linked to
    its line in the copy of the log."""
    h, src = st.host, next((e for e in imported if e["kind"] == "bootlog"), imported[0])
    where = f"line {st.line}" if st.line else "the log"
    cell: dict[str, Any] = {
        "kernel": k,
        "median": h.median if h else None,
        "mean": h.mean if h else None,
        "ci": None,
        "n": h.n if h else 1,
        "half": None,
        "link": _line_link(src["copy"], st.line) if src["copy"] else f"../{k}/",
        "title": f"{src['mark']}, {where}; times from {kinfo.reference or 'nothing: the log has no times'}",
        "imported": True,
    }
    if h is None:
        cell["text"] = f"printk {st.printk.median:.3f} s" if st.printk else "reached"
    return cell


def _boot_rows(
    boot: BootTiming,
    milestones: list[dict],
    kernels: list[str],
    bdir: Path,
    fname: str,
    rd: Reader,
    imported: dict[str, list] | None = None,
) -> list[dict]:
    imported = imported or {}
    ks = [k for k in kernels if k in boot.kernels]
    rows = []
    for m in milestones:
        cells: list[dict | None] = []
        for k in ks:
            st = boot.kernels[k].milestones.get(m["name"])
            if not st:
                cells.append(None)
                continue
            if k in imported:
                cells.append(_imported_boot_cell(k, st, boot.kernels[k], imported[k]))
                continue
            h = boot.times(st)
            if h is None:  # only imported records lack host times (and printk times, on the instruction clock)
                cells.append(None)
                continue
            cell = {
                "kernel": k,
                "median": h.median,
                "mean": h.mean,
                "ci": h.ci95,
                "n": h.n,
                "half": None if not h.ci95 else (h.ci95[1] - h.ci95[0]) / 2,
                "link": f"../{fname}",
                "title": f"{fname}: kernels.{k}.milestones.{m['name']}",
            }
            run = _median_run(bdir, k, boot.kernels[k], m["name"], h.median, rd)
            if run:
                cell.update(run)
            cells.append(cell)
        deltas: list[dict | None] = []
        base = cells[0] if cells else None
        first = boot.kernels[ks[0]].milestones.get(m["name"]) if ks else None
        for k, c in zip(ks[1:], cells[1:], strict=True):
            st = boot.kernels[k].milestones.get(m["name"])
            if not c or not base or st is None or c["median"] is None or base["median"] is None:
                deltas.append(None)
                continue
            if k in imported or ks[0] in imported:  # one log: no test; times from another reference: no delta
                same = boot.kernels[k].reference == boot.kernels[ks[0]].reference
                deltas.append(
                    {"pct": _delta(base["median"], c["median"]), "p": None, "significant": None} if same else None
                )
                continue
            if boot.clock.kind == "instructions":  # deterministic: the summary judges it against the A/A floor
                deltas.append({"pct": _delta(base["median"], c["median"]), "p": None, "significant": None})
                continue
            # the summary's test (stats.compare); the family's correction then marks the row
            t = stats.t_test((first.values if first else None) or [], st.values or [], paired=False)
            deltas.append(
                {
                    "pct": _delta(base["median"], c["median"]),
                    "p": None if t is None else t["p"],
                    "significant": None if t is None else t["p"] < findings.ALPHA,
                }
            )
        rows.append({"name": m["name"], "label": m["label"], "kernels": ks, "cells": cells, "deltas": deltas})
    return rows


def _footprint_cell(k: str, r: Footprint, key: str) -> dict:
    cell: dict[str, Any] = {
        "kernel": k,
        "value": getattr(r, key),
        "link": f"../{k}/footprint.json",
        "title": f"footprint.json: {key}",
    }
    if key == "kernel_code_data_kb" and r.memory_line and r.run:
        ml = r.memory_line
        where = f"console.log line {ml.line}" if ml.line else "console.log"
        cell["link"] = _line_link(f"../{k}/{r.run}/console.log", ml.line)
        cell["title"] = f"footprint run {PurePosixPath(r.run).name}, {where}: {ml.text}"
    if r.imported is not None:
        where = f"line {r.memory_line.line}" if r.memory_line and r.memory_line.line else "the log"
        cell["title"] = (
            f"imported from {PurePosixPath(r.imported.source).name}, {where}"
            if key == "kernel_code_data_kb"
            else "not in a boot log"
        )
    elif key == "malloc_kb" and r.mem_eat is not None:
        how = "malloc() failed" if r.mem_eat.completed else "the OOM killer ended it"
        cell["title"] = f"footprint.json: malloc_kb (mem_eat: {r.mem_eat.bytes} bytes when {how})"
    return cell


def _footprint_rows(fp: dict[str, Footprint], kernels: list[str]) -> list[dict]:
    ks = [k for k in kernels if k in fp]
    rows = []
    for label, key in (
        ("Kernel Code + Data", "kernel_code_data_kb"),
        ('total "free"', "total_free_kb"),
        ("Available for malloc()", "malloc_kb"),
    ):
        cells = [_footprint_cell(k, fp[k], key) for k in ks]
        vals = [c["value"] for c in cells]
        deltas = [
            None if v is None or not vals[0] else {"pct": _delta(vals[0], v), "kb": v - vals[0]} for v in vals[1:]
        ]
        rows.append({"label": label, "cells": cells, "deltas": deltas})
    return rows


def _lmbench_cell(rec: Lmbench, k: str, row: dict, value: float | None) -> dict:
    """A value links to the raw lmbench output it was parsed from (the line its block
    begins on, as the record keeps it); the title names the record field."""
    cell: dict[str, Any] = {
        "kernel": k,
        "value": value,
        "link": f"../{k}/lmbench.json",
        "title": f"lmbench.json: benchmarks.{row['bench']}",
    }
    if rec.run and rec.imported is not None:
        lines = row["raw_lines"].get(k) or []
        cell["link"] = _line_link(f"../{k}/{rec.run}/{rec.imported.kept}", lines[0] if lines else None)
        where = f"line {', '.join(map(str, lines))}" if lines else ""
        runs = row["runs"].get(k) or []
        cell["title"] += f"; imported from {PurePosixPath(rec.imported.source).name} {where}" + (
            f"; median of {runs}" if len(runs) > 1 else ""
        )
    elif rec.run:
        lines = row["raw_lines"].get(k) or []
        cell["link"] = _line_link(f"../{k}/{rec.run}/lmbench.txt", lines[0] if lines else None)
        where = f"lmbench.txt line {', '.join(map(str, lines))}" if lines else "lmbench.txt"
        runs = row["runs"].get(k) or []
        cell["title"] += f"; raw output: {where}, block '@@@ BEGIN {row['bench']}'" + (
            f"; median of {runs}" if len(runs) > 1 else ""
        )
    return cell


# benchmarks that print their one metric under a name that varies (the file it ran on):
# their rows join on the benchmark, so a summary's "Page fault" (an imported lmbench
# summary) stands beside a live run's "Pagefaults on /tmp/lmb.file"
ONE_METRIC = {"lat_pagefault"}


def _row_key(bench: str, name: str) -> str:
    return f"@{bench}" if bench in ONE_METRIC else name


def _lmbench_groups(lm: dict[str, Lmbench], kernels: list[str]) -> dict:
    measured = [k for k in kernels if k in lm and lm[k].measured]
    groups: dict = {}
    for k in measured:
        for bname, b in lm[k].benchmarks.items():
            for m in b.metrics:
                row = groups.setdefault(b.group or "other", {}).setdefault(
                    _row_key(bname, m.name),
                    {
                        "name": m.name,
                        "unit": m.unit,
                        "better": m.better,
                        "bench": bname,
                        "values": {},
                        "runs": {},
                        "raw_lines": {},
                    },
                )
                row["values"][k] = m.value
                row["runs"][k] = m.values or [m.value]
                row["raw_lines"][k] = b.raw_lines
    out: dict = {
        "kernels": measured,
        "not_measured": {k: lm[k].reason for k in kernels if k in lm and not lm[k].measured},
        "missing": [k for k in kernels if k not in lm],
        "groups": [],
    }
    for g, rows in groups.items():
        rs = []
        for r in rows.values():
            vals = [r["values"].get(k) for k in measured]
            deltas: list[dict | None] = []
            for k, v in zip(measured[1:], vals[1:], strict=True):
                d = _delta(vals[0], v)
                if lm[k].imported is not None or lm[measured[0]].imported is not None:
                    deltas.append(None if d is None else {"pct": d, "worse": None, "p": None, "significant": None})
                    continue  # imported: values side by side, never tested
                worse = None if d is None else (d > 0) == (r["better"] == "lower")
                t = stats.mann_whitney(r["runs"].get(measured[0], []), r["runs"].get(k, []))
                deltas.append(
                    None
                    if d is None
                    else {
                        "pct": d,
                        "worse": worse,
                        "p": t and t["p"],
                        "significant": None if t is None else t["p"] < findings.ALPHA,
                    }
                )
            rs.append(
                {
                    **r,
                    "cells": [_lmbench_cell(lm[k], k, r, v) for k, v in zip(measured, vals, strict=True)],
                    "deltas": deltas,
                }
            )
        out["groups"].append({"name": g, "rows": rs})
    return out


def _bw_mem(lm: dict[str, Lmbench], kernels: list[str]) -> dict:
    series: dict = {}
    for k in kernels:
        if k not in lm or not lm[k].measured:
            continue
        for b in lm[k].benchmarks.values():
            for m in b.metrics:
                mm = SIZE_RE.match(m.name)
                if mm:
                    series.setdefault(mm.group(1), {}).setdefault(k, []).append(
                        (int(mm.group(2)) * UNITS[mm.group(3)], m.value)
                    )
    return series


def _imported_env(model: dict) -> None:
    """The imported kernels among the versions: their release and where they came from."""
    for k, entries in model["imported"].items():
        fp, boot = model["footprint"].get(k), model["boot"]
        release = (fp.kernelrelease if fp else None) or (
            boot.kernels[k].kernelrelease if boot and k in boot.kernels else None
        )
        model["env"]["kernels"].append(
            {"kernel": k, "release": release or "unknown", "source": "; ".join(e["mark"] for e in entries), "fixes": []}
        )


def _reproduce(board: Board, model: dict) -> list[dict]:
    b = board.name
    steps = [
        {
            "step": "build",
            "command": f"make build-all BOARD={b}",
            "detail": [r.reproduce for r in model["build"].values() if r.reproduce],
        }
    ]
    boot = model["live_boot"]
    if boot:
        steps.append(
            {
                "step": "boot timing",
                "command": f"make boot-timing BOARD={b} RUNS={boot.runs_requested} BOOT_PATH={boot.path}",
                "detail": [],
            }
        )
    if model.get("boot_nfs") and model["boot_nfs"]["live"]:
        s = model["boot_nfs"]["live"]
        steps.append(
            {
                "step": "boot timing, NFS root",
                "command": f"make boot-timing BOARD={b} ROOT=nfs RUNS={s.runs_requested} BOOT_PATH={s.path}",
                "detail": [],
            }
        )
    lm_modes = {r.mode for r in model["lmbench"].values() if r.imported is None}
    if any(r.imported is None for r in model["footprint"].values()):
        mode = lm_modes.pop() if len(lm_modes) == 1 else "quick"
        steps.append(
            {
                "step": "footprint and lmbench",
                "command": f"make footprint-report BOARD={b} LMBENCH={mode}",
                "detail": [],
            }
        )
    wl = model.get("workloads") or {}
    if wl:
        r0 = next(iter(wl.values()))
        names = ",".join(sorted({n for r in wl.values() for n in r.workloads}))
        steps.append(
            {
                "step": "workloads",
                "command": f"make workloads BOARD={b} WORKLOADS={names} "
                f"WORKLOAD_RUNS={r0.runs} WORKLOAD_MODE={r0.mode}",
                "detail": [],
            }
        )
    for k, entries in model["imported"].items():
        for e in entries:
            label = f" LABEL={shlex.quote(e['label'])}" if e["label"] else ""
            label += " ROOT=nfs" if records.boot_timing_name("nfs") in e["records"] else ""
            steps.append(
                {
                    "step": f"import {k}",
                    "command": f"make import KIND={e['kind']} FILE={shlex.quote(e['source'])} BOARD={b} "
                    f"KERNEL={k}{label}",
                    "detail": [e["mark"]],
                }
            )
    steps.append({"step": "this report", "command": f"make report BOARD={b}", "detail": []})
    return steps


@functools.cache
def _env(html: bool = True) -> jinja2.Environment:
    """One environment per kind of output and process: Jinja compiles each template once (about
    0.25 s each), not at every report."""
    e = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=jinja2.select_autoescape(["html", "j2"]) if html else False,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )

    def num(v, digits=1):
        if v is None:
            return "–"
        if isinstance(v, int) or abs(v) >= 1000:
            return f"{v:.0f}"
        return f"{v:.{digits}f}" if abs(v) >= 1 or v == 0 else f"{v:.3g}"

    def delta(d):
        return fmt_delta(d, minus="−")

    e.filters.update(num=num, delta=delta)
    return e


def render(model: dict, chart_svgs: dict) -> tuple[str, str]:
    html = _env().get_template("report.html.j2").render(m=model, charts=chart_svgs)
    md = (
        _env(html=False)
        .get_template("report.md.j2")
        .render(m=model, charts={k: v is not None for k, v in chart_svgs.items()})
    )
    md = "\n".join(line.rstrip() for line in md.splitlines()) + "\n"
    return html, md


def make_charts(model: dict) -> dict:
    ks = model["kernels"]
    boot = model["boot"]
    means, cis = {}, {}
    if boot:
        for k in ks:
            if k in boot.kernels:
                mm = boot.kernels[k].milestones
                shown = [m["name"] for m in model["boot_milestones"] if m["name"] in mm]
                means[k] = {n: h.mean for n in shown if (h := boot.times(mm[n])) is not None}
                cis[k] = {n: h.ci95 for n in shown if (h := boot.times(mm[n])) is not None}
    return {
        "sizes": charts.sizes([k for k in ks if k in model["sizes"]], model["sizes"], model["images"]),
        "boot": charts.boot_timeline(ks, model["boot_milestones"], means, cis),
        **{
            f"initcalls-{k}": charts.initcall_timeline(k, calls, model["boot_explained"]["levels"])
            for k, calls in (model["boot_explained"] or {}).get("timeline", {}).items()
        },
        "bw_mem": charts.bw_mem_cascade(ks, model["bw_mem"]),
        "workloads": charts.relative_performance(model["workload_relative"]),
    }


@dataclass(frozen=True)
class Report:
    """What write() made: the page, the Markdown, and the model both were rendered from."""

    index: Path
    markdown: Path
    model: dict

    @property
    def left_out(self) -> list[str]:
        return self.model["left_out"]

    def summary(self) -> str:
        return summary_text(self.model)


def summary_text(model: dict) -> str:
    """The management summary as plain text (what `make all` shows at the end)."""
    if not model["findings"]:
        return "Management summary: only one kernel has records, nothing to compare."
    lines = []
    for f in model["findings"]:
        lines.append(f"Management summary: {f['kernel']} against {f['against']}")
        for title, items in f["sections"]:
            lines.append(f"{title}:")
            lines += [f"- {it['claim']}" for it in items]
    pl = model.get("places")
    if pl:
        lines.append(
            f"Places ({', '.join(pl['places'])}; place as a factor, {pl['tests']} test(s), apart from the kernels):"
        )
        lines += [f"- {c}" for c in pl["claims"]] or ["- no difference between places shown"]
    return "\n".join(lines)


def write(board: Board, logs: Path, say=print) -> Report:
    """Write logs/<board>/report/{index.html,report.md,model.json,charts/*.svg}."""
    model = collect(board, logs)
    for why in model["left_out"]:
        say(f"report: left out {why}")
    for st in (x for x in model["sets"] if x["step"] != "report"):
        say(f"report: read {records.sets.describe(st)}")
    if not model["kernels"]:
        why = f"; left out: {model['left_out'][0]}" if model["left_out"] else f" (run: make all BOARD={board.name})"
        raise BringupError(f"board {board.name}: no records under {Path(logs) / board.name}{why}")
    svgs = make_charts(model)
    html, md = render(model, svgs)
    out = Path(logs) / board.name / "report"
    # the page, the Markdown, the model and the charts land together or not at all (records/sets.py)
    with records.ResultSet(Path(logs) / board.name, "report") as rset:
        for name, svg in svgs.items():
            if svg:
                rset.write_text(out / "charts" / f"{name}.svg", svg)
            else:  # nothing to draw this time: no chart left over from an earlier report
                rset.remove(out / "charts" / f"{name}.svg")
        rset.write_text(out / "report.md", md)
        rset.write_text(out / "index.html", html)
        rset.write_json(
            out / "model.json",
            {k: v for k, v in model.items() if k not in ("build", "boot", "live_boot", "build_cost")},
        )
    say(f"report: {paths.rel(out / 'index.html')} (and report.md; report set {rset.id})")
    return Report(index=out / "index.html", markdown=out / "report.md", model=model)
