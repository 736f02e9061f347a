"""Which clock measured the records, and the report's paragraphs about it; the A/A
floors deterministic findings are judged against (model/clocks.py)."""

from __future__ import annotations

from pathlib import Path

from bringup.model.board import Board
from bringup.model.clocks import floors
from bringup.report.model import ClockSection, Inputs
from bringup.stats import FLOOR_MULTIPLE

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


def section(board: Board, logs: Path, inputs: Inputs, own_floors: bool) -> ClockSection:
    """own_floors=False: deterministic findings are judged against the shipped A/A floors
    only (the A/A check itself; model/clocks.py floors())."""
    fl = floors(board.name, logs, own_floors)
    recs = [inputs.boot, *inputs.footprint.values(), *inputs.lmbench.values(), *inputs.workloads.values()]
    return ClockSection(floors=fl, clock=clock_note([r.clock for r in recs if r is not None], fl))
