"""The report's boot sections, from the boot-timing summaries: per milestone and kernel
the median with its interval, linked to the console line of the median run; the
deltas against the first kernel with the study's test (stats.study_test; marked from
the summary's corrected family: report/marks.py); the same for the boot over an NFS root; the places of a
labgrid board (report/places.py); and the boot explained, console cost and deferred
probes (report/bootdetail.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bringup import records, stats
from bringup.model.board import Board
from bringup.model.milestones import load_rules
from bringup.records import Boot, BootTiming
from bringup.records.boot import KernelTiming, MilestoneStats
from bringup.report import bootdetail, places
from bringup.report.inputs import Gathered
from bringup.report.model import BootSection
from bringup.report.tables import delta, line_link


def section(board: Board, g: Gathered, floors: dict | None = None) -> BootSection:
    """floors: the A/A floors (model/clocks.py floors()) the places and details judge records on
    the instruction clock against (stats/deterministic.py)."""
    boot, imported, kernels = g.inputs.boot, g.inputs.imported, g.kernels
    rules = load_rules(board.milestones)
    milestones = boot_milestones(boot, rules, set(imported)) if boot else []
    at = next((i for i, m in enumerate(rules.milestones) if m.delayed), None)
    rows = BootTable(boot, records.boot_timing_name(), g).rows(milestones, kernels) if boot else []
    shown_places = places.section(g.inputs.live_boot, kernels, rules, floors)
    nfs = None
    if g.nfs:
        nfs_milestones = boot_milestones(g.nfs, rules, set(imported))
        nfs = {
            "summary": g.nfs,
            "live": g.live_nfs,
            "milestones": nfs_milestones,
            "rows": BootTable(g.nfs, records.boot_timing_name("nfs"), g).rows(nfs_milestones, kernels),
        }
    detail = bootdetail.details(board, g, rules, floors)
    return BootSection(
        boot_milestones=milestones,
        delayed_milestones=[m.name for m in rules.milestones[at:]] if at is not None else [],
        boot_rows=rows,
        places=shown_places,
        boot_nfs=nfs,
        **detail,
    )


def boot_milestones(boot: BootTiming, rules, imported: set[str] | None = None) -> list[dict]:
    refs = {v.reference for k, v in boot.kernels.items() if v.reference and k not in (imported or ())}
    if not refs:  # imported kernels only
        refs = {v.reference for v in boot.kernels.values() if v.reference}
    return [
        {"name": m.name, "label": m.label, "summary": m.summary}
        for m in rules.shown(refs)
        if any(m.name in v.milestones for v in boot.kernels.values())
    ]


@dataclass(frozen=True)
class BootTable:
    """The rows of one boot-timing summary (fname, in logs/<board>/) for the kernels shown."""

    boot: BootTiming
    fname: str
    g: Gathered

    def rows(self, milestones: list[dict], kernels: list[str]) -> list[dict]:
        ks = [k for k in kernels if k in self.boot.kernels]
        rows = []
        for m in milestones:
            cells = [self._cell(k, m["name"]) for k in ks]
            deltas = self._deltas(ks, cells, m["name"])
            rows.append({"name": m["name"], "label": m["label"], "kernels": ks, "cells": cells, "deltas": deltas})
        return rows

    def _cell(self, k: str, name: str) -> dict | None:
        kinfo = self.boot.kernels[k]
        st = kinfo.milestones.get(name)
        if not st:
            return None
        if k in self.g.inputs.imported:
            return _imported_boot_cell(k, st, kinfo, self.g.inputs.imported[k])
        h = self.boot.times(st)
        if h is None:  # only imported records lack host times (and printk times, on the instruction clock)
            return None
        cell = {
            "kernel": k,
            "median": h.median,
            "mean": h.mean,
            "ci": h.ci95,
            "n": h.n,
            "half": None if not h.ci95 else (h.ci95[1] - h.ci95[0]) / 2,
            "link": f"../{self.fname}",
            "title": f"{self.fname}: kernels.{k}.milestones.{name}",
        }
        run = _median_run(self.g, k, kinfo, name, h.median)
        if run:
            cell.update(run)
        return cell

    def _deltas(self, ks: list[str], cells: list[dict | None], name: str) -> list[dict | None]:
        base = cells[0] if cells else None
        first = self.boot.kernels[ks[0]].milestones.get(name) if ks else None
        return [self._delta(ks[0], k, base, c, first, name) for k, c in zip(ks[1:], cells[1:], strict=True)]

    def _delta(self, k0: str, k: str, base, c, first: MilestoneStats | None, name: str) -> dict | None:
        boot, imported = self.boot, self.g.inputs.imported
        st = boot.kernels[k].milestones.get(name)
        if not c or not base or st is None or c["median"] is None or base["median"] is None:
            return None
        d = delta(base["median"], c["median"])
        if k in imported or k0 in imported:  # one log: no test; times from another reference: no delta
            same = boot.kernels[k].reference == boot.kernels[k0].reference
            return {"pct": d, "p": None, "significant": None} if same else None
        if boot.clock.kind == "instructions":  # deterministic: the summary judges it against the A/A floor
            return {"pct": d, "p": None, "significant": None}
        # the study's test (paired by round, as the summary's); the summary's corrected family marks the row
        t = stats.study_test(
            (first.values if first else None) or [], st.values or [], first.rounds if first else None, st.rounds
        )
        return {"pct": d, "p": None if t is None else t.p, "significant": None}


def _median_run(g: Gathered, kernel: str, kinfo: KernelTiming, name: str, value: float) -> dict | None:
    """The run whose value is the median (or nearest) of the kernel's in a boot summary (kinfo),
    and its milestone's console line, from that run's boot record."""
    values = kinfo.milestones[name].values or []
    ids = kinfo.run_ids
    if not values or len(values) != len(ids):
        return None
    i = min(range(len(values)), key=lambda j: abs(values[j] - value))
    rec = g.reader.read(g.bdir / kernel / "boot" / ids[i] / "boot.json", Boot)
    if rec is None:
        return None
    hit = rec.milestones.get(name)
    if hit is None:
        return None
    return {
        "link": line_link(f"../{kernel}/boot/{ids[i]}/{rec.log}", hit.line),
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
        "link": line_link(src["copy"], st.line) if src["copy"] else f"../{k}/",
        "title": f"{src['mark']}, {where}; times from {kinfo.reference or 'nothing: the log has no times'}",
        "imported": True,
    }
    if h is None:
        cell["text"] = f"printk {st.printk.median:.3f} s" if st.printk else "reached"
    return cell
