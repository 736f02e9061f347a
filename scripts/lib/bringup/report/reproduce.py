"""The report's "Reproduce" section: the commands that make the study's records again,
step by step, with the options the records say they were made with."""

from __future__ import annotations

import shlex

from bringup import records
from bringup.records import BootTiming
from bringup.report.model import Inputs


def _step(step: str, command: str, detail: list[str] | None = None) -> dict:
    return {"step": step, "command": command, "detail": detail or []}


def _boot_steps(b: str, live_boot: BootTiming | None, live_nfs: BootTiming | None) -> list[dict]:
    steps = []
    for title, root, s in (("boot timing", "", live_boot), ("boot timing, NFS root", " ROOT=nfs", live_nfs)):
        if s:
            steps.append(_step(title, f"make boot-timing BOARD={b}{root} RUNS={s.runs_requested} BOOT_PATH={s.path}"))
    return steps


def _measure_steps(b: str, inputs: Inputs) -> list[dict]:
    steps = []
    lm_modes = {r.mode for r in inputs.lmbench.values() if r.imported is None}
    if any(r.imported is None for r in inputs.footprint.values()):
        mode = lm_modes.pop() if len(lm_modes) == 1 else "quick"
        steps.append(_step("footprint and lmbench", f"make footprint-report BOARD={b} LMBENCH={mode}"))
    wl = inputs.workloads
    if wl:
        r0 = next(iter(wl.values()))
        names = ",".join(sorted({n for r in wl.values() for n in r.workloads}))
        command = f"make workloads BOARD={b} WORKLOADS={names} WORKLOAD_RUNS={r0.runs} WORKLOAD_MODE={r0.mode}"
        steps.append(_step("workloads", command))
    return steps


def _import_steps(b: str, imported: dict[str, list[dict]]) -> list[dict]:
    steps = []
    for k, entries in imported.items():
        for e in entries:
            label = f" LABEL={shlex.quote(e['label'])}" if e["label"] else ""
            label += " ROOT=nfs" if records.boot_timing_name("nfs") in e["records"] else ""
            command = f"make import KIND={e['kind']} FILE={shlex.quote(e['source'])} BOARD={b} KERNEL={k}{label}"
            steps.append(_step(f"import {k}", command, [e["mark"]]))
    return steps


def steps(board: str, inputs: Inputs, live_nfs: BootTiming | None) -> list[dict]:
    build = _step("build", f"make build-all BOARD={board}", [r.reproduce for r in inputs.build.values() if r.reproduce])
    return [
        build,
        *_boot_steps(board, inputs.live_boot, live_nfs),
        *_measure_steps(board, inputs),
        *_import_steps(board, inputs.imported),
        _step("this report", f"make report BOARD={board}"),
    ]
